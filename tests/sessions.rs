//! Sessions at the engine's level: what is recorded replays into the very
//! conversation the model was sent, a session cut off mid-tool is repaired
//! into a valid request, a resumed session's next request carries the plan's
//! open items, a failing disk is reported once and loses the session nothing
//! else, and the store lists, finds and prunes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::sync::Arc;
use std::time::Duration;

use scripted_support::{
    Recording, envelopes_until, plan, scenario, start_with, stop, turn_end, until,
};
use serde_json::json;
use waypoint::agent::{Agent, AgentConfig, AgentHandle, FixedClient, SessionSetup};
use waypoint::chat::Conversation;
use waypoint::events::{Envelope, Event, Op, ThreadId};
use waypoint::llm::{ContentBlock, ModelClient, Role};
use waypoint::session::{self, Record, SessionStore};
use waypoint::todo::PlanEdit;
use waypoint::tools::Workspace;

fn start(
    client: Arc<Recording>,
    workspace: &std::path::Path,
    setup: SessionSetup,
    nag_every: u32,
) -> AgentHandle {
    let config = AgentConfig {
        nag_every,
        ..AgentConfig::default()
    };
    start_with(client, workspace, config, setup)
}

fn only_session(store: &SessionStore) -> session::SessionInfo {
    let all = store.list().unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.into_iter().next().unwrap()
}

#[tokio::test]
async fn the_transcript_replays_into_the_conversation_the_model_was_sent() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"text": "Planning.", "tool_calls": [
            {"name": "todo_write", "input": plan(&[("Write", "in_progress"), ("Check", "pending")])},
            {"name": "bash", "input": {"command": "echo one"}}
        ]},
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "input": {"path": "a.txt", "content": "hello\n"}}
        ]},
        {"tool_calls": [{"name": "bash", "input": {"command": "cat a.txt"}}]},
        {"tool_calls": [
            {"name": "todo_write", "input": plan(&[("Write", "completed"), ("Check", "completed")])}
        ]},
        {"text": "Done."}
    ]));
    // A nag every round, so reminders are recorded too.
    let mut h = start(
        client.clone(),
        ws.path(),
        SessionSetup::New(store.clone()),
        1,
    );
    let started = until(&mut h.events, |e| matches!(e, Event::SessionStarted { .. })).await;
    let Event::SessionStarted {
        id, path, resumed, ..
    } = &started[0]
    else {
        panic!("{started:?}")
    };
    assert!(!resumed);
    assert!(
        !std::path::Path::new(path).exists(),
        "no file before anything happened"
    );
    h.ops
        .send(Op::Submit {
            text: "build it".into(),
        })
        .unwrap();
    let first = until(&mut h.events, turn_end).await;
    h.ops
        .send(Op::Submit {
            text: "and again".into(),
        })
        .unwrap();
    let second = until(&mut h.events, turn_end).await;
    stop(h).await;

    let info = only_session(&store);
    assert_eq!(&info.card.id, id);
    assert_eq!(info.card.first_prompt.as_deref(), Some("build it"));
    assert_eq!((info.card.plan_done, info.card.plan_total), (2, 2));
    let loaded = session::load(&info.path).unwrap();
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    let restored = session::replay(loaded).unwrap();

    // The last request, plus the reply it got, is the whole conversation.
    let requests = client.requests.lock().unwrap().clone();
    let mut expected = Conversation::from_messages(requests.last().unwrap().clone());
    expected.push_assistant(vec![ContentBlock::Text {
        text: "The scripted scenario has no more turns.".into(),
    }]);
    assert_eq!(restored.conversation.messages(), expected.messages());
    assert!(
        restored
            .conversation
            .messages()
            .iter()
            .flat_map(|m| &m.content)
            .any(|b| matches!(b, ContentBlock::Text { text } if text.contains("reminder") || text.contains("plan"))),
        "reminders are part of the replayed conversation"
    );
    assert!(restored.repairs.is_empty());
    assert!(!restored.resumable, "both turns ended and the plan is done");

    // The plan exactly as the engine last announced it.
    let last_plan = first
        .iter()
        .chain(&second)
        .filter_map(|e| match e {
            Event::PlanUpdated { items, .. } => Some(items.clone()),
            _ => None,
        })
        .next_back()
        .unwrap();
    assert_eq!(restored.plan.items(), &last_plan[..]);

    // The totals and the history as the driver saw them live.
    let last_usage = |events: &[Event]| {
        events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Usage { totals, .. } => Some((totals.input_tokens, totals.output_tokens)),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(
        (restored.totals.input_tokens, restored.totals.output_tokens),
        last_usage(&second)
    );
    // Each past event keeps its turn: two turns, numbered from 1.
    assert_eq!(restored.turns, 2);
    let turns: Vec<u32> = restored.history.iter().map(|e| e.turn).collect();
    assert!(turns.is_sorted() && turns.last() == Some(&2), "{turns:?}");
    let history: Vec<Event> = restored.history.iter().map(|e| e.event.clone()).collect();
    let users: Vec<&str> = history
        .iter()
        .filter_map(|e| match e {
            Event::UserMessage { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["build it", "and again"]);
    let count = |events: &[Event], f: fn(&Event) -> bool| events.iter().filter(|e| f(e)).count();
    let begins = |e: &Event| matches!(e, Event::ToolCallBegin { .. });
    let ends = |e: &Event| matches!(e, Event::ToolCallEnd { .. });
    assert_eq!(
        count(&history, begins),
        count(&first, begins) + count(&second, begins)
    );
    assert_eq!(count(&history, ends), count(&history, begins));
    assert_eq!(
        count(&history, |e| matches!(e, Event::TurnComplete { .. })),
        2
    );
}

/// The transcript keeps the durable events in the envelopes they were
/// sent in, so a resumed session's history is what the driver saw live:
/// equal, envelope for envelope (a call's input comes back from its reply;
/// a user's plan edit keeps its note), with the user's messages and the
/// replies' text between them.
#[tokio::test]
async fn the_replayed_history_is_what_the_driver_was_sent() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"text": "Planning.", "tool_calls": [
            {"name": "todo_write", "input": plan(&[("Write", "in_progress"), ("Check", "pending")])},
            {"name": "bash", "input": {"command": "echo one"}}
        ]},
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "input": {"path": "a.txt", "content": "hello\n"}},
            {"name": "no_such_tool", "input": {}}
        ]},
        {"text": "First part done."},
        {"tool_calls": [
            {"name": "todo_write", "input": plan(&[("Write", "completed"), ("Check", "completed")])}
        ]},
        {"text": "Done."}
    ]));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    let mut live = Vec::new();
    h.ops
        .send(Op::Submit {
            text: "build it".into(),
        })
        .unwrap();
    live.extend(envelopes_until(&mut h.events, turn_end).await);
    // A user's edit between turns: sent at once, recorded when settled.
    h.ops
        .send(Op::EditPlan {
            thread: ThreadId::ROOT,
            edit: PlanEdit::Add {
                text: "Update the README".into(),
                after: None,
            },
        })
        .unwrap();
    live.extend(envelopes_until(&mut h.events, |e| matches!(e, Event::PlanUpdated { .. })).await);
    h.ops
        .send(Op::Submit {
            text: "and again".into(),
        })
        .unwrap();
    live.extend(envelopes_until(&mut h.events, turn_end).await);
    stop(h).await;

    let restored = session::replay(session::load(&only_session(&store).path).unwrap()).unwrap();
    let durable = |events: &[Envelope]| -> Vec<Envelope> {
        events
            .iter()
            .filter(|e| e.event.is_durable())
            .cloned()
            .collect()
    };
    let sent = durable(&live);
    assert!(
        sent.iter().any(
            |e| matches!(&e.event, Event::PlanUpdated { note: Some(n), .. } if n.contains("README"))
        ),
        "the user's edit was sent: {sent:?}"
    );
    assert!(sent.len() > 20, "{sent:?}");
    assert_eq!(durable(&restored.history), sent);

    // Between them: the user's messages, and each reply's text.
    let users: Vec<&str> = restored
        .history
        .iter()
        .filter_map(|e| match &e.event {
            Event::UserMessage { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["build it", "and again"]);
    let text = |events: &[Envelope]| -> String {
        events
            .iter()
            .filter_map(|e| match &e.event {
                Event::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(text(&restored.history), text(&live));
}

#[tokio::test]
async fn a_session_cut_off_inside_a_tool_is_repaired_and_continued() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [
            {"name": "todo_write", "input": plan(&[("Count", "in_progress"), ("Report", "pending")])}
        ]},
        {"tool_calls": [
            {"name": "bash", "input": {"command": "echo ran >> count.txt"}},
            {"name": "bash", "input": {"command": "echo never"}}
        ]},
        {"text": "Counted."}
    ]));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    h.ops
        .send(Op::Submit {
            text: "count".into(),
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;

    // What a kill -9 inside the first bash call leaves: the records up to its
    // `tool_call_begin`, and half a line.
    let info = only_session(&store);
    // The calls' live output ("never" was printed) went with their results.
    let live = info.path.with_extension("live");
    assert!(!live.exists(), "no live output outlives its result");
    let text = std::fs::read_to_string(&info.path).unwrap();
    let cut = text
        .find(r#""type":"tool_call_begin","id":"toolu_scripted_1_0""#)
        .unwrap();
    let end = cut + text[cut..].find('\n').unwrap() + 1;
    let kept = format!(
        "{}{}",
        &text[..end],
        r#"{"type":"event","at":1,"envelope":{"turn":1,"type":"tool_call_end","id":"tool"#
    );
    std::fs::write(&info.path, &kept).unwrap();

    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    assert!(
        restored
            .notes
            .iter()
            .any(|n| n.contains("cut off mid-write")),
        "{:?}",
        restored.notes
    );
    assert!(restored.resumable);
    restored.conversation.validate().unwrap();
    let results_of = |restored: &session::replay::Restored| -> Vec<(String, String)> {
        restored
            .conversation
            .messages()
            .last()
            .unwrap()
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => Some((tool_use_id.clone(), content.to_string())),
                _ => None,
            })
            .collect()
    };
    let results = results_of(&restored);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].1, session::replay::DIED_RUNNING);
    assert_eq!(results[1].1, session::replay::DIED_BEFORE);
    // What the running call had printed, as a kill left it beside the
    // transcript, is in its repaired result.
    std::fs::create_dir_all(&live).unwrap();
    std::fs::write(live.join("0-toolu_scripted_1_0"), "half done\n").unwrap();
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    let results = results_of(&restored);
    assert_eq!(
        results[0].1,
        format!(
            "{}\n{}\nhalf done\n",
            session::replay::DIED_RUNNING,
            session::replay::PRINTED_BEFORE
        )
    );
    assert_eq!(results[1].1, session::replay::DIED_BEFORE);
    assert!(matches!(
        restored.history.last().map(|e| &e.event),
        Some(Event::TurnAborted { .. })
    ));
    let plan_before: Vec<_> = restored.plan.items().to_vec();

    // Continue it: the repairs are written first, then the new turn.
    let next = scenario(json!([{"text": "Carrying on."}]));
    let setup = SessionSetup::Resume(store.clone(), Box::new(restored));
    let mut h = start(next.clone(), ws.path(), setup, 0);
    let opened = until(&mut h.events, |e| matches!(e, Event::History { .. })).await;
    assert!(
        matches!(&opened[0], Event::SessionStarted { resumed: true, .. }),
        "{opened:?}"
    );
    h.ops.send(Op::Resume).unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    assert!(!live.exists(), "the kept output is forgotten once repaired");

    let sent = next.requests.lock().unwrap()[0].clone();
    let conv = Conversation::from_messages(sent.clone());
    conv.validate().unwrap();
    let last = sent.last().unwrap();
    assert_eq!(last.role, Role::User);
    let note = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        note.contains("Open plan items")
            && note.contains("- Count (in progress)")
            && note.contains("- Report"),
        "{note}"
    );
    // The file is whole again, and replays to the plan it had.
    let again = session::load(&info.path).unwrap();
    assert!(again.notes.is_empty(), "{:?}", again.notes);
    let again = session::replay(again).unwrap();
    assert!(again.repairs.is_empty());
    assert_eq!(again.plan.items(), &plan_before[..]);
    assert!(again.file.card.records > 0);
}

#[tokio::test]
async fn a_disk_that_fails_is_reported_once_and_the_turn_goes_on() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The sessions folder would be inside a file: every write fails.
    std::fs::write(home.path().join("blocker"), "").unwrap();
    let store = SessionStore::new(home.path().join("blocker/sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]},
        {"text": "ok"}
    ]));
    let mut h = start(client, ws.path(), SessionSetup::New(store), 0);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let events = until(&mut h.events, turn_end).await;
    stop(h).await;
    let errors: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Error {
                kind: waypoint::events::ErrorKind::SessionSave,
                message,
            } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("could not be saved"), "{}", errors[0]);
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
}

#[tokio::test]
async fn opening_another_stored_session_replaces_this_one() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "todo_write", "input": plan(&[("Old step", "in_progress")])}]},
        {"text": "first session"},
        {"text": "second session"}
    ]));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    let first = until(&mut h.events, |e| matches!(e, Event::SessionStarted { .. })).await;
    let Event::SessionStarted { id: first_id, .. } = first.last().unwrap().clone() else {
        unreachable!()
    };
    h.ops.send(Op::Submit { text: "one".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    h.ops.send(Op::NewSession).unwrap();
    let reset = until(&mut h.events, |e| matches!(e, Event::SessionStarted { .. })).await;
    let Event::SessionStarted { id: second_id, .. } = reset.last().unwrap().clone() else {
        unreachable!()
    };
    assert_ne!(first_id, second_id);
    h.ops.send(Op::Submit { text: "two".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    assert_eq!(store.list().unwrap().len(), 2);

    h.ops
        .send(Op::OpenSession {
            id: first_id[..8].to_string(),
        })
        .unwrap();
    let opened = until(&mut h.events, |e| matches!(e, Event::History { .. })).await;
    let Some(Event::History { events }) = opened.last() else {
        unreachable!()
    };
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.event, Event::UserMessage { text } if text == "one"))
    );
    assert!(events.iter().any(
        |e| matches!(&e.event, Event::PlanUpdated { items, .. } if items[0].content == "Old step")
    ));
    // An unknown id is refused with a message; the session stays.
    h.ops.send(Op::OpenSession { id: "zzzz".into() }).unwrap();
    let refused = until(&mut h.events, |e| matches!(e, Event::Error { .. })).await;
    let Some(Event::Error { message, .. }) = refused.last() else {
        unreachable!()
    };
    assert!(
        message.contains("no session with an id starting with `zzzz`"),
        "{message}"
    );
    // The session open now is said to be so (not locked by "another process").
    h.ops
        .send(Op::OpenSession {
            id: first_id[..8].to_string(),
        })
        .unwrap();
    let refused = until(&mut h.events, |e| matches!(e, Event::Error { .. })).await;
    let Some(Event::Error { message, .. }) = refused.last() else {
        unreachable!()
    };
    assert_eq!(
        message,
        &format!(
            "The session was not opened: session {} is the one open here already",
            &first_id[..8]
        )
    );
    stop(h).await;
}

#[test]
fn the_store_lists_finds_and_prunes() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    assert!(
        store.list().unwrap().is_empty(),
        "a missing folder is an empty list"
    );
    let now = session::now_ms();
    let mut ids = Vec::new();
    for (n, (id, age_days, prompt)) in [
        ("aaaa1111-0000-4000-8000-000000000000", 40u64, "old task"),
        ("aaaa2222-0000-4000-8000-000000000000", 1, "recent task"),
        ("bbbb3333-0000-4000-8000-000000000000", 0, "newest task"),
    ]
    .into_iter()
    .enumerate()
    {
        let at = now - age_days * 86_400_000 - n as u64;
        let header = session::Header::new(id, "/work/project", "scripted", "m", at);
        let mut t = store.create(header);
        assert!(
            t.record(&Record::User {
                text: prompt.into(),
                prompt: true,
                at
            })
            .is_none()
        );
        assert!(t.sync().is_none());
        ids.push(id);
    }
    let all = store.list().unwrap();
    let prompts: Vec<_> = all
        .iter()
        .map(|s| s.card.first_prompt.as_deref().unwrap())
        .collect();
    assert_eq!(
        prompts,
        ["newest task", "recent task", "old task"],
        "most recent first"
    );
    assert_eq!(store.latest_in("/work/project").unwrap().card.id, ids[2]);
    assert!(store.latest_in("/elsewhere").is_err());
    // One session without its card: listed from its first lines (and the
    // file's time).
    std::fs::remove_file(home.path().join(format!("sessions/{}.card.json", ids[1]))).unwrap();
    let all = store.list().unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        all.iter()
            .any(|s| s.card.first_prompt.as_deref() == Some("recent task"))
    );
    assert_eq!(store.find("bbbb").unwrap().card.id, ids[2]);
    let err = store.find("aaaa").unwrap_err().to_string();
    assert!(err.contains("matches several sessions"), "{err}");
    assert!(store.find("cccc").is_err());
    let pruned = store.prune(session::parse_age("30d").unwrap()).unwrap();
    assert_eq!(pruned.removed.len(), 1);
    assert!(pruned.in_use.is_empty());
    assert_eq!(pruned.removed[0].card.id, ids[0]);
    assert!(
        !home
            .path()
            .join(format!("sessions/{}.card.json", ids[0]))
            .exists()
    );
    // A call's kept live output (a crash left it) goes with its session.
    let live = home.path().join(format!("sessions/{}.live", ids[2]));
    std::fs::create_dir_all(&live).unwrap();
    std::fs::write(live.join("0-call_1"), "printed\n").unwrap();
    store.remove(&store.find("bbbb").unwrap()).unwrap();
    assert_eq!(store.list().unwrap().len(), 1);
    assert!(!live.exists(), "the kept live output is removed");
    assert!(session::parse_age("3 fortnights").is_err());
    assert_eq!(
        session::parse_age("2w").unwrap(),
        Duration::from_secs(14 * 86_400)
    );
}

#[tokio::test]
async fn a_session_open_in_one_process_is_not_continued_by_another() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([{"text": "hi"}]));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    h.ops
        .send(Op::Submit {
            text: "hello".into(),
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    // Still running: the transcript is held.
    let info = only_session(&store);
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    let other = scenario(json!([]));
    let other: Arc<dyn ModelClient> = other;
    let refused = Agent::builder(other.clone(), Workspace::new(ws.path()).unwrap())
        .factory(Arc::new(FixedClient(other)))
        .session(SessionSetup::Resume(store.clone(), Box::new(restored)))
        .spawn();
    let err = refused.err().expect("refused").to_string();
    assert!(err.contains("open in another Waypoint process"), "{err}");
    // Said once, by its id (not a path followed by the same words).
    assert_eq!(err.matches("session").count(), 1, "{err}");
    assert!(!err.contains(".jsonl"), "{err}");
    // Nor deleted under it: `sessions rm` and `prune` leave it.
    let err = store.remove(&info).unwrap_err().to_string();
    assert!(
        err.contains("open in another Waypoint process") && err.contains("nothing was deleted"),
        "{err}"
    );
    assert!(info.path.exists());
    let pruned = store.prune(Duration::ZERO).unwrap();
    assert!(pruned.removed.is_empty(), "{pruned:?}");
    assert_eq!(pruned.in_use.len(), 1);
    assert!(info.path.exists());
    stop(h).await;
    // Once the first has quit, it can be continued.
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    let h = start(
        scenario(json!([])),
        ws.path(),
        SessionSetup::Resume(store, Box::new(restored)),
        0,
    );
    stop(h).await;
}

/// Killed while a call waited for approval: the call never ran, and the
/// repair says so (not "it may have done part of its work").
#[tokio::test]
async fn a_session_cut_off_while_a_call_waited_for_approval_says_it_never_ran() {
    use waypoint::events::{ApprovalMode, Decision};
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo ran >> count.txt"}}]},
        {"text": "Stopped."}
    ]));
    let config = AgentConfig {
        approval: ApprovalMode::Ask,
        nag_every: 0,
        ..AgentConfig::default()
    };
    let mut h = start_with(client, ws.path(), config, SessionSetup::New(store.clone()));
    h.ops
        .send(Op::Submit {
            text: "count".into(),
        })
        .unwrap();
    let seen = until(&mut h.events, |e| {
        matches!(e, Event::ApprovalRequested { .. })
    })
    .await;
    let Some(Event::ApprovalRequested { id, .. }) = seen.last() else {
        unreachable!()
    };
    h.ops
        .send(Op::Approve {
            id: id.clone(),
            decision: Decision::Refuse { reason: None },
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    assert!(!ws.path().join("count.txt").exists());
    // What a kill -9 during the wait leaves: the records up to the wait.
    let info = only_session(&store);
    let text = std::fs::read_to_string(&info.path).unwrap();
    let cut = text.find(r#""type":"approval""#).unwrap();
    assert!(
        text[cut..].starts_with(r#""type":"approval","id":"#),
        "{text}"
    );
    let end = cut + text[cut..].find('\n').unwrap() + 1;
    assert!(
        text[cut..end].contains(r#""waiting":true"#),
        "{}",
        &text[cut..end]
    );
    std::fs::write(&info.path, &text[..end]).unwrap();
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    restored.conversation.validate().unwrap();
    let result = restored
        .conversation
        .messages()
        .last()
        .unwrap()
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result, session::replay::DIED_WAITING);
}

/// A full disk (a small tmpfs filled up) in the middle of a session: the
/// records that could not be written wait in order and are written once
/// there is room again, and the session opens whole afterwards. Needs root
/// (to mount the tmpfs); says so and skips otherwise.
#[tokio::test]
async fn a_full_disk_loses_no_record_and_the_session_opens_afterwards() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the full-disk test: mounting a tmpfs needs root");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let disk = home.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&disk)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !mounted {
        eprintln!("skipped the full-disk test: tmpfs could not be mounted here");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(disk.clone());
    let store = SessionStore::new(disk.join("sessions"));
    let turn = |n: usize| {
        json!([
            {"tool_calls": [{"name": "bash", "input": {"command": format!("echo result-{n}")}}]},
            {"text": format!("reply-{n}")}
        ])
    };
    let mut turns = Vec::new();
    for n in 1..=3 {
        turns.extend(turn(n).as_array().unwrap().iter().cloned());
    }
    let client = scenario(serde_json::Value::Array(turns));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    h.ops.send(Op::Submit { text: "one".into() }).unwrap();
    until(&mut h.events, turn_end).await;
    // The disk fills up.
    let filler = disk.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
    }
    h.ops.send(Op::Submit { text: "two".into() }).unwrap();
    let second = until(&mut h.events, turn_end).await;
    assert!(
        second.iter().any(|e| matches!(
            e,
            Event::Error {
                kind: waypoint::events::ErrorKind::SessionSave,
                ..
            }
        )),
        "the failure is reported"
    );
    // Room again: the next records bring the waiting ones along, in order.
    std::fs::remove_file(&filler).unwrap();
    h.ops
        .send(Op::Submit {
            text: "three".into(),
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    let info = only_session(&store);
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    restored.conversation.validate().unwrap();
    let text = std::fs::read_to_string(&info.path).unwrap();
    let mut at = 0;
    for piece in [
        "\"one\"",
        "result-1",
        "reply-1",
        "\"two\"",
        "result-2",
        "reply-2",
        "\"three\"",
        "result-3",
        "reply-3",
    ] {
        let found = text[at..]
            .find(piece)
            .unwrap_or_else(|| panic!("{piece} missing or out of order"));
        at += found;
    }
}

/// A transcript written by an older Waypoint during a full disk: a tool
/// result missing in the middle. It opens, with the call marked as lost.
#[tokio::test]
async fn a_tool_result_missing_mid_file_is_marked_lost_and_the_session_opens() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let client = scenario(json!([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo first"}}]},
        {"text": "one"},
        {"text": "two"}
    ]));
    let mut h = start(client, ws.path(), SessionSetup::New(store.clone()), 0);
    for text in ["go", "again"] {
        h.ops.send(Op::Submit { text: text.into() }).unwrap();
        until(&mut h.events, turn_end).await;
    }
    stop(h).await;
    let info = only_session(&store);
    let text = std::fs::read_to_string(&info.path).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains(r#""type":"tool_call_end""#))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept, text);
    std::fs::write(&info.path, kept).unwrap();
    let restored = session::replay(session::load(&info.path).unwrap()).unwrap();
    restored.conversation.validate().unwrap();
    assert!(
        restored.notes.iter().any(|n| n.contains("marked as lost")),
        "{:?}",
        restored.notes
    );
    let lost = restored.conversation.messages().iter().any(|m| {
        m.content.iter().any(|b| {
            matches!(b, ContentBlock::ToolResult { content, .. } if content == session::replay::LOST_RESULT)
        })
    });
    assert!(lost);
}
