//! Hooks through the real binary on a loopback model, one test per
//! event: `PreToolUse` blocking `rm` (exit 2, stderr to the model),
//! changing the command (`updatedInput`) and making yolo ask
//! (`permissionDecision: ask`); `PostToolUse` context reaching the
//! model; `UserPromptSubmit` blocking a prompt; `Stop` keeping a turn
//! going at most 3 times; a hook past its timeout killed while the turn
//! goes on; `ItemCompleting` keeping an item open until the model fixes
//! the cause, and the user's override; a Claude Code project's
//! `.claude/settings.json` hook (a JSON-reading Python script) that does
//! not run before `waypoint hooks approve` and runs unchanged after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;
use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded, plan};
use serde_json::{Value, json};

/// A home with a config file, and a workspace.
struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Setup {
    fn new(config: &str) -> Self {
        let setup = Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        std::fs::write(setup.home.path().join("config.toml"), config).unwrap();
        setup
    }

    fn ws(&self) -> &Path {
        self.ws.path()
    }

    async fn run(&self, url: &str, args: &[&str]) -> (i32, String, String) {
        let home = self.home.path();
        let mut cmd = cli_support::on_loopback(home, self.ws(), url, Anthropic::MODEL);
        cmd.env("WAYPOINT_CONFIG", home.join("config.toml"))
            .args(args);
        cli_support::output(&mut cmd).await
    }

    /// The session's transcript, as text.
    fn transcript(&self) -> String {
        let dir = self.home.path().join("sessions");
        let file: PathBuf = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .expect("a transcript");
        std::fs::read_to_string(file).unwrap()
    }
}

/// How many replies the model has given in this request's conversation.
fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// The text of every tool result and user text in the last request.
fn last_said(server: &FakeServer<Anthropic>) -> String {
    let last = server.requests().pop().expect("a request");
    last.messages()
        .last()
        .map(Value::to_string)
        .unwrap_or_default()
}

fn toml_str(s: &str) -> String {
    format!("{s:?}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_hook_exiting_2_blocks_rm_and_the_model_reads_why() {
    let config = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = {}\n",
        toml_str(
            r#"if grep -q '"command": *"rm ' ; then echo "rm is not allowed here; move files to trash/ instead" >&2; exit 2; fi"#
        )
    );
    let setup = Setup::new(&config);
    std::fs::write(setup.ws().join("keep.txt"), "keep\n").unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": "rm keep.txt"}))),
        _ => sse(Turn::text("Understood.")),
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "tidy up"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(setup.ws().join("keep.txt").exists(), "rm did not run");
    let said = last_said(&server);
    assert!(said.contains("Refused by a PreToolUse hook"), "{said}");
    assert!(said.contains("rm is not allowed here"), "{said}");
    assert!(err.contains("PreToolUse hook"), "{err}");
    // Recorded in the session: event, command, exit code, duration.
    let transcript = setup.transcript();
    assert!(transcript.contains(r#""type":"hook""#), "{transcript}");
    assert!(transcript.contains(r#""result":"blocked""#));
    assert!(transcript.contains(r#""exit_code":2"#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updated_input_changes_the_command_that_runs() {
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "echo safer > out.txt"}}});
    let config = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"bash\"\ncommand = {}\n",
        toml_str(&format!("cat > /dev/null; echo '{answer}'"))
    );
    let setup = Setup::new(&config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "bash",
            json!({"command": "echo risky > out.txt"}),
        )),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "write it"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(setup.ws().join("out.txt")).unwrap(),
        "safer\n"
    );
    let said = last_said(&server);
    assert!(
        said.contains("A PreToolUse hook changed this call's input"),
        "the model is told: {said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_decision_ask_makes_yolo_ask() {
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask", "permissionDecisionReason": "deploys need a human"}});
    let config = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = {}\n",
        toml_str(&format!("echo '{answer}'"))
    );
    let setup = Setup::new(&config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": "touch deployed"}))),
        _ => sse(Turn::text("Waiting for you.")),
    }))
    .await;
    let (_, out, err) = setup.run(&server.url, &["-p", "deploy"]).await;
    // Headless cannot answer a question: the call is asked and refused.
    assert!(err.contains("needs approval"), "{out}\n{err}");
    assert!(!setup.ws().join("deployed").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_use_context_reaches_the_model() {
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "lint: 2 warnings in main.rs"}});
    let config = format!(
        "[[hooks.PostToolUse]]\nmatcher = \"Write|Edit\"\ncommand = {}\n",
        toml_str(&format!(
            "python3 -c 'import json,sys; e=json.load(sys.stdin); assert e[\"tool_name\"]==\"Write\" and e[\"tool_input\"][\"file_path\"]==\"main.rs\"' && echo '{answer}'"
        ))
    );
    let setup = Setup::new(&config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "write_file",
            json!({"path": "main.rs", "content": "fn main() {}\n"}),
        )),
        _ => sse(Turn::text("Written.")),
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "write main"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let said = last_said(&server);
    assert!(
        said.contains("PostToolUse hook: lint: 2 warnings in main.rs"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_submit_hook_blocks_a_prompt_and_adds_context_to_another() {
    let config = format!(
        "[[hooks.UserPromptSubmit]]\ncommand = {}\n",
        toml_str(
            r#"if grep -q 'password' ; then echo "prompts must not hold secrets" >&2; exit 2; fi; echo "branch: main""#
        )
    );
    let setup = Setup::new(&config);
    let server =
        FakeServer::<Anthropic>::responding(Arc::new(|_: &Recorded| sse(Turn::text("Hello."))))
            .await;
    let (code, out, err) = setup
        .run(&server.url, &["-p", "my password is hunter2"])
        .await;
    assert!(
        err.contains("prompts must not hold secrets"),
        "{out}\n{err}"
    );
    assert_ne!(code, 0);
    assert!(server.requests().is_empty(), "the prompt was never sent");

    let (code, out, err) = setup.run(&server.url, &["-p", "hello"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let said = last_said(&server);
    assert!(
        said.contains("[UserPromptSubmit hook: branch: main]"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_exiting_2_keeps_the_turn_going_at_most_three_times() {
    let config = format!(
        "[[hooks.Stop]]\ncommand = {}\n",
        toml_str(r#"echo "the tests were not run yet" >&2; exit 2"#)
    );
    let setup = Setup::new(&config);
    let server =
        FakeServer::<Anthropic>::responding(Arc::new(|_: &Recorded| sse(Turn::text("I am done."))))
            .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "finish"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    // The first stop and three kept going: four requests, no more.
    assert_eq!(server.requests().len(), 4);
    let said = last_said(&server);
    assert!(
        said.contains("A Stop hook keeps the turn going: the tests were not run yet"),
        "{said}"
    );
    assert!(err.contains("3 times in a row"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_past_its_timeout_is_killed_and_the_turn_goes_on() {
    let config = "[[hooks.PreToolUse]]\ncommand = \"sleep 30\"\ntimeout = 1\n";
    let setup = Setup::new(config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": "echo ran > ran.txt"}))),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let started = std::time::Instant::now();
    let (code, out, err) = setup.run(&server.url, &["-p", "go"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(setup.ws().join("ran.txt").exists(), "the call went on");
    assert!(err.contains("timed out and was killed"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(25));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_completing_hook_keeps_the_item_open_until_the_cause_is_fixed() {
    let config = format!(
        "[[hooks.ItemCompleting]]\nmatcher = \"(?i)tests\"\ncommand = {}\n",
        toml_str(
            r#"test -f tests_pass || { echo "the tests fail: run ./check first" >&2; exit 2; }"#
        )
    );
    let setup = Setup::new(&config);
    let two = |a: &str, b: &str| plan(&[("Write code", a), ("Add tests", b)]);
    let server = FakeServer::<Anthropic>::responding(Arc::new(move |r: &Recorded| match step(r) {
        0 => sse(Turn::tool("todo_write", two("completed", "in_progress"))),
        1 => sse(Turn::tool("todo_write", two("completed", "completed"))),
        2 => sse(Turn::tool("bash", json!({"command": "touch tests_pass"}))),
        3 => sse(Turn::tool("todo_write", two("completed", "completed"))),
        _ => sse(Turn::text("All done.")),
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "build it"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    let refused = requests[2].messages().last().unwrap().to_string();
    assert!(refused.contains("plan refused"), "{refused}");
    assert!(
        refused.contains("keeps item 2 \\\"Add tests\\\" open: "),
        "{refused}"
    );
    assert!(
        refused.contains("the tests fail: run ./check first"),
        "{refused}"
    );
    let accepted = requests[4].messages().last().unwrap().to_string();
    assert!(!accepted.contains("plan refused"), "{accepted}");
    // The first item completed freely (its text does not match).
    let transcript = setup.transcript();
    assert_eq!(transcript.matches(r#""event":"ItemCompleting""#).count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_project_hook_runs_unchanged_once_approved() {
    let setup = Setup::new("");
    let hooks = setup.ws().join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks/validate_bash.py"),
        hooks.join("validate_bash.py"),
    )
    .unwrap();
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate_bash.py"}
    ]}]}});
    std::fs::write(
        setup.ws().join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    std::fs::write(setup.ws().join("a.txt"), "needle\n").unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": "grep needle a.txt"}))),
        _ => sse(Turn::text("Searched.")),
    }))
    .await;
    // Not approved: it does not run, and the user is told.
    let (code, out, err) = setup.run(&server.url, &["-p", "search"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("do not run until you approve them"), "{err}");
    assert!(!last_said(&server).contains("ripgrep"));

    let (code, listed, _) = setup.run(&server.url, &["hooks", "list"]).await;
    assert_eq!(code, 0);
    assert!(listed.contains("Waiting for approval"), "{listed}");
    let (code, approved, err) = setup.run(&server.url, &["hooks", "approve"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(approved.contains("Approved 1 hook(s)"), "{approved}");

    let (code, out, err) = setup.run(&server.url, &["-p", "search again"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let said = last_said(&server);
    assert!(said.contains("Refused by a PreToolUse hook"), "{said}");
    assert!(
        said.contains("Use 'rg' (ripgrep) instead of 'grep'"),
        "{said}"
    );
}

/// The first user message's text of a request (a child's holds its task).
fn first_text(r: &Recorded) -> String {
    r.messages()
        .first()
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_item_started_and_plan_updated_hooks_reach_the_model() {
    let config = format!(
        "[[hooks.SessionStart]]\nmatcher = \"startup\"\ncommand = {}\n\
         [[hooks.ItemStarted]]\ncommand = {}\n\
         [[hooks.PlanUpdated]]\ncommand = {}\n",
        toml_str("echo 'the main branch is protected'"),
        toml_str(
            r#"python3 -c 'import json,sys; e=json.load(sys.stdin); print(json.dumps({"hookSpecificOutput": {"additionalContext": "started item %d: %s" % (e["item_number"], e["item"]["content"])}}))'"#
        ),
        toml_str(
            r#"python3 -c 'import json,sys; e=json.load(sys.stdin); print(len(e["plan"]), file=sys.stderr)'; exit 2"#
        ),
    );
    let setup = Setup::new(&config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "todo_write",
            plan(&[("Read the code", "in_progress"), ("Fix it", "pending")]),
        )),
        _ => sse(Turn::text("Working.")),
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "fix the bug"]).await;
    assert_eq!(code, 4, "open items: {out}\n{err}");
    let requests = server.requests();
    let first = requests[0].messages()[0].to_string();
    assert!(
        first.contains("[SessionStart hook: the main branch is protected]"),
        "{first}"
    );
    let after = last_said(&server);
    assert!(
        after.contains("[ItemStarted hook: started item 1: Read the code]"),
        "{after}"
    );
    assert!(after.contains("[PlanUpdated hook: 2]"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_stop_hook_keeps_a_child_going_once() {
    let config = format!(
        "[[hooks.SubagentStop]]\ncommand = {}\n",
        toml_str(
            r#"test -f checked && exit 0; touch checked; echo "check the tests too" >&2; exit 2"#
        )
    );
    let setup = Setup::new(&config);
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| {
        if first_text(r).contains("Task: Find X") {
            return sse(Turn::text("X is in x.rs."));
        }
        match step(r) {
            0 => sse(Turn::tool(
                "task",
                json!({"description": "Find X", "prompt": "Find where X is.", "agent": "explore"}),
            )),
            _ => sse(Turn::text("Done.")),
        }
    }))
    .await;
    let (code, out, err) = setup.run(&server.url, &["-p", "where is X"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let child: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| first_text(r).contains("Task: Find X"))
        .collect();
    assert_eq!(child.len(), 2, "the child went on once");
    let kept = child[1].messages().last().unwrap().to_string();
    assert!(
        kept.contains("A SubagentStop hook keeps the turn going: check the tests too"),
        "{kept}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_auto_mode_a_hook_runs_in_the_sandbox() {
    if waypoint::safety::landlock_abi().is_none() {
        assert!(
            std::env::var_os("WAYPOINT_TEST_SANDBOX_REQUIRED").is_none(),
            "this kernel has no Landlock"
        );
        eprintln!("skipped the sandboxed hook test: this kernel has no Landlock");
        return;
    }
    // A HOME outside the temp folder (which the sandbox lets commands
    // write), and a temp folder of the run's own.
    let home = support::sandbox::outside_hidden("home-");
    let tmp = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[[hooks.PreToolUse]]\ncommand = \"echo pwned >> \\\"$HOME/.bashrc\\\"\"\n",
    )
    .unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("bash", json!({"command": "echo hi"}))),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, Anthropic::MODEL);
    cmd.env("WAYPOINT_CONFIG", home.path().join("config.toml"))
        .env("WAYPOINT_APPROVAL", "auto")
        .env("TMPDIR", tmp.path())
        .args(["-p", "say hi"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !home.path().join(".bashrc").exists(),
        "the hook could not write outside the sandbox"
    );
    assert!(
        err.contains("PreToolUse hook"),
        "the failure is told: {err}"
    );
}

/// A project whose `.claude/settings.json` holds `settings` and whose
/// `.claude/hooks/check.sh` holds `script`, with a HOME outside the folders
/// the sandbox hides; `None` (said on stderr) where the kernel has no
/// Landlock, and a failure there when the sandbox tests are required.
struct HookProject {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    script: PathBuf,
}

fn hook_project(what: &str, settings: &Value, script: &str) -> Option<HookProject> {
    if waypoint::safety::landlock_abi().is_none() {
        assert!(
            std::env::var_os("WAYPOINT_TEST_SANDBOX_REQUIRED").is_none(),
            "this kernel has no Landlock"
        );
        eprintln!("SKIPPED {what}: this kernel has no Landlock");
        return None;
    }
    let home = support::sandbox::outside_hidden("home-");
    let ws = tempfile::tempdir().unwrap();
    let hooks = ws.path().join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let path = hooks.join("check.sh");
    std::fs::write(&path, script).unwrap();
    std::fs::write(
        ws.path().join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    Some(HookProject {
        home,
        ws,
        script: path,
    })
}

impl HookProject {
    /// Approves the project's hooks, then runs `-p go` in approval `mode`
    /// against `server`: its exit code, stdout and stderr.
    async fn approve_and_run(
        &self,
        server: &FakeServer<Anthropic>,
        mode: &str,
    ) -> (i32, String, String) {
        let run = |args: &[&str]| {
            let mut cmd = cli_support::on_loopback(
                self.home.path(),
                self.ws.path(),
                &server.url,
                Anthropic::MODEL,
            );
            cmd.env("WAYPOINT_APPROVAL", mode).args(args);
            cmd
        };
        let (code, _, err) = cli_support::output(&mut run(&["hooks", "approve"])).await;
        assert_eq!(code, 0, "{err}");
        cli_support::output(&mut run(&["-p", "go"])).await
    }
}

/// An approved project hook runs a script in the workspace: in auto-edit
/// the model's rewrite of it is asked (headless: nobody answers, so it is
/// refused), and the hook runs in the sandbox, where its write outside
/// the workspace fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_project_hooks_script_is_asked_before_a_rewrite_and_runs_sandboxed() {
    let original = "echo checked >> \"$HOME/.bashrc\"\nexit 0\n";
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh"}
    ]}]}});
    let Some(project) = hook_project("the project hook sandbox test", &settings, original) else {
        return;
    };
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "write_file",
            json!({"path": ".claude/hooks/check.sh", "content": "touch \"$HOME/pwned\"\n"}),
        )),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    let (code, out, err) = project.approve_and_run(&server, "auto-edit").await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(&project.script).unwrap(),
        original,
        "the hook's script was rewritten unasked: {}\n{err}",
        last_said(&server)
    );
    let said = last_said(&server);
    assert!(said.contains("nobody can approve it"), "{said}");
    let home = project.home.path();
    assert!(
        !home.join(".bashrc").exists(),
        "the project hook ran outside the sandbox"
    );
    assert!(!home.join("pwned").exists());
}

/// The hook-script guard is a stage of its own: a `PreToolUse` hook that
/// allows every call does not let the model rewrite an approved hook's
/// script unasked (the hook's allow once skipped the question), and a
/// script a hook names but that does not exist yet is asked about too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_allow_does_not_let_the_model_rewrite_a_hook_script() {
    let allow = r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#;
    let settings = json!({"hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": allow}]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh"},
            {"type": "command", "command": "bash .claude/hooks/later.sh || true"}
        ]}]
    }});
    let Some(project) = hook_project("the hook-script guard test", &settings, "exit 0\n") else {
        return;
    };
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "write_file",
            json!({"path": ".claude/hooks/check.sh", "content": "touch \"$HOME/pwned\"\n"}),
        )),
        1 => sse(Turn::tool(
            "write_file",
            json!({"path": ".claude/hooks/later.sh", "content": "touch \"$HOME/pwned\"\n"}),
        )),
        2 => sse(Turn::tool(
            "write_file",
            json!({"path": "notes.txt", "content": "allowed\n"}),
        )),
        _ => sse(Turn::text("Done.")),
    }))
    .await;
    // In ask mode, every write would be asked anyway: the hook's allow is
    // what lets notes.txt through.
    let (code, out, err) = project.approve_and_run(&server, "ask").await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    let result = |i: usize| requests[i].last_tool_results()[0]["content"].to_string();
    assert_eq!(
        std::fs::read_to_string(&project.script).unwrap(),
        "exit 0\n",
        "the hook's script was rewritten: {}",
        result(1)
    );
    assert!(result(1).contains("nobody can approve it"), "{}", result(1));
    let ws = project.ws.path();
    assert!(
        !ws.join(".claude/hooks/later.sh").exists(),
        "a script a hook names was created unasked: {}",
        result(2)
    );
    assert!(result(2).contains("nobody can approve it"), "{}", result(2));
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "allowed\n",
        "the hook's allow runs an ordinary write unasked: {}",
        result(3)
    );
}
