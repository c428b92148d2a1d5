//! The `bash` tool: runs `bash -c` in the workspace in a session of its own.
//! Invariants: when `run` returns (or its future is dropped) the whole
//! process group has been sent SIGKILL and so has every process that left
//! it (job control, `setsid`, daemons; see [`super::procs`]), so nothing
//! the command started outlives the call; the command has no controlling
//! terminal (its own session, stdin `/dev/null`), so it can neither draw
//! on, reconfigure nor prompt on the user's terminal; it never inherits an
//! API key (`*_API_KEY`) from our environment; and at most `LIVE_FACTOR` ×
//! `output_cap` bytes of live output are forwarded.

use std::process::ExitStatus;
use std::time::Duration;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{TypedTool, held, parse};
use super::procs::{self, Sweep};
use super::shell::{GroupGuard, spawn_shell};
use super::{
    Access, Failure, Refuser, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutcome, ToolOutput,
    ToolSpec, ToolSummary, summary_line,
};
use crate::safety::Verdict;

mod stream;
mod terminal;

use stream::{End, Streams};

/// The `bash` tool.
pub struct Bash;

/// A `bash` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashArgs {
    // The command line, run with `bash -c` in the workspace.
    #[serde(alias = "cmd")]
    pub command: String,
    // Seconds before the command is killed (whole seconds, at least 1).
    pub timeout_secs: Option<u64>,
    /// start it as a background job (a server, a watcher) and return at once; read it with job_output, stop it with job_kill
    pub run_in_background: Option<bool>,
}

impl TypedTool for Bash {
    type Args = BashArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "bash",
            "Run a shell command in the workspace (bash -c). Returns stdout+stderr and the exit code; \
long output keeps head and tail. Default timeout 120 s, max 600.",
            schema,
            Access::Exec,
        )
    }
    fn target_of<'v>(&self, args: &BashArgs, input: &'v Value) -> Target<'v> {
        Target::Command(held(input, &args.command))
    }
    fn summary_of(&self, args: Option<&BashArgs>) -> ToolSummary {
        let command = args.map_or("", |a| a.command.as_str());
        ToolSummary {
            line: summary_line(command.lines().next().unwrap_or("")),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: BashArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if args.run_in_background == Some(true) {
                return background(&args, &ctx.env, ctx.host.jobs());
            }
            run_or_move(&args, &ctx.env, ctx.host.jobs()).await
        })
    }
}

/// Starts a `bash` call as a background job (checked as any call is).
fn background(
    args: &BashArgs,
    env: &ToolEnv<'_>,
    jobs: Option<&std::sync::Arc<super::jobs::Jobs>>,
) -> ToolOutput {
    let (command, _) = match check_call(args, env) {
        Ok(call) => call,
        Err(refused) => return *refused,
    };
    let Some(jobs) = jobs else {
        return ToolOutput::error(
            "background jobs are not available here; run it without run_in_background",
        );
    };
    match jobs.start(command, env) {
        Ok(job) => ToolOutput::ok(format!(
            "Started background job {} (pid {}). Read its output with job_output {{\"id\": {}}}; stop it with job_kill {{\"id\": {}}}. You are told when it ends.",
            job.id, job.pid, job.id, job.id
        )),
        Err(e) => ToolOutput::error(e),
    }
}

/// Runs a `bash` tool call in the foreground, to its end or its timeout.
pub async fn run(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<BashArgs>(input) {
        Ok(args) => run_or_move(&args, env, None).await,
        Err(why) => why.into_output(),
    }
}

/// Runs a `bash` tool call; with `jobs`, a command still running at
/// `auto_background_after` becomes one of them (its group, pipes and
/// output so far handed over) and the call returns.
pub async fn run_or_move(
    args: &BashArgs,
    env: &ToolEnv<'_>,
    jobs: Option<&std::sync::Arc<super::jobs::Jobs>>,
) -> ToolOutput {
    let (command, timeout) = match check_call(args, env) {
        Ok(call) => call,
        Err(refused) => return *refused,
    };
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("The command was not started.", "");
    }
    // Approved (or yolo), so not sandboxed: the editor's terminal if it
    // offers one (`acp_terminal = "editor"`). Never as a job.
    if let Some(term) = terminal::for_call(env) {
        return terminal::run(term, command, timeout, env).await;
    }
    // Prepared here (it allocates and opens the writable folders), applied
    // in the child between fork and exec.
    let confinement = match env.config.sandbox.as_ref().filter(|_| env.sandboxed) {
        Some(sandbox) => match sandbox.confinement_of(env.read_only, env.narrowed) {
            Ok(c) => Some(c),
            Err(e) => return ToolOutput::error(format!("the command was not run: {e}")),
        },
        None => None,
    };
    let inside = if confinement.is_some() {
        " in the sandbox"
    } else {
        ""
    };
    procs::become_subreaper();
    let mut sweep = Sweep::new();
    let mut child = match spawn_shell(command, env, &sweep.token, confinement.as_deref()) {
        Ok(child) => child,
        Err(e) => {
            return ToolOutput::error(format!(
                "could not start `bash -c` in {}{inside}: {e}",
                env.workspace.root().display()
            ));
        }
    };
    // setsid() makes the shell the leader of its session and process
    // group: both ids are its pid.
    let pid = Some(child.id());
    sweep.session = pid;
    sweep.shell = pid;
    let mut group = GroupGuard::new(pid, sweep);
    let mut streams = Streams::new(&mut child, env);
    let background_at = jobs.and(env.config.bash.auto_background);
    let (end, status) = streams
        .until_end(&mut child, env, timeout, background_at)
        .await;
    if let (End::Background, Some(jobs)) = (&end, jobs) {
        return moved(
            jobs,
            command,
            child,
            group,
            streams.handover(),
            background_at,
        );
    }
    // Kill the whole group first (the shell is still unreaped on timeout or
    // cancel, so the group id cannot have been reused), then reap.
    group.kill_group();
    if status.is_none() {
        // After SIGKILL this returns promptly; the error case only means the
        // child was already reaped.
        let _ = child.wait().await;
    }
    // Then whatever left the group (job control, setsid, daemons), so no
    // escaped process holds the pipes open either.
    group.sweep().await;
    let output = streams.drain().await;
    outcome(end, output, timeout, env)
}

/// A command still running at `after` made a job: what the model reads.
fn moved(
    jobs: &std::sync::Arc<super::jobs::Jobs>,
    command: &str,
    child: crate::tools::spawn::Child,
    group: GroupGuard,
    handover: super::shell::Handover,
    after: Option<Duration>,
) -> ToolOutput {
    let so_far = handover.shown.len() + handover.pending.len();
    let shown = if handover.shown.is_empty() {
        "(no output yet)".to_string()
    } else {
        handover.shown.clone()
    };
    let job = jobs.adopt(command, child, group, handover);
    ToolOutput::ok(format!(
        "{shown}\n[Still running after {}: moved to background job {} (pid {}). Read what it prints next with job_output {{\"id\": {}, \"since\": {so_far}}}; stop it with job_kill {{\"id\": {}}}. You are told when it ends.]",
        fmt_duration(after.unwrap_or_default()),
        job.id,
        job.pid,
        job.id,
        job.id
    ))
}

/// The command and its timeout from the call's input; `Err` is the output
/// (boxed, it is large) that refuses the call (no command, an empty one, one a `deny` rule
/// names, a bad timeout).
fn check_call<'v>(
    args: &'v BashArgs,
    env: &ToolEnv<'_>,
) -> Result<(&'v str, Duration), Box<ToolOutput>> {
    let command = args.command.as_str();
    if command.trim().is_empty() {
        return Err(Box::new(ToolOutput::error("`command` is empty")));
    }
    if let Verdict::Denied { rule, command } = env.config.rules.check(command) {
        let message = crate::safety::rules::deny_message(&rule, &command);
        return Err(Box::new(ToolOutput::refused(Refuser::Rules, message)));
    }
    let timeout = match args.timeout_secs {
        Some(0) => {
            return Err(Box::new(ToolOutput::error(
                "`timeout_secs` must be at least 1",
            )));
        }
        Some(secs) => Duration::from_secs(secs).min(env.config.bash.max_timeout),
        None => env.config.bash.default_timeout,
    };
    Ok((command, timeout))
}

/// Whether a command's output says a write was refused (what a sandbox
/// with nothing writable makes of one).
fn refused_a_write(content: &str) -> bool {
    [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
    ]
    .iter()
    .any(|words| content.contains(words))
}

/// The call's result: how it ended, with what it printed.
fn outcome(end: End, output: String, timeout: Duration, env: &ToolEnv<'_>) -> ToolOutput {
    match end {
        End::Exited(st) => {
            let mut content = if output.is_empty() {
                "(no output)".to_string()
            } else {
                output
            };
            if !content.ends_with('\n') {
                content.push('\n');
            }
            content.push_str(&status_line(st));
            if env.read_only && env.sandboxed && refused_a_write(&content) {
                // Plan mode: never run outside; the model is told why.
                content.push_str(&crate::events::plan_mode_refusal(
                    "commands run in a sandbox where nothing is writable, so this one could not write",
                ));
                content.push('\n');
            }
            // The sandbox stopped it (a refusal naming a path outside what
            // it may write): said in the outcome, for the gate to ask.
            let blocked = env
                .config
                .sandbox
                .as_ref()
                .filter(|_| env.sandboxed && !env.read_only)
                .map(|sandbox| blocked(&content, sandbox, env));
            let outcome = match blocked.flatten() {
                Some(what) => ToolOutcome::SandboxBlocked { what },
                None => ToolOutcome::Ok,
            };
            ToolOutput {
                exit_code: st.code(),
                ..ToolOutput::ended(content, outcome)
            }
        }
        End::TimedOut => ToolOutput::failed(
            Failure::TimedOut,
            format!(
                "command timed out after {} (process group killed){}",
                fmt_duration(timeout),
                so_far(&output)
            ),
        ),
        End::Cancelled => ToolOutput::interrupted("The process group was killed.", &output),
        // Handled before the group is killed; only without jobs to move to.
        End::Background => ToolOutput::error(format!(
            "the command could not be moved to the background{}",
            so_far(&output)
        )),
        End::WaitFailed(e) => ToolOutput::error(format!(
            "waiting for `bash -c` failed: {e}{}",
            so_far(&output)
        )),
    }
}

/// What the sandbox stopped: narrowed to a plan item's files, a write
/// outside them (with the hint naming the item's scope) first; else as
/// [`crate::safety::blocked::blocked`] reads it.
fn blocked(content: &str, sandbox: &crate::safety::Sandbox, env: &ToolEnv<'_>) -> Option<String> {
    let root = env.workspace.root();
    let narrowed = env.narrowed.and_then(|narrowing| {
        crate::safety::narrowed::blocked_by_narrowing(content, sandbox, narrowing, root)
            .map(|what| format!("{what} ({})", narrowing.hint))
    });
    narrowed.or_else(|| crate::safety::blocked::blocked(content, sandbox).map(str::to_string))
}

fn so_far(output: &str) -> String {
    if output.is_empty() {
        "; no output".to_string()
    } else {
        format!("; output so far:\n{output}")
    }
}

fn status_line(st: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(code), _) => format!("[exit code: {code}]"),
        (None, Some(sig)) => format!("[killed by signal {sig}]"),
        (None, None) => "[exit status unknown]".to_string(),
    }
}

fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::shell::is_secret;
    use crate::tools::test_support::Fixture;
    use serde_json::json;

    fn fixture() -> Fixture {
        Fixture::new()
    }

    impl Fixture {
        async fn run(&self, input: Value) -> ToolOutput {
            run(&input, &self.env()).await
        }
    }

    #[tokio::test]
    async fn output_and_exit_code() {
        let f = fixture();
        let out = f.run(json!({"command": "echo hello; echo world"})).await;
        assert!(!out.is_error());
        assert_eq!(out.content, "hello\nworld\n[exit code: 0]");
    }

    #[tokio::test]
    async fn runs_in_the_workspace_root() {
        let f = fixture();
        let out = f.run(json!({"command": "pwd -P"})).await;
        assert_eq!(
            out.content,
            format!("{}\n[exit code: 0]", f.ws.root().display())
        );
    }

    #[tokio::test]
    async fn non_zero_exit_is_not_an_error() {
        let f = fixture();
        let out = f.run(json!({"command": "printf oops; exit 3"})).await;
        assert!(!out.is_error());
        assert_eq!(out.content, "oops\n[exit code: 3]");
        assert_eq!(out.exit_code, Some(3));
    }

    #[tokio::test]
    async fn stderr_is_captured() {
        let f = fixture();
        let out = f.run(json!({"command": "echo to-err >&2; exit 1"})).await;
        assert_eq!(out.content, "to-err\n[exit code: 1]");
    }

    #[tokio::test]
    async fn empty_output_is_marked() {
        let f = fixture();
        let out = f.run(json!({"command": "true"})).await;
        assert_eq!(out.content, "(no output)\n[exit code: 0]");
    }

    #[tokio::test]
    async fn signal_death_is_reported() {
        let f = fixture();
        let out = f.run(json!({"command": "kill -9 $$"})).await;
        assert!(!out.is_error());
        assert!(
            out.content.ends_with("[killed by signal 9]"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn stdin_is_null() {
        let f = fixture();
        let out = f.run(json!({"command": "cat; echo done"})).await;
        assert_eq!(out.content, "done\n[exit code: 0]");
    }

    #[tokio::test]
    async fn output_is_capped_with_marker() {
        let mut f = fixture();
        f.config.output_cap = 100;
        let out = f
            .run(json!({"command": "for i in $(seq 1 1000); do echo line$i; done"}))
            .await;
        assert!(!out.is_error());
        assert!(out.content.starts_with("line1\nline2\n"), "{}", out.content);
        assert!(out.content.contains("bytes truncated"), "{}", out.content);
        assert!(
            out.content.ends_with("line1000\n[exit code: 0]"),
            "{}",
            out.content
        );
        assert!(out.content.len() < 200);
    }

    #[tokio::test]
    async fn timeout_kills_the_command() {
        let f = fixture();
        let start = std::time::Instant::now();
        let out = f
            .run(json!({"command": "echo started; sleep 30", "timeout_secs": 1}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content
                .starts_with("Error: command timed out after 1 s"),
            "{}",
            out.content
        );
        assert!(out.content.contains("started"), "{}", out.content);
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[tokio::test]
    async fn default_timeout_comes_from_config() {
        let mut f = fixture();
        f.config.bash.default_timeout = Duration::from_millis(300);
        let out = f.run(json!({"command": "sleep 30"})).await;
        assert_eq!(
            out.content,
            "Error: command timed out after 0.3 s (process group killed); no output"
        );
    }

    #[tokio::test]
    async fn timeout_is_clamped_to_the_maximum() {
        let mut f = fixture();
        f.config.bash.max_timeout = Duration::from_millis(300);
        let out = f
            .run(json!({"command": "sleep 30", "timeout_secs": 500}))
            .await;
        assert!(
            out.content
                .starts_with("Error: command timed out after 0.3 s"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn background_process_holding_the_pipe_does_not_hang() {
        let f = fixture();
        let start = std::time::Instant::now();
        let out = f.run(json!({"command": "sleep 30 & echo main done"})).await;
        assert!(!out.is_error());
        assert_eq!(out.content, "main done\n[exit code: 0]");
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[tokio::test]
    async fn bad_arguments_are_errors() {
        let f = fixture();
        let out = f.run(json!({})).await;
        assert_eq!(out.content, "Error: missing required argument `command`");
        let out = f.run(json!({"command": 5})).await;
        assert_eq!(
            out.content,
            "Error: `command` must be a string, got a number"
        );
        let out = f.run(json!({"command": "  "})).await;
        assert_eq!(out.content, "Error: `command` is empty");
        let out = f.run(json!({"command": "true", "timeout_secs": 0})).await;
        assert_eq!(out.content, "Error: `timeout_secs` must be at least 1");
        // A number sent as a string is read as the number.
        let out = f
            .run(json!({"command": "true", "timeout_secs": "10"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
        let out = f
            .run(json!({"command": "true", "timeout_secs": "ten"}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content
                .contains("`timeout_secs` must be a non-negative integer")
        );
        let out = f.run(json!({"command": "true", "timeout_secs": -1})).await;
        assert!(out.is_error());
    }

    #[tokio::test]
    async fn already_cancelled_does_not_start() {
        let f = fixture();
        f.cancel.cancel();
        let out = f.run(json!({"command": "touch marker"})).await;
        assert_eq!(out.outcome, ToolOutcome::Interrupted { partial: false });
        assert!(out.content.starts_with("Error: interrupted by the user"));
        assert!(!f.ws.root().join("marker").exists());
    }

    #[tokio::test]
    async fn live_output_is_streamed() {
        let f = fixture();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let out = run(
            &json!({"command": "echo a; echo b >&2"}),
            &f.env_with_output(&tx),
        )
        .await;
        drop(tx);
        let mut streamed = String::new();
        while let Some(chunk) = rx.recv().await {
            streamed.push_str(&chunk);
        }
        assert!(
            streamed.contains("a\n") && streamed.contains("b\n"),
            "{streamed}"
        );
        assert!(out.content.starts_with(&streamed));
    }

    #[tokio::test]
    async fn live_output_is_bounded() {
        let mut f = fixture();
        f.config.output_cap = 100;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let out = run(
            &json!({"command": "yes | head -c 1000000"}),
            &f.env_with_output(&tx),
        )
        .await;
        drop(tx);
        let mut chunks = Vec::new();
        while let Some(chunk) = rx.recv().await {
            chunks.push(chunk);
        }
        let notice = "\n[live output truncated; the full result is capped at 100 bytes]\n";
        assert_eq!(chunks.last().map(String::as_str), Some(notice));
        let forwarded: String = chunks[..chunks.len() - 1].concat();
        assert_eq!(forwarded, "y\n".repeat(200), "exactly 4 × output_cap bytes");
        assert!(!out.is_error());
        assert!(out.content.contains("bytes truncated"), "{}", out.content);
        assert!(
            out.content.ends_with("y\n[exit code: 0]"),
            "{}",
            out.content
        );
    }

    #[test]
    fn secret_names() {
        use std::ffi::OsStr;
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "my_api_key",
        ] {
            assert!(is_secret(OsStr::new(name)), "{name}");
        }
        for name in ["PATH", "HOME", "API_KEYS", "KEY", "RAPID_API_KEYRING"] {
            assert!(!is_secret(OsStr::new(name)), "{name}");
        }
    }

    /// Re-runs this test in a fresh test binary whose environment holds API
    /// keys (setting them here would race the other test threads); there the
    /// command's `env` must show none of them.
    #[tokio::test]
    async fn api_keys_do_not_reach_the_command() {
        const CHILD: &str = "WAYPOINT_TEST_SCRUB_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let f = fixture();
            let out = f.run(json!({"command": "env"})).await;
            assert!(!out.is_error(), "{}", out.content);
            assert!(
                out.content.contains("WAYPOINT_TEST_VISIBLE=kept"),
                "{}",
                out.content
            );
            assert!(!out.content.contains("s3cret"), "{}", out.content);
            assert!(!out.content.contains("_API_KEY="), "{}", out.content);
            return;
        }
        let (_, module) = module_path!().split_once("::").unwrap();
        let name = format!("{module}::api_keys_do_not_reach_the_command");
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name.as_str(), "--exact", "--test-threads=1"])
            .env(CHILD, "1")
            .env("ANTHROPIC_API_KEY", "s3cret-anthropic")
            .env("OPENAI_API_KEY", "s3cret-openai")
            .env("SOME_SERVICE_API_KEY", "s3cret-service")
            .env("lower_api_key", "s3cret-lower")
            .env("WAYPOINT_TEST_VISIBLE", "kept")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&child.stdout);
        let stderr = String::from_utf8_lossy(&child.stderr);
        assert!(child.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("1 passed"), "the child ran it: {stdout}");
    }
}
