//! Approving a plan as the user edited it in a file (issue 45): a plan
//! mode run with `--plan-file P.md` writes the proposal there (item scope
//! included), and `-r ID -p --approve-plan --plan-from P.md` makes the
//! file's items the proposal (a user revision keeping the ids and scope of
//! the items it kept), approves it and carries it out. A file that cannot
//! be read or holds no items is refused before anything changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};

fn propose(home: &std::path::Path, ws: &std::path::Path) -> String {
    let scoped = json!({"todos": [
        {"content": "Write greet.sh", "activeForm": "Writing greet.sh", "status": "pending", "files": ["greet.sh"]},
        {"content": "Test it", "activeForm": "Testing it", "status": "pending"}
    ]});
    let first = home.join("propose.json");
    std::fs::write(
        &first,
        json!({"turns": [
            {"text": "Reading.", "tool_calls": [{"name": "todo_write", "input": scoped}]},
            {"text": "Research: greet.sh goes at the root."}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = support::run_waypoint(
        home,
        ws,
        &[
            "-p",
            "Add a greeting script",
            "--approval",
            "plan",
            "--plan-file",
            "P.md",
            "--output-format",
            "jsonl",
            "--scenario",
            first.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = support::json_lines(&out);
    seen.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn approve(
    home: &std::path::Path,
    ws: &std::path::Path,
    id: &str,
    extra: &[&str],
) -> std::process::Output {
    let carry = home.join("carry.json");
    let turns = crate::scripted_support::carry_out_greet(&["Write greet.sh", "Make it executable"]);
    std::fs::write(&carry, turns).unwrap();
    let mut args = vec!["-r", id, "-p", "--approve-plan", "--approval", "auto"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--output-format",
        "jsonl",
        "--scenario",
        carry.to_str().unwrap(),
    ]);
    support::run_waypoint(home, ws, &args)
}

fn contents(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"].as_str().unwrap())
        .collect()
}

#[test]
fn the_plan_is_approved_as_edited_in_the_file() {
    let home = support::sandbox::outside_hidden("plan-from-home-");
    let ws = support::sandbox::outside_hidden("plan-from-ws-");
    let id = propose(home.path(), ws.path());
    let file = ws.path().join("P.md");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("- [ ] Write greet.sh\n  - files: `greet.sh`\n- [ ] Test it\n"),
        "{written}"
    );
    // The user drops an item and adds one with its own scope.
    let edited = written.replace(
        "- [ ] Test it\n",
        "- [ ] Make it executable\n  - commands: `chmod +x`\n",
    );
    std::fs::write(&file, edited).unwrap();

    let out = approve(
        home.path(),
        ws.path(),
        &id,
        &["--plan-from", file.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = support::json_lines(&out);
    let plans: Vec<&Value> = seen
        .iter()
        .filter(|e| e["type"] == "plan_updated")
        .collect();
    let by_user = plans
        .iter()
        .find(|e| e["author"] == "user")
        .expect("a user revision");
    assert_eq!(
        contents(&by_user["items"]),
        ["Write greet.sh", "Make it executable"]
    );
    assert_eq!(by_user["items"][0]["files"], json!(["greet.sh"]));
    assert_eq!(by_user["items"][1]["commands"], json!(["chmod +x"]));
    // The kept item keeps the proposal's id; the new one gets a fresh one.
    assert_eq!(by_user["items"][0]["id"], "1");
    assert_ne!(by_user["items"][1]["id"], "2");
    let approved = seen.iter().find(|e| e["type"] == "plan_approved").unwrap();
    let approval = plans
        .iter()
        .find(|e| e["author"] == "approved")
        .expect("the approval's revision");
    assert_eq!(approval["revision"], approved["revision"]);
    assert!(by_user["revision"].as_u64() < approved["revision"].as_u64());
    assert_eq!(
        contents(&approval["items"]),
        ["Write greet.sh", "Make it executable"]
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("greet.sh")).unwrap(),
        "echo hi\n"
    );
    let result = seen.last().unwrap();
    assert_eq!(result["agreement"]["done"], 2, "{result}");
}

#[test]
fn an_unusable_file_is_refused_and_changes_nothing() {
    let home = support::sandbox::outside_hidden("plan-from-bad-home-");
    let ws = support::sandbox::outside_hidden("plan-from-bad-ws-");
    let id = propose(home.path(), ws.path());
    let missing = ws.path().join("missing.md");
    let out = approve(
        home.path(),
        ws.path(),
        &id,
        &["--plan-from", missing.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--plan-from: cannot read"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty());

    let empty = ws.path().join("empty.md");
    std::fs::write(&empty, "# Plan\n\nNothing to do.\n").unwrap();
    let out = approve(
        home.path(),
        ws.path(),
        &id,
        &["--plan-from", empty.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("has no checklist items"), "{stderr}");

    // Items the plan's rules refuse (the same item twice): not approved.
    let twice = ws.path().join("twice.md");
    std::fs::write(&twice, "- [ ] Write greet.sh\n- [ ] write greet.sh\n").unwrap();
    let out = approve(
        home.path(),
        ws.path(),
        &id,
        &["--plan-from", twice.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("The plan was not approved"), "{stderr}");
    assert!(!ws.path().join("greet.sh").exists());

    // Without --approve-plan, the flag is a usage error.
    let out = support::run_waypoint(
        home.path(),
        ws.path(),
        &["-r", &id, "-p", "--plan-from", empty.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));

    // The proposal is still there, as proposed.
    let out = approve(home.path(), ws.path(), &id, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let seen = support::json_lines(&out);
    let approval = seen
        .iter()
        .find(|e| e["type"] == "plan_updated" && e["author"] == "approved")
        .unwrap();
    assert_eq!(contents(&approval["items"]), ["Write greet.sh", "Test it"]);
}
