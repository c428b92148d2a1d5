//! The user changes the plan mid-run: the change is a user revision at
//! once, the model hears of it at its next step (with the plan), the final
//! plan keeps it, and the session's export accounts for every item's time
//! and tool calls — the same figures a replay of the transcript computes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;
use crate::tui_support;

use scripted_support::{plan, scenario, start_with, stop, tool_results, turn_end, until};
use serde_json::json;
use waypoint::agent::{AgentConfig, PlanSettings, SessionSetup};
use waypoint::events::{ErrorKind, Event, Op, ThreadId};
use waypoint::llm::{ContentBlock, Message};
use waypoint::session::SessionStore;
use waypoint::todo::{Author, PlanEdit};

/// The message of the next error of `kind`.
async fn error_of(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<waypoint::events::Envelope>,
    kind: ErrorKind,
) -> String {
    let seen = until(
        events,
        |e| matches!(e, Event::Error { kind: k, .. } if *k == kind),
    )
    .await;
    match seen.last() {
        Some(Event::Error { message, .. }) => message.clone(),
        _ => unreachable!(),
    }
}

/// Sends `text`, lets its turn end, stops the engine and returns the text
/// of the last request the model got.
async fn last_turn(
    mut h: waypoint::agent::AgentHandle,
    client: &scripted_support::Recording,
    text: &str,
) -> String {
    h.ops.send(Op::Submit { text: text.into() }).unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    texts(requests.last().unwrap())
}

fn texts(messages: &[Message]) -> String {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_user_added_item_reaches_the_model_stays_in_the_plan_and_is_accounted_for() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Write the tests", "pending")])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "sleep 1.2"}}]},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Write the tests", "in_progress"), ("Update the README", "pending")])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "sleep 1.1"}}]},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Write the tests", "completed"), ("Update the README", "in_progress")])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo readme"}}]},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Write the tests", "completed"), ("Update the README", "completed")])}]},
        {"text": "All done."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::New(store.clone()),
    );
    let started = until(&mut h.events, |e| matches!(e, Event::SessionStarted { .. })).await;
    let Some(Event::SessionStarted { path, .. }) = started.last().cloned() else {
        panic!("no session")
    };
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    // While the first command runs, the user adds an item.
    until(
        &mut h.events,
        |e| matches!(e, Event::ToolCallBegin { name, .. } if name == "bash"),
    )
    .await;
    let edit = PlanEdit::parse_command("add Update the README").unwrap();
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit,
        })
        .unwrap();
    let seen = until(&mut h.events, |e| {
        matches!(
            e,
            Event::PlanUpdated {
                author: Author::User,
                ..
            } | Event::Error { .. }
        )
    })
    .await;
    let Some(Event::PlanUpdated {
        items, revision, ..
    }) = seen.last()
    else {
        panic!("the edit was refused: {seen:?}")
    };
    assert_eq!(*revision, 2, "the model's plan was revision 1");
    assert_eq!(items.last().unwrap().content, "Update the README");
    // A refused edit says why and changes nothing.
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: PlanEdit::Remove { n: 9 },
        })
        .unwrap();
    let message = error_of(&mut h.events, ErrorKind::PlanEdit).await;
    assert_eq!(
        message,
        "The plan was not changed: there is no item 9 (the plan has 3)."
    );
    // An edit addressed to an agent that does not exist changes nothing.
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId(4),
            edit: PlanEdit::Clear,
        })
        .unwrap();
    let message = error_of(&mut h.events, ErrorKind::PlanEdit).await;
    assert_eq!(
        message,
        "The plan was not changed: no agent thread 4 is at work."
    );

    let rest = until(&mut h.events, turn_end).await;
    stop(h).await;

    // The request right after the command's result carries the note and the plan.
    let requests = client.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 8);
    let third = texts(&requests[2]);
    assert!(
        third.contains("The user changed the plan: added \"Update the README\" at the end."),
        "{third}"
    );
    assert!(third.contains("[ ] Update the README"), "{third}");
    // Told once: the next request adds no second note.
    let fourth = texts(&requests[3]);
    assert_eq!(fourth.matches("The user changed the plan").count(), 1);

    // The final plan holds the item, completed.
    let last_plan = rest
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PlanUpdated { items, .. } => Some(items.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        last_plan
            .iter()
            .any(|i| i.content == "Update the README" && i.status.as_str() == "completed")
    );
    let stats = rest
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PlanStats { items, running } => {
                assert!(running.is_none(), "no clock runs after the turn");
                Some(items.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(stats.len(), 3);
    for s in &stats {
        assert_eq!(s.tool_calls, 2, "{s:?}: a command and the next plan write");
    }
    assert!(
        stats[0].time_ms >= 1_000 && stats[1].time_ms >= 1_000,
        "{stats:?}"
    );

    // The export's per-item table lists time and tool calls for every item.
    let loaded = waypoint::session::load(std::path::Path::new(&path)).unwrap();
    let md = waypoint::session::export::markdown(&loaded, &Default::default());
    for item in ["Write code", "Write the tests", "Update the README"] {
        let row = md
            .lines()
            .find(|l| l.starts_with("| ") && l.contains(&format!("| {item} |")))
            .unwrap_or_else(|| panic!("no row for {item} in\n{md}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | # | Item | Status | Added | Started | Completed | Time | Tool calls | …
        assert_eq!(cells[3], "completed", "{row}");
        assert!(cells[7].ends_with('s'), "time of {item}: {row}");
        assert_eq!(cells[8], "2", "tool calls of {item}: {row}");
    }
    assert!(
        md.contains("user: added \"Update the README\" at the end"),
        "the revisions list the user's change:\n{md}"
    );
    // A replay of the transcript computes the same account.
    let restored = waypoint::session::replay(loaded).unwrap();
    assert_eq!(restored.revisions, 5);
    let replayed = restored.ledger.report(
        restored.plan.items(),
        waypoint::session::now_ms(),
        &Default::default(),
    );
    assert_eq!(replayed, stats);
}

#[tokio::test]
async fn a_user_added_item_the_model_drops_is_named_to_it() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress")])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "sleep 0.5"}}]},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed")])}]},
        {"text": "Done."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(
        &mut h.events,
        |e| matches!(e, Event::ToolCallBegin { name, .. } if name == "bash"),
    )
    .await;
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: PlanEdit::parse_command("add Update the README").unwrap(),
        })
        .unwrap();
    let rest = until(&mut h.events, turn_end).await;
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let results = tool_results(requests.last().unwrap());
    let last = &results.last().unwrap().1;
    assert!(
        last.contains("Note: removed without completion: \"Update the README\"."),
        "{last}"
    );
    // The model's revision reports it as dropped, for the pane to flag.
    let dropped = rest.iter().rev().find_map(|e| match e {
        Event::PlanUpdated {
            diff,
            author: Author::Model,
            ..
        } => Some(diff.dropped.clone()),
        _ => None,
    });
    assert_eq!(dropped, Some(vec!["Update the README".to_string()]));
}

#[tokio::test]
async fn an_edit_while_idle_goes_with_the_next_message() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Ship", "pending")])}]},
        {"text": "Stopping."},
        {"text": "Noted."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: PlanEdit::parse_command("done 1").unwrap(),
        })
        .unwrap();
    let seen = until(&mut h.events, |e| matches!(e, Event::PlanUpdated { .. })).await;
    let Some(Event::PlanUpdated { diff, author, .. }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(*author, Author::User);
    assert_eq!(diff.completed, vec!["Write code"]);
    let last = last_turn(h, &client, "and now?").await;
    let prompt = last.find("and now?").unwrap();
    let note = last
        .find("The user changed the plan: marked done item 1 \"Write code\".")
        .unwrap_or_else(|| panic!("{last}"));
    assert!(note > prompt, "the note follows the user's message");
    assert!(last.contains("[x] Write code"));
}

#[tokio::test]
async fn the_plan_file_follows_the_plan_and_its_edits_come_back_as_user_revisions() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Run tests", "pending")])}]},
        {"text": "Stopping here."},
        {"text": "Seen."}
    ]));
    let config = AgentConfig {
        plan: PlanSettings {
            file: Some("PLAN.md".into()),
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    };
    let mut h = start_with(client.clone(), ws.path(), config, SessionSetup::Off);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    let path = ws.path().join("PLAN.md");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("- [ ] Write code ← in progress\n- [ ] Run tests\n"),
        "{text}"
    );
    // The user ticks the first box and adds a line between the two.
    let edited = text.replace(
        "- [ ] Write code ← in progress\n",
        "- [x] Write code ← in progress\n- [ ] Update the README\n",
    );
    std::fs::write(&path, edited).unwrap();
    let mut revisions = Vec::new();
    while revisions.len() < 2 {
        let seen = until(&mut h.events, |e| matches!(e, Event::PlanUpdated { .. })).await;
        if let Some(Event::PlanUpdated {
            items,
            author,
            diff,
            ..
        }) = seen.last()
        {
            assert_eq!(*author, Author::User);
            revisions.push((items.clone(), diff.clone()));
        }
    }
    let (items, _) = revisions.last().unwrap();
    let got: Vec<(&str, &str)> = items
        .iter()
        .map(|i| (i.content.as_str(), i.status.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("Write code", "completed"),
            ("Update the README", "pending"),
            ("Run tests", "pending")
        ]
    );
    // The file shows the plan as it is now, and the model hears of both
    // changes with the next message.
    let mut text = String::new();
    for _ in 0..50 {
        text = std::fs::read_to_string(&path).unwrap();
        if text.contains("- [x] Write code\n- [ ] Update the README\n- [ ] Run tests\n") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        text.contains("- [x] Write code\n- [ ] Update the README\n- [ ] Run tests\n"),
        "{text}"
    );
    let last = last_turn(h, &client, "next").await;
    assert!(
        last.contains(
            "The user changed the plan: marked done item 1 \"Write code\"; added \"Update the README\" after item 1."
        ),
        "{last}"
    );
}

#[tokio::test]
async fn a_plan_file_outside_the_workspace_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([{"text": "hi"}]));
    let config = AgentConfig {
        plan: PlanSettings {
            file: Some("../PLAN.md".into()),
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    };
    let mut h = start_with(client, ws.path(), config, SessionSetup::Off);
    let message = error_of(&mut h.events, ErrorKind::PlanFile).await;
    assert!(message.starts_with("No plan file is kept: "), "{message}");
    assert!(!ws.path().parent().unwrap().join("PLAN.md").exists());
    stop(h).await;
}

#[tokio::test]
async fn an_existing_plan_file_waypoint_did_not_write_is_never_replaced() {
    let ws = tempfile::tempdir().unwrap();
    let mine = "# My plan\n\n- [ ] Things I wrote myself\n";
    std::fs::write(ws.path().join("PLAN.md"), mine).unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress")])}]},
        {"text": "Done."}
    ]));
    let config = AgentConfig {
        plan: PlanSettings {
            file: Some("PLAN.md".into()),
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    };
    let mut h = start_with(client, ws.path(), config, SessionSetup::Off);
    let message = error_of(&mut h.events, ErrorKind::PlanFile).await;
    assert!(message.starts_with("No plan file is kept: "), "{message}");
    assert!(message.contains("Waypoint did not write it"), "{message}");
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("PLAN.md")).unwrap(),
        mine
    );
}

#[tokio::test]
async fn the_plan_file_is_not_written_through_a_folder_swapped_for_a_symlink() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("plans")).unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress")])}]},
        {"text": "Planned."},
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Run tests", "in_progress")])}]},
        {"text": "Revised."}
    ]));
    let config = AgentConfig {
        plan: PlanSettings {
            file: Some("plans/PLAN.md".into()),
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    };
    let mut h = start_with(client, ws.path(), config, SessionSetup::Off);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    let written = std::fs::read_to_string(ws.path().join("plans/PLAN.md")).unwrap();
    assert!(written.contains("- [ ] Write code"), "{written}");
    // The folder is swapped for a link out; outside, a PLAN.md of its own.
    std::fs::write(outside.path().join("PLAN.md"), "outside\n").unwrap();
    std::fs::rename(ws.path().join("plans"), ws.path().join("plans.real")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("plans")).unwrap();
    h.ops
        .send(Op::Submit {
            text: "next".into(),
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    // Long enough for the watcher to have looked at the file twice.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    stop(h).await;
    let names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["PLAN.md"]);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("PLAN.md")).unwrap(),
        "outside\n"
    );
}

#[tokio::test]
async fn edits_that_undo_each_other_or_change_nothing_tell_the_model_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Ship", "pending")])}]},
        {"text": "Stopping."},
        {"text": "Noted."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    // A no-op is refused (no revision), the add and remove cancel out.
    for edit in ["edit 1 Write code", "add Tmp", "remove 3"] {
        h.ops
            .send(Op::EditPlan {
                thread: ThreadId::ROOT,
                edit: PlanEdit::parse_command(edit).unwrap(),
            })
            .unwrap();
    }
    let seen = until(
        &mut h.events,
        |e| matches!(e, Event::PlanUpdated { items, .. } if items.len() == 2),
    )
    .await;
    let revisions = seen
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::PlanUpdated {
                    author: Author::User,
                    ..
                }
            )
        })
        .count();
    assert_eq!(revisions, 2, "the no-op made no revision: {seen:#?}");
    assert!(seen.iter().any(|e| matches!(
        e,
        Event::Error { message, .. } if message.contains("nothing to change")
    )));
    let last = last_turn(h, &client, "and now?").await;
    assert!(!last.contains("The user changed the plan"), "{last}");
}

/// A build script (or the model's own tool) writing the plan file is not
/// the user: changes found while a tool runs, or just after one, are the
/// plan file's, told to the model as such and recorded so.
#[tokio::test]
async fn a_plan_file_changed_by_a_tool_is_not_said_to_be_the_users() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "in_progress"), ("Run tests", "pending")])}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo '- [ ] Build step' >> PLAN.md; sleep 1.2"}}]},
        {"text": "Done."}
    ]));
    let config = AgentConfig {
        plan: PlanSettings {
            file: Some("PLAN.md".into()),
            ..PlanSettings::default()
        },
        ..AgentConfig::default()
    };
    let mut h = start_with(
        client.clone(),
        ws.path(),
        config,
        SessionSetup::New(store.clone()),
    );
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let events = until(&mut h.events, turn_end).await;
    stop(h).await;
    let authors: Vec<Author> = events
        .iter()
        .filter_map(|e| match e {
            Event::PlanUpdated { author, items, .. } if items.len() == 3 => Some(*author),
            _ => None,
        })
        .collect();
    assert_eq!(authors, vec![Author::PlanFile], "{events:#?}");
    let requests = client.requests.lock().unwrap().clone();
    let last = texts(requests.last().unwrap());
    assert!(!last.contains("The user changed the plan"), "{last}");
    assert!(
        last.contains("The plan file was changed while a tool ran (by a tool or a script, not necessarily the user): added \"Build step\" at the end."),
        "{last}"
    );
    let info = store.list().unwrap().remove(0);
    let transcript = std::fs::read_to_string(&info.path).unwrap();
    assert!(
        transcript.contains("\"author\":\"plan_file\""),
        "{transcript}"
    );
    assert!(!transcript.contains("\"author\":\"user\""), "{transcript}");
}

/// Sends the ops among `effects` to the engine; how many.
fn forward(h: &waypoint::agent::AgentHandle, effects: Vec<waypoint::tui::update::Effect>) -> usize {
    let mut sent = 0;
    for effect in effects {
        if let waypoint::tui::update::Effect::Send(op) = effect {
            h.ops.send(op).unwrap();
            sent += 1;
        }
    }
    sent
}

/// `x` in the plan pane removes the item at once and says so; `u` puts it
/// back where it was, as it was (its id and status), through the same
/// edit path; the model, told nothing in between, hears of no change.
#[tokio::test]
async fn x_removes_an_item_at_once_and_u_puts_it_back_at_its_place() {
    use ratatui::crossterm::event::KeyCode;
    use tui_support::{Clock, app, key};
    use waypoint::tui::state::{EntryKind, Focus};
    use waypoint::tui::update;
    let ws = tempfile::tempdir().unwrap();
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Write code", "completed"), ("Write the tests", "completed"), ("Ship", "pending")])}]},
        {"text": "Stopping."},
        {"text": "Noted."}
    ]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    let clock = Clock::new();
    let now = clock.at(1.0);
    let mut a = app(&clock);
    a.status.engine.arrived();
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    for e in until(&mut h.events, turn_end).await {
        update::on_event(&mut a, e, now);
    }
    let before = a.root.plan.items.clone();
    assert_eq!(before.len(), 3);
    // Item 2, `x`: removed at once, and the notice says how to take it back.
    a.focus = Focus::Checklist;
    update::on_key(&mut a, key(KeyCode::Up), now);
    update::on_key(&mut a, key(KeyCode::Up), now);
    assert_eq!(a.root.plan.selected_index(), Some(1));
    let effects = update::on_key(&mut a, key(KeyCode::Char('x')), now);
    assert_eq!(forward(&h, effects), 1);
    for e in until(
        &mut h.events,
        |e| matches!(e, Event::PlanUpdated { items, .. } if items.len() == 2),
    )
    .await
    {
        update::on_event(&mut a, e, now);
    }
    assert_eq!(a.root.plan.items.len(), 2);
    let said: Vec<&str> = a
        .root
        .conversation
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Notice(_)))
        .map(|e| e.text())
        .collect();
    assert!(
        said.contains(&"Removed \"Write the tests\" · u puts it back"),
        "{said:?}"
    );
    // `u`: back at place 2, the same item (id, text, done).
    let effects = update::on_key(&mut a, key(KeyCode::Char('u')), now);
    assert_eq!(forward(&h, effects), 1);
    for e in until(
        &mut h.events,
        |e| matches!(e, Event::PlanUpdated { items, .. } if items.len() == 3),
    )
    .await
    {
        update::on_event(&mut a, e, now);
    }
    assert_eq!(a.root.plan.items, before);
    assert!(a.overlays.undo.is_none(), "no file undo was asked");
    // A second `u` puts nothing back again (nothing is selected: it asks
    // for a selection, as before).
    assert!(update::on_key(&mut a, key(KeyCode::Char('u')), now).is_empty());
    let last = last_turn(h, &client, "and now?").await;
    assert!(!last.contains("The user changed the plan"), "{last}");
}
