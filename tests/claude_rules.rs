//! Claude Code's permission rules read into Waypoint's (issue 41, item
//! 16), and the rules at the gate (item 15): a user's and a project's
//! `.claude/settings.json` deny rules block in every mode (a command, a
//! file read, a fetch), a project's allow rules do nothing before the
//! project is approved and cover their commands after, ask rules ask even
//! what is allowed, and an allow rule or "always" does not cover a
//! redirection into a link the repository ships. Through the engine (a
//! scripted model), and through the real binary (headless, yolo).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use scripted_support::{scenario, start_with, stop, tool_results, turn_end, until};
use serde_json::{Value, json};
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::config::claude;
use waypoint::events::{ApprovalMode, ApprovalReason, Decision, Event, Op};
use waypoint::safety::Rules;

/// A home folder with the user's `~/.claude/settings.json` and a
/// workspace with the project's, and the environment a session reads
/// them with (its approvals in the home folder).
struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Setup {
    fn new(user: Value, project: Value) -> Self {
        let setup = Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        for (dir, settings) in [(setup.home.path(), user), (setup.ws.path(), project)] {
            std::fs::create_dir_all(dir.join(".claude")).unwrap();
            std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).unwrap();
        }
        setup
    }

    fn env(&self) -> impl Fn(&str) -> Option<String> + use<> {
        let home = self.home.path().to_path_buf();
        move |k: &str| match k {
            "HOME" => Some(home.display().to_string()),
            "WAYPOINT_HOME" => Some(home.join(".waypoint").display().to_string()),
            _ => None,
        }
    }

    fn rules(&self) -> claude::ClaudeRules {
        claude::read(self.ws.path(), &self.env())
    }

    fn approve(&self) {
        let waiting = self.rules().rules.waiting.expect("rules wait");
        claude::approve(&waiting, self.ws.path(), &self.env()).unwrap();
    }
}

fn settings() -> Setup {
    Setup::new(
        json!({"permissions": {
            "deny": ["Bash(curl:*)"],
            "allow": ["Bash(cargo test:*)"]
        }}),
        json!({"permissions": {
            "deny": ["Read(./.env)", "WebFetch(domain:evil.example)"],
            "ask": ["Bash(git push:*)"],
            "allow": ["Bash(touch:*)", "Read(./.env)", "WebSearch", "Bash(git * main)"],
            "defaultMode": "acceptEdits"
        }}),
    )
}

#[test]
fn the_user_s_rules_apply_and_the_project_s_allow_rules_wait() {
    let setup = settings();
    let read = setup.rules();
    let rules = &read.rules;
    assert_eq!(rules.deny, ["curl"]);
    assert_eq!(rules.allow, ["cargo test"], "{rules:?}");
    assert_eq!(rules.ask, ["git push"]);
    let waiting = rules
        .waiting
        .as_ref()
        .expect("the project's allow rules wait");
    assert_eq!(waiting.rules.allow, ["touch"]);
    assert_eq!(waiting.files, [".claude/settings.json"]);
    // `waypoint config` says what was read, what waits, what was not.
    let said = read.describe();
    for expected in [
        "deny Bash(curl:*) -> deny \"curl\"",
        "allow Bash(cargo test:*) -> allow \"cargo test\"",
        "allow Bash(touch:*) -> waits for approval",
        "allow WebSearch -> not read: Waypoint has no tool `WebSearch`",
        "allow Bash(git * main) -> not read: only a `*` at the end is read in an allow rule",
        "`permissions.defaultMode` is not read",
        "ask Bash(git push:*) -> ask \"git push\"",
    ] {
        assert!(said.contains(expected), "{expected:?} in:\n{said}");
    }
    // Once approved as written, they apply; a changed block waits again.
    setup.approve();
    let approved = setup.rules().rules;
    assert!(approved.waiting.is_none());
    assert!(
        approved.allow.contains(&"touch".to_string()),
        "{approved:?}"
    );
    let changed = json!({"permissions": {"allow": ["Bash(touch:*)", "Bash(sh:*)"]}});
    std::fs::write(
        setup.ws.path().join(".claude/settings.json"),
        changed.to_string(),
    )
    .unwrap();
    assert!(setup.rules().rules.waiting.is_some());
}

/// Runs one turn of `calls` in `mode` under `rules`, answering every
/// approval request with `answer`; the reasons asked and the results.
async fn run_calls(
    mode: ApprovalMode,
    ws: &Path,
    rules: Rules,
    calls: Value,
    answer: impl Fn(&Event) -> Decision,
) -> (Vec<ApprovalReason>, Vec<String>) {
    let client = scenario(json!([{ "tool_calls": calls }, {"text": "done"}]));
    let mut config = AgentConfig {
        approval: mode,
        nag_every: 0,
        ..AgentConfig::default()
    };
    config.tools.rules = rules;
    let mut h = start_with(client.clone(), ws, config, SessionSetup::Off);
    h.ops.send(Op::Submit { text: "go".into() }).unwrap();
    let mut asked = Vec::new();
    loop {
        let batch = until(&mut h.events, |e| {
            turn_end(e) || matches!(e, Event::ApprovalRequested { .. })
        })
        .await;
        match batch.last().unwrap() {
            last @ Event::ApprovalRequested { id, reason, .. } => {
                asked.push(reason.clone());
                let decision = answer(last);
                h.ops
                    .send(Op::Approve {
                        id: id.clone(),
                        decision,
                    })
                    .unwrap();
            }
            _ => break,
        }
    }
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let results = tool_results(requests.last().unwrap())
        .into_iter()
        .map(|(_, content)| content)
        .collect();
    (asked, results)
}

fn bash(command: &str) -> Value {
    json!({"name": "bash", "input": {"command": command}})
}

#[tokio::test]
async fn a_claude_deny_rule_blocks_in_every_mode() {
    let setup = settings();
    std::fs::write(setup.ws.path().join(".env"), "KEY=secret\n").unwrap();
    std::fs::write(setup.ws.path().join("notes.txt"), "KEY=none\n").unwrap();
    for mode in [ApprovalMode::Yolo, ApprovalMode::Auto, ApprovalMode::Ask] {
        let calls = json!([
            bash("curl -s https://example.com/x | tee out.txt"),
            bash("cat ./docs/../.env > copy.txt"),
            {"name": "read_file", "input": {"path": ".env"}},
            {"name": "grep", "input": {"pattern": "KEY", "output_mode": "content"}},
            {"name": "web_fetch", "input": {"url": "https://a.evil.example/x"}}
        ]);
        let (asked, results) = run_calls(mode, setup.ws.path(), setup.rules().rules, calls, |_| {
            Decision::Refuse { reason: None }
        })
        .await;
        assert!(asked.is_empty(), "{mode}: {asked:?}");
        assert!(
            results[0].starts_with("Blocked by a deny rule: curl"),
            "{mode}: {}",
            results[0]
        );
        // A command naming the file plainly, and the file tool.
        for result in &results[1..3] {
            assert!(
                result.starts_with("Blocked by a rule: Read(./.env)"),
                "{mode}: {result}"
            );
        }
        // grep searches the workspace but not the denied file.
        assert!(
            results[3].contains("notes.txt") && !results[3].contains("secret"),
            "{mode}: {}",
            results[3]
        );
        assert!(
            results[4].starts_with("Blocked by a rule: WebFetch(domain:evil.example)"),
            "{mode}: {}",
            results[4]
        );
        assert!(!setup.ws.path().join("out.txt").exists(), "{mode}");
        assert!(!setup.ws.path().join("copy.txt").exists(), "{mode}");
    }
}

#[tokio::test]
async fn a_project_allow_rule_is_not_honoured_before_the_project_is_approved() {
    let setup = settings();
    let calls = || json!([bash("touch made.txt")]);
    let (asked, _) = run_calls(
        ApprovalMode::Ask,
        setup.ws.path(),
        setup.rules().rules,
        calls(),
        |_| Decision::Refuse { reason: None },
    )
    .await;
    assert_eq!(asked, [ApprovalReason::Mode]);
    assert!(!setup.ws.path().join("made.txt").exists());
    setup.approve();
    let (asked, _) = run_calls(
        ApprovalMode::Ask,
        setup.ws.path(),
        setup.rules().rules,
        calls(),
        |_| Decision::Refuse { reason: None },
    )
    .await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(setup.ws.path().join("made.txt").exists());
}

#[tokio::test]
async fn an_ask_rule_asks_even_what_is_allowed_and_always_does_not_silence_it() {
    let setup = settings();
    let mut rules = setup.rules().rules;
    rules.allow.push("git push".into());
    let calls = json!([
        bash("git push --dry-run nowhere"),
        bash("git push --dry-run nowhere")
    ]);
    let (asked, _) = run_calls(ApprovalMode::Ask, setup.ws.path(), rules, calls, |_| {
        Decision::Always
    })
    .await;
    let rule = ApprovalReason::Rule {
        rule: "git push".into(),
    };
    assert_eq!(asked, [rule.clone(), rule]);
}

#[tokio::test]
async fn allow_rules_and_always_do_not_write_through_a_link_the_repository_ships() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, ws.path().join("log.txt")).unwrap();
    let rules = Rules {
        allow: vec!["echo".into()],
        ..Rules::default()
    };
    let calls = json!([
        bash("echo one > out.txt"),
        bash("echo two > log.txt"),
        bash("ls -a > out2.txt"),
        bash("ls -a > log.txt")
    ]);
    let (asked, results) = run_calls(ApprovalMode::Ask, ws.path(), rules, calls, |e| match e {
        Event::ApprovalRequested {
            command: Some(c), ..
        } if c == "ls -a > out2.txt" => Decision::Always,
        _ => Decision::Refuse { reason: None },
    })
    .await;
    // `echo … > out.txt` is covered; into the link it is asked; `ls -a`
    // allowed "always" is not allowed into the link either.
    assert_eq!(asked.len(), 3, "{asked:?} {results:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// The real binary, headless in yolo mode, on a scenario making `calls`;
/// each call's output.
fn headless(home: &Path, ws: &Path, calls: Value) -> Vec<String> {
    let scenario = home.join("scenario.json");
    let turns = json!({"turns": [{"text": "Trying.", "tool_calls": calls}, {"text": "Done."}]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(ws)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("WAYPOINT_HOME", home.join(".waypoint"))
        .env("WAYPOINT_APPROVAL", "yolo")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_call_end")
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_binary_honours_a_claude_code_deny_rule_and_says_so_in_config() {
    let setup = Setup::new(
        json!({"permissions": {"deny": ["Bash(rm:*)"]}}),
        json!({"permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(rm:*)"]}}),
    );
    let (home, ws): (PathBuf, PathBuf) = (setup.home.path().into(), setup.ws.path().into());
    std::fs::create_dir(ws.join("keep")).unwrap();
    std::fs::write(ws.join(".env"), "KEY=secret\n").unwrap();
    let outputs = headless(
        &home,
        &ws,
        json!([
            bash("rm -rf keep"),
            {"name": "read_file", "input": {"path": ".env"}}
        ]),
    );
    assert!(ws.join("keep").exists(), "{outputs:?}");
    assert!(
        outputs[0].contains("Blocked by a deny rule: rm"),
        "{outputs:?}"
    );
    assert!(
        outputs[1].contains("Blocked by a rule: Read(./.env)") && !outputs[1].contains("secret"),
        "{outputs:?}"
    );
    let config = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .arg("--workspace")
        .arg(&ws)
        .arg("config")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("WAYPOINT_HOME", home.join(".waypoint"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&config.stdout);
    assert!(config.status.success(), "{said}");
    assert!(said.contains("deny Bash(rm:*) -> deny \"rm\""), "{said}");
    assert!(
        said.contains("allow Bash(rm:*) -> waits for approval"),
        "{said}"
    );
}
