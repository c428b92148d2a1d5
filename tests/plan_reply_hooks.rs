//! Without the model's todo tool (`plan_tool = false`), through the real
//! binary on scripted models: a reply's `Done: N` runs the
//! `ItemCompleting` hooks as a `todo_write` completion does (a hook that
//! blocks keeps the item open, the user sees its report, and the model
//! reads why after the plan in its next request; a passing hook lets it
//! complete), and plan mode's proposal is the Markdown checklist the
//! reply ends with (exit 5), carried out after `--approve-plan` by
//! `Done: N` lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;

use serde_json::{Value, json};

/// A workspace with a `release` skill whose plan has two items, and a
/// home whose config runs `hook` at `ItemCompleting`.
fn setup(prefix: &str, hook: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let home = support::sandbox::outside_hidden(&format!("{prefix}-home-"));
    let ws = support::sandbox::outside_hidden(&format!("{prefix}-ws-"));
    support::release_skill(ws.path());
    let config = home.path().join(".config/waypoint");
    std::fs::create_dir_all(&config).unwrap();
    // A literal string: the hook holds no single quote.
    let line = format!("plan_tool = false\n\n[[hooks.ItemCompleting]]\ncommand = '{hook}'\n");
    std::fs::write(config.join("config.toml"), line).unwrap();
    (home, ws)
}

fn run(home: &Path, ws: &Path, turns: Value, args: &[&str]) -> std::process::Output {
    support::run_scripted(home, ws, "turns", turns, args)
}

/// The statuses of the last plan the events show.
fn last_statuses(seen: &[Value]) -> Vec<String> {
    let last = seen
        .iter()
        .rev()
        .find(|e| e["type"] == "plan_updated")
        .unwrap();
    last["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_item_completing_hook_keeps_a_done_item_open() {
    let hook = r#"test -f released || { echo "the version is not bumped" >&2; exit 2; }"#;
    let (home, ws) = setup("reply-hooks-block", hook);
    let look = json!({"name": "read_file", "input": {"path": ".agents/skills/release/SKILL.md"}});
    let turns = json!([
        {"text": "Bumped.\nDone: 1", "tool_calls": [look]},
        {"text": "I cannot fix it."}
    ]);
    let out = run(home.path(), ws.path(), turns, &["-p", "/release"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    let seen = support::json_lines(&out);
    let hook = seen
        .iter()
        .find(|e| e["type"] == "hook")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(hook["report"]["event"], "ItemCompleting", "{hook}");
    assert_eq!(hook["report"]["subject"], "Bump the version", "{hook}");
    assert_eq!(hook["report"]["result"], "blocked", "{hook}");
    assert!(
        !seen
            .iter()
            .any(|e| e["type"] == "plan_updated" && e["author"] == "reply"),
        "{seen:?}"
    );
    assert_eq!(last_statuses(&seen), ["pending", "pending"]);
    // The model's next request says why, after the plan.
    let said = support::transcript_text(home.path());
    assert!(
        said.contains("[Item 1 \\\"Bump the version\\\" was kept open by an ItemCompleting hook: the version is not bumped"),
        "{said}"
    );
}

#[test]
fn a_passing_item_completing_hook_lets_done_complete_it() {
    let hook = r#"test -f released || { echo "the version is not bumped" >&2; exit 2; }"#;
    let (home, ws) = setup("reply-hooks-pass", hook);
    std::fs::write(ws.path().join("released"), "").unwrap();
    let turns = json!([{"text": "Bumped and tagged.\nDone: 1, 2"}]);
    let out = run(home.path(), ws.path(), turns, &["-p", "/release"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = support::json_lines(&out);
    let hooks: Vec<&Value> = seen.iter().filter(|e| e["type"] == "hook").collect();
    assert_eq!(hooks.len(), 2, "{seen:?}");
    for hook in hooks {
        assert_eq!(hook["report"]["event"], "ItemCompleting", "{hook}");
        assert_eq!(hook["report"]["result"], "ok", "{hook}");
    }
    assert_eq!(last_statuses(&seen), ["completed", "completed"]);
}

#[test]
fn plan_mode_without_the_todo_tool_proposes_the_replys_checklist() {
    let home = support::sandbox::outside_hidden("reply-proposal-home-");
    let ws = support::sandbox::outside_hidden("reply-proposal-ws-");
    let config = home.path().join(".config/waypoint");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "plan_tool = false\n").unwrap();
    let turns = json!([{"text": "I read the code.\n\n- [ ] Write greet.sh\n- [ ] Test it\n\nShall I go on?"}]);
    let out = run(
        home.path(),
        ws.path(),
        turns,
        &["-p", "Add a greeting script", "--approval", "plan"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let seen = support::json_lines(&out);
    let proposed = seen
        .iter()
        .find(|e| e["type"] == "plan_updated")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(proposed["author"], "reply", "{proposed}");
    let contents: Vec<&str> = proposed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["Write greet.sh", "Test it"]);
    assert!(
        seen.iter().any(|e| e["type"] == "plan_proposed"),
        "{seen:?}"
    );
    let result = seen.last().unwrap();
    assert_eq!(result["exit_reason"], "plan_proposed", "{result}");
    let id = result["session_id"].as_str().unwrap().to_string();

    let write =
        json!({"name": "write_file", "input": {"path": "greet.sh", "content": "echo hi\n"}});
    let turns = json!([
        {"text": "Writing.", "tool_calls": [write]},
        {"text": "Wrote it.\nDone: 1", "tool_calls": [{"name": "read_file", "input": {"path": "greet.sh"}}]},
        {"text": "It says hi.\nDone: 2"}
    ]);
    let args = ["-r", &id, "-p", "--approve-plan", "--approval", "auto"];
    let out = run(home.path(), ws.path(), turns, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("greet.sh")).unwrap(),
        "echo hi\n"
    );
    let seen = support::json_lines(&out);
    assert_eq!(last_statuses(&seen), ["completed", "completed"]);
    let result = seen.last().unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["exit_reason"], "completed", "{result}");
    assert_eq!(
        result["agreement"],
        json!({"done": 2, "dropped": 0, "open": 0}),
        "{result}"
    );
}

#[test]
fn a_plan_mode_reply_without_a_checklist_proposes_nothing() {
    let home = support::sandbox::outside_hidden("reply-noproposal-home-");
    let ws = support::sandbox::outside_hidden("reply-noproposal-ws-");
    let config = home.path().join(".config/waypoint");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "plan_tool = false\n").unwrap();
    let turns =
        json!([{"text": "I read the code; what should the script greet?\n- [x] not a proposal"}]);
    let args = ["-p", "Add a greeting script", "--approval", "plan"];
    let out = run(home.path(), ws.path(), turns, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(5), "{stderr}");
    let seen = support::json_lines(&out);
    assert!(
        !seen
            .iter()
            .any(|e| e["type"] == "plan_proposed" || e["type"] == "plan_updated"),
        "{seen:?}"
    );
}
