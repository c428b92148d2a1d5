//! Goals judged by evidence (issue 46), through the real binary on
//! scripted models: a completion whose check fails is refused with the
//! check's output and the goal goes on until it passes; a completed item
//! without evidence keeps the goal from being met and is reported
//! unverified; the goal's own check must pass; a token budget stops the
//! goal as `budget-limited` (exit 6) with what is left; a goal that makes
//! no progress stops as `unmet` (exit 4); a resume restores the goal with
//! what it spent and its budget.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use serde_json::{Value, json};

fn dirs(prefix: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    (
        support::sandbox::outside_hidden(&format!("{prefix}-home-")),
        support::sandbox::outside_hidden(&format!("{prefix}-ws-")),
    )
}

fn run(home: &Path, ws: &Path, name: &str, turns: Value, args: &[&str]) -> std::process::Output {
    let mut all = vec!["-p"];
    all.extend(args);
    support::run_scripted(home, ws, name, turns, &all)
}

/// A headless `--goal TEXT` run of `turns`.
fn goal(
    home: &tempfile::TempDir,
    ws: &tempfile::TempDir,
    turns: Value,
    text: &str,
) -> std::process::Output {
    run(home.path(), ws.path(), "s", turns, &["--goal", text])
}

fn plan(items: &[(&str, &str, Option<&str>)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(content, status, check)| {
            let mut item = json!({"content": content, "activeForm": content, "status": status});
            if let Some(check) = check {
                item["check"] = json!(check);
            }
            item
        })
        .collect();
    json!({"name": "todo_write", "input": {"todos": todos}})
}

fn of_type<'a>(seen: &'a [Value], kind: &str) -> Vec<&'a Value> {
    seen.iter().filter(|e| e["type"] == kind).collect()
}

fn result(seen: &[Value]) -> &Value {
    seen.iter().rev().find(|e| e["type"] == "result").unwrap()
}

fn why(out: &std::process::Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_failing_check_keeps_the_item_open_until_it_passes() {
    let (home, ws) = dirs("goal-check");
    let check = Some("test -f ready");
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Make it ready", "in_progress", check)])]},
        {"text": "Done, I think.", "tool_calls": [plan(&[("Make it ready", "completed", check)])]},
        {"text": "The check failed; writing the file.",
         "tool_calls": [{"name": "write_file", "input": {"path": "ready", "content": "yes\n"}}]},
        {"text": "Now it is.", "tool_calls": [plan(&[("Make it ready", "completed", check)])]},
        {"text": "Finished."}
    ]);
    let out = goal(&home, &ws, turns, "Make it ready");
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    let seen = support::json_lines(&out);
    let checked = of_type(&seen, "item_checked");
    let passes: Vec<bool> = checked
        .iter()
        .map(|e| e["evidence"]["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passes, [false, true], "{}", why(&out));
    assert_eq!(checked[0]["evidence"]["command"], "test -f ready");
    assert_eq!(checked[0]["evidence"]["exit_code"], 1);
    // The refused write told the model why, with the check's command.
    let refused = of_type(&seen, "tool_call_end")
        .into_iter()
        .find(|e| e["name"] == "todo_write" && e["status"] != "ok")
        .unwrap_or_else(|| panic!("a refused plan write: {}", why(&out)));
    let said = refused["output"].as_str().unwrap();
    assert!(
        said.contains("its check `test -f ready` failed (exit 1)"),
        "{said}"
    );
    let last = of_type(&seen, "goal_updated").pop().unwrap();
    assert_eq!(last["report"]["state"], "met");
    assert_eq!(last["report"]["items"][0]["evidence"], "verified");
    let result = result(&seen);
    assert_eq!(result["exit_reason"], "completed");
    assert_eq!(result["goal"]["state"], "met");
    // The export carries the report.
    let id = result["session_id"].as_str().unwrap();
    let export = std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["export", id])
        .current_dir(ws.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("WAYPOINT_HOME", home.path().join(".waypoint"))
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&export.stdout);
    assert!(md.contains("## Goal"), "{md}");
    assert!(md.contains("goal met: Make it ready"), "{md}");
    assert!(md.contains("verified: `test -f ready` exit 0"), "{md}");
}

#[test]
fn an_item_without_evidence_keeps_the_goal_unmet() {
    let (home, ws) = dirs("goal-unverified");
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Write the notes", "completed", None)])]},
        {"text": "All done."},
        {"text": "Really, it is done."},
        {"text": "Still done."}
    ]);
    let out = goal(&home, &ws, turns, "Write the notes");
    assert_eq!(out.status.code(), Some(4), "{}", why(&out));
    let seen = support::json_lines(&out);
    let result = result(&seen);
    assert_eq!(result["exit_reason"], "unmet");
    assert_eq!(result["goal"]["state"], "unmet");
    assert_eq!(result["goal"]["items"][0]["evidence"], "unverified");
    let reason = result["goal"]["reason"].as_str().unwrap();
    assert!(reason.contains("no progress in 3 rounds"), "{reason}");
    // The model was told what is missing, each time it stopped.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("\"state\":\"met\""), "{text}");
}

#[test]
fn the_goal_is_met_only_when_its_own_check_passes() {
    let (home, ws) = dirs("goal-own-check");
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Prepare", "completed", Some("true"))])]},
        {"text": "Done."},
        {"text": "The goal's check failed; writing the file.",
         "tool_calls": [{"name": "write_file", "input": {"path": "final", "content": "ok\n"}}]},
        {"text": "Done now."}
    ]);
    let args = ["--goal", "Ship it", "--goal-check", "test -f final"];
    let out = run(home.path(), ws.path(), "s", turns, &args);
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    let seen = support::json_lines(&out);
    let updates = of_type(&seen, "goal_updated");
    let last = updates.last().unwrap();
    assert_eq!(last["report"]["state"], "met", "{}", why(&out));
    assert_eq!(last["report"]["check"]["passed"], true);
    assert_eq!(last["report"]["check"]["command"], "test -f final");
    // Before the file existed, the goal's check failed and the model was
    // told so (the request after "Done." carried it).
    let transcript = support::transcript_text(home.path());
    assert!(
        transcript.contains("The goal's own check failed"),
        "{transcript}"
    );
}

#[test]
fn a_token_budget_stops_the_goal_with_exit_6() {
    let (home, ws) = dirs("goal-budget");
    let look = json!({"name": "read_file", "input": {"path": "notes.txt"}});
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    let mut turns = vec![json!({"text": "Planning.", "tool_calls": [
        plan(&[("Read the notes", "in_progress", None), ("Write the summary", "pending", None)])
    ]})];
    for _ in 0..20 {
        turns.push(json!({"text": "Reading again.", "tool_calls": [look.clone()]}));
    }
    let args = ["--goal", "Summarise the notes", "--budget", "2k"];
    let out = run(home.path(), ws.path(), "s", Value::Array(turns), &args);
    assert_eq!(out.status.code(), Some(6), "{}", why(&out));
    let seen = support::json_lines(&out);
    let result = result(&seen);
    assert_eq!(result["exit_reason"], "budget_limited");
    let goal = &result["goal"];
    assert_eq!(goal["state"], "budget-limited");
    assert!(goal["spent"]["tokens"].as_u64().unwrap() >= 2000, "{goal}");
    assert_eq!(goal["goal"]["budget"]["tokens"], 2000);
    let left: Vec<&str> = goal["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] != "completed")
        .map(|i| i["content"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["Read the notes", "Write the summary"]);
    // The user was warned at 80% first.
    let warned = of_type(&seen, "goal_budget");
    assert_eq!(warned.len(), 1, "{}", why(&out));
    assert_eq!(warned[0]["limit"], "tokens");
}

#[test]
fn a_resume_restores_the_goal_with_what_it_spent_and_its_budget() {
    let (home, ws) = dirs("goal-resume");
    let look = json!({"name": "read_file", "input": {"path": "notes.txt"}});
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Read the notes", "in_progress", Some("test -f notes.txt"))])]},
        {"text": "Reading.", "tool_calls": [look]},
        {"text": "Reading more.", "tool_calls": [look]}
    ]);
    let args = [
        "--goal",
        "Read the notes",
        "--budget",
        "50 turns",
        "--max-turns",
        "2",
    ];
    let first = run(home.path(), ws.path(), "one", turns, &args);
    // Stopped by --max-turns: the goal waits, paused, with what it spent.
    assert_eq!(first.status.code(), Some(3), "{}", why(&first));
    let seen = support::json_lines(&first);
    let paused = of_type(&seen, "goal_updated").pop().unwrap().clone();
    assert_eq!(paused["report"]["state"], "paused", "{}", why(&first));
    assert_eq!(paused["report"]["spent"]["turns"], 2);
    let id = result(&seen)["session_id"].as_str().unwrap().to_string();
    let turns = json!([
        {"text": "Done reading.", "tool_calls": [plan(&[("Read the notes", "completed", Some("test -f notes.txt"))])]},
        {"text": "Finished."}
    ]);
    let second = run(home.path(), ws.path(), "two", turns, &["-r", &id]);
    assert_eq!(second.status.code(), Some(0), "{}", why(&second));
    let seen = support::json_lines(&second);
    let goal = &result(&seen)["goal"];
    assert_eq!(goal["state"], "met", "{}", why(&second));
    assert_eq!(goal["goal"]["text"], "Read the notes");
    assert_eq!(goal["goal"]["budget"]["turns"], 50);
    // What the first run spent is counted on.
    assert_eq!(goal["spent"]["turns"], 4, "{goal}");
}

#[test]
fn a_models_check_is_a_command_and_is_asked_for_where_commands_are() {
    let (home, ws) = dirs("goal-ask");
    let check = Some("touch ran-the-check");
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Make it", "in_progress", check)])]},
        {"text": "Done.", "tool_calls": [plan(&[("Make it", "completed", check)])]},
        {"text": "I stop here."}
    ]);
    let args = ["--approval", "ask", "Make it"];
    let out = run(home.path(), ws.path(), "s", turns, &args);
    let seen = support::json_lines(&out);
    // Headless cannot ask: the completing write is refused, and the
    // check never ran.
    assert!(of_type(&seen, "item_checked").is_empty(), "{}", why(&out));
    assert!(!ws.path().join("ran-the-check").exists());
    let asked = of_type(&seen, "approval_requested");
    let question = asked
        .iter()
        .map(|e| e.to_string())
        .find(|e| e.contains("checks run first"))
        .unwrap_or_else(|| panic!("the write was asked for: {}", why(&out)));
    assert!(
        question.contains("item 1's check `touch ran-the-check`"),
        "{question}"
    );
}

#[test]
fn passing_item_completing_hooks_are_an_items_evidence() {
    let (home, ws) = dirs("goal-hook");
    let config = home.path().join(".config/waypoint");
    std::fs::create_dir_all(&config).unwrap();
    let hook = "[[hooks.ItemCompleting]]\ncommand = 'test -f notes.md'\n";
    std::fs::write(config.join("config.toml"), hook).unwrap();
    std::fs::write(ws.path().join("notes.md"), "notes\n").unwrap();
    let turns = json!([
        {"text": "Planning.", "tool_calls": [plan(&[("Write the notes", "in_progress", None)])]},
        {"text": "Written.", "tool_calls": [plan(&[("Write the notes", "completed", None)])]},
        {"text": "Finished."}
    ]);
    let out = goal(&home, &ws, turns, "Write the notes");
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    let seen = support::json_lines(&out);
    let item = &result(&seen)["goal"]["items"][0];
    assert_eq!(item["evidence"], "verified", "{}", why(&out));
    assert_eq!(
        item["check"]["command"],
        "ItemCompleting hook: test -f notes.md"
    );
}

#[test]
fn a_drifting_item_is_told_to_the_model() {
    let (home, ws) = dirs("goal-drift");
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    let look = json!({"name": "read_file", "input": {"path": "notes.txt"}});
    let two = |first: &str, second: &str| {
        plan(&[
            ("Read the notes", first, Some("true")),
            ("Sum them up", second, None),
        ])
    };
    let turns = json!([
        {"text": "Planning.", "tool_calls": [two("in_progress", "pending")]},
        {"text": "Read.", "tool_calls": [two("completed", "in_progress")]},
        {"delay_ms": 1000, "text": "Summing slowly.", "tool_calls": [look]},
        {"text": "Still summing."}
    ]);
    let out = goal(&home, &ws, turns, "Sum up the notes");
    assert_eq!(out.status.code(), Some(4), "{}", why(&out));
    let said = support::transcript_text(home.path());
    assert!(
        said.contains("Item 2 \\\"Sum them up\\\" is drifting"),
        "{said}"
    );
    assert_eq!(said.matches("is drifting").count(), 1, "told once");
}

#[test]
fn a_skills_plan_may_carry_checks() {
    let (home, ws) = dirs("goal-skill");
    let skill = ws.path().join(".agents/skills/make");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: make\ndescription: Make it.\n---\nMake it.\n\n## Plan\n- [ ] Make it\n  - check: `test -f made`\n",
    )
    .unwrap();
    let done = plan(&[("Make it", "completed", None)]);
    let turns = json!([
        {"text": "Loading the skill.", "tool_calls": [{"name": "skill", "input": {"name": "make"}}]},
        {"text": "Done.", "tool_calls": [done]},
        {"text": "Making it.", "tool_calls": [{"name": "write_file", "input": {"path": "made", "content": "x\n"}}]},
        {"text": "Done now.", "tool_calls": [done]},
        {"text": "Finished."}
    ]);
    let out = goal(&home, &ws, turns, "Make it");
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    let seen = support::json_lines(&out);
    let passes: Vec<(String, bool)> = of_type(&seen, "item_checked")
        .iter()
        .map(|e| {
            (
                e["evidence"]["command"].as_str().unwrap().to_string(),
                e["evidence"]["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    let check = "test -f made".to_string();
    assert_eq!(
        passes,
        [(check.clone(), false), (check, true)],
        "{}",
        why(&out)
    );
}

#[test]
fn an_item_that_spends_its_own_budget_stops_the_goal() {
    let (home, ws) = dirs("goal-item-budget");
    std::fs::write(ws.path().join("notes.txt"), "notes\n").unwrap();
    let look = json!({"name": "read_file", "input": {"path": "notes.txt"}});
    let mut turns = vec![json!({"text": "Planning.", "tool_calls": [
        plan(&[("Read the notes", "in_progress", None), ("Sum them up", "pending", None)])
    ]})];
    for _ in 0..8 {
        turns.push(json!({"text": "Reading again.", "tool_calls": [look.clone()]}));
    }
    let args = ["--goal", "Sum up the notes", "--item-budget", "3 turns"];
    let out = run(home.path(), ws.path(), "s", Value::Array(turns), &args);
    assert_eq!(out.status.code(), Some(6), "{}", why(&out));
    let seen = support::json_lines(&out);
    let goal = &result(&seen)["goal"];
    assert_eq!(goal["state"], "budget-limited");
    let reason = goal["reason"].as_str().unwrap();
    assert!(
        reason.contains("item 1 \"Read the notes\" spent its own budget (3 turns of 3 turns)"),
        "{reason}"
    );
    // It stopped there: three reads, no more.
    let reads = of_type(&seen, "tool_call_end")
        .iter()
        .filter(|e| e["name"] == "read_file")
        .count();
    assert_eq!(reads, 3, "{}", why(&out));
}

#[test]
fn the_forecast_learns_from_earlier_sessions_items() {
    let (home, ws) = dirs("goal-prior");
    let one = |status: &str| plan(&[("Read the notes", status, Some("true"))]);
    let turns = json!([
        {"text": "Planning.", "tool_calls": [one("in_progress")]},
        {"delay_ms": 600, "text": "Read.", "tool_calls": [one("completed")]},
        {"text": "Finished."}
    ]);
    let out = goal(&home, &ws, turns, "Read the notes");
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    // The earlier session's card keeps its items' time.
    let store = waypoint::session::SessionStore::new(home.path().join(".waypoint/sessions"));
    let listed = store.list().unwrap();
    let card = &listed[0].card;
    assert_eq!(card.items.done, 1, "{card:?}");
    assert!(card.items.ms >= 600, "{card:?}");
    // A new session's plan, nothing done yet: the forecast stands on it.
    let clock = crate::tui_support::Clock::new();
    let mut app = waypoint::tui::state::App::new(
        "claude-test",
        &card.workspace,
        waypoint::tui::style::Palette::monochrome(),
        clock.base,
    );
    let pending = |id: &str| waypoint::todo::ItemStats {
        id: id.into(),
        content: format!("item {id}"),
        status: Some(waypoint::todo::TodoStatus::Pending),
        ..waypoint::todo::ItemStats::default()
    };
    app.root.plan.stats.set(
        vec![pending("1"), pending("2"), pending("3")],
        None,
        clock.base,
    );
    assert!(app.root.plan.stats.forecast().is_none());
    waypoint::tui::sessions::item_history(&mut app, Some(&store));
    let forecast = app.root.plan.stats.forecast().expect("a forecast");
    assert_eq!(forecast.time_ms, 3 * card.items.ms, "{forecast:?}");
    assert_eq!(forecast.cost_usd, None);
}

#[test]
fn the_forecast_is_within_2x_on_a_scripted_plan_with_regular_items() {
    let (home, ws) = dirs("goal-forecast");
    let names = ["One", "Two", "Three", "Four", "Five", "Six"];
    // Item k is in progress for one slow request (300 ms) then completed.
    let at = |done: usize| {
        let items: Vec<(&str, &str, Option<&str>)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let status = match i.cmp(&done) {
                    std::cmp::Ordering::Less => "completed",
                    std::cmp::Ordering::Equal => "in_progress",
                    std::cmp::Ordering::Greater => "pending",
                };
                (*n, status, Some("true"))
            })
            .collect();
        plan(&items)
    };
    let mut turns = Vec::new();
    for k in 0..=names.len() {
        turns.push(json!({"delay_ms": if k == 0 { 0 } else { 300 }, "text": "Next.", "tool_calls": [at(k)]}));
    }
    turns.push(json!({"text": "All done."}));
    let out = goal(&home, &ws, Value::Array(turns), "Do the six items");
    assert_eq!(out.status.code(), Some(0), "{}", why(&out));
    let seen = support::json_lines(&out);
    let stats: Vec<Vec<waypoint::todo::ItemStats>> = of_type(&seen, "plan_stats")
        .iter()
        .map(|e| serde_json::from_value(e["items"].clone()).unwrap())
        .collect();
    let done = |s: &[waypoint::todo::ItemStats]| {
        s.iter()
            .filter(|i| i.status == Some(waypoint::todo::TodoStatus::Completed))
            .count()
    };
    // The account when two of six were done, and the last one.
    let early = stats.iter().find(|s| done(s) == 2).unwrap();
    let last = stats.last().unwrap();
    let spent = |s: &[waypoint::todo::ItemStats]| s.iter().map(|i| i.time_ms).sum::<u64>();
    let actual = spent(last) - spent(early);
    let forecast = waypoint::todo::forecast(early).unwrap().time_ms;
    eprintln!("forecast {forecast} ms for the last four items, actual {actual} ms");
    assert!(
        forecast * 2 >= actual && forecast <= actual * 2,
        "forecast {forecast} ms, actual {actual} ms"
    );
}
