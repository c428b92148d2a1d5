//! The `bash` tool: runs `bash -c` in the workspace in a session of its own.
//! Invariants: when `run` returns (or its future is dropped) the whole
//! process group has been sent SIGKILL and so has every process that left
//! it (job control, `setsid`, daemons; see [`super::procs`]), so nothing
//! the command started outlives the call; the command has no controlling
//! terminal (its own session, stdin `/dev/null`), so it can neither draw
//! on, reconfigure nor prompt on the user's terminal; it never inherits an
//! API key (`*_API_KEY`) from our environment; and at most `LIVE_FACTOR` ×
//! `output_cap` bytes of live output are forwarded.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Sleep;

use super::procs::{self, Sweep};
use super::{
    Access, Failure, Refuser, Target, Tool, ToolCtx, ToolDetail, ToolEnv, ToolOutcome, ToolOutput,
    ToolSpec, ToolSummary, cap_output, opt_u64_arg, str_arg, str_or_empty, summary_line,
};
use crate::safety::Verdict;

/// How long output is still read after the shell exited while a background
/// process keeps the pipes open.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// How long pipes are drained after the group was killed.
const DRAIN_LIMIT: Duration = Duration::from_millis(100);

/// Output kept in memory before the middle is dropped (the model only ever
/// sees head and tail anyway).
const MIN_BUFFER: usize = 1 << 20;

/// Live output forwarded, as a multiple of `output_cap`, before the stream
/// is cut with a notice.
const LIVE_FACTOR: usize = 4;

/// Variables never passed to the command, besides any `*_API_KEY`.
const SECRET_VARS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// Whether the variable `name` holds a secret the command must not see.
fn is_secret(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    SECRET_VARS.contains(&name.as_str()) || name.ends_with("_API_KEY")
}

/// The `bash` tool.
pub struct Bash;

impl Tool for Bash {
    fn spec(&self) -> ToolSpec {
        ToolSpec::builtin(
            "bash",
            "Run a shell command in the workspace (bash -c). Returns stdout+stderr and the exit code; \
long output keeps head and tail. Default timeout 120 s, max 600.",
            serde_json::json!({
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout_secs": {"type": "integer"}},
                "required": ["command"]
            }),
            Access::Exec,
        )
    }
    fn target<'v>(&self, input: &'v Value) -> Target<'v> {
        Target::Command(str_or_empty(input, "command"))
    }
    fn summarize(&self, input: &Value) -> ToolSummary {
        ToolSummary {
            line: summary_line(str_or_empty(input, "command").lines().next().unwrap_or("")),
            detail: ToolDetail::Output,
        }
    }
    fn run<'a>(&'a self, input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { run(input, &ctx.env).await })
    }
}

/// Runs a `bash` tool call.
pub async fn run(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    let command = match str_arg(input, "command") {
        Ok(c) => c,
        Err(e) => return ToolOutput::error(e),
    };
    if command.trim().is_empty() {
        return ToolOutput::error("`command` is empty");
    }
    if let Verdict::Denied { rule, command } = env.config.rules.check(command) {
        return ToolOutput::refused(
            Refuser::Rules,
            crate::safety::rules::deny_message(&rule, &command),
        );
    }
    let timeout = match opt_u64_arg(input, "timeout_secs") {
        Ok(Some(0)) => return ToolOutput::error("`timeout_secs` must be at least 1"),
        Ok(Some(secs)) => Duration::from_secs(secs).min(env.config.bash_max_timeout),
        Ok(None) => env.config.bash_default_timeout,
        Err(e) => return ToolOutput::error(e),
    };
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("The command was not started.");
    }

    // Prepared here (it allocates and opens the writable folders), applied
    // in the child between fork and exec.
    let confinement = match env.config.sandbox.as_ref().filter(|_| env.sandboxed) {
        Some(sandbox) => match sandbox.prepare() {
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
    let mut cmd = Command::new("bash");
    if let Some(session) = &env.config.session {
        cmd.env(procs::SESSION_VAR, session);
    }
    // Waypoint's pid, for the child to check it is still there.
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    cmd.arg("-c")
        .arg(command)
        .current_dir(env.workspace.root())
        .env(procs::CALL_VAR, &sweep.token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and only
    // makes raw syscalls (setsid(2), then prctl, landlock_restrict_self and
    // seccomp in `Confinement::apply`), which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            // A new session and process group led by the shell, with no
            // controlling terminal: /dev/tty cannot be opened.
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The shell dies with Waypoint (kill -9 included); if Waypoint
            // died already, before this took effect, it never starts.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            match &confinement {
                Some(c) => c.apply(),
                None => Ok(()),
            }
        });
    }
    for name in SECRET_VARS {
        cmd.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        if is_secret(&name) {
            cmd.env_remove(name);
        }
    }
    let mut child = match cmd.spawn() {
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
    let pid = child.id().and_then(|pid| i32::try_from(pid).ok());
    sweep.session = pid;
    sweep.shell = pid;
    let mut group = GroupGuard {
        pgid: pid,
        sweep,
        swept: false,
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out_dec = Utf8Stream::default();
    let mut err_dec = Utf8Stream::default();
    let mut out_buf = [0u8; 8192];
    let mut err_buf = [0u8; 8192];
    let mut sink = Sink {
        collected: Collected::new(env.config.output_cap),
        live: Live::new(env.output, env.config.output_cap),
    };

    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut grace: Option<std::pin::Pin<Box<Sleep>>> = None;
    let mut status: Option<ExitStatus> = None;

    let end = loop {
        if stdout.is_none()
            && stderr.is_none()
            && let Some(st) = status
        {
            break End::Exited(st);
        }
        tokio::select! {
            biased;
            _ = env.cancel.cancelled() => break End::Cancelled,
            _ = &mut deadline => break End::TimedOut,
            r = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => match r {
                Ok(n) if n > 0 => sink.emit(&out_dec.push(&out_buf[..n])),
                _ => {
                    sink.emit(&out_dec.finish());
                    stdout = None;
                }
            },
            r = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => match r {
                Ok(n) if n > 0 => sink.emit(&err_dec.push(&err_buf[..n])),
                _ => {
                    sink.emit(&err_dec.finish());
                    stderr = None;
                }
            },
            r = child.wait(), if status.is_none() => match r {
                Ok(st) => {
                    status = Some(st);
                    grace = Some(Box::pin(tokio::time::sleep(EXIT_GRACE)));
                }
                Err(e) => break End::WaitFailed(e),
            },
            _ = sleep_opt(&mut grace) => {
                if let Some(st) = status {
                    break End::Exited(st);
                }
            }
        }
    };

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
    // Whatever the dead processes left in the pipes; bounded in case one
    // escaped every sweep and still holds a pipe open.
    let _ = tokio::time::timeout(DRAIN_LIMIT, async {
        while stdout.is_some() || stderr.is_some() {
            tokio::select! {
                r = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => match r {
                    Ok(n) if n > 0 => sink.emit(&out_dec.push(&out_buf[..n])),
                    _ => stdout = None,
                },
                r = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => match r {
                    Ok(n) if n > 0 => sink.emit(&err_dec.push(&err_buf[..n])),
                    _ => stderr = None,
                },
            }
        }
    })
    .await;
    sink.emit(&out_dec.finish());
    sink.emit(&err_dec.finish());
    let output = sink.collected.finish();

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
            // The sandbox stopped it (a refusal naming a path outside what
            // it may write): said in the outcome, for the gate to ask.
            let blocked = env
                .config
                .sandbox
                .as_ref()
                .filter(|_| env.sandboxed)
                .and_then(|sandbox| crate::safety::sandbox::blocked(&content, sandbox));
            let outcome = match blocked {
                Some(what) => ToolOutcome::SandboxBlocked {
                    what: what.to_string(),
                },
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
        End::Cancelled => {
            ToolOutput::interrupted(format!("The process group was killed{}", so_far(&output)))
        }
        End::WaitFailed(e) => ToolOutput::error(format!(
            "waiting for `bash -c` failed: {e}{}",
            so_far(&output)
        )),
    }
}

/// Where output goes: the result, and the live channel if any.
struct Sink<'a> {
    collected: Collected,
    live: Live<'a>,
}

impl Sink<'_> {
    fn emit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.collected.push(text);
        self.live.send(text);
    }
}

/// Forwards live output, at most `LIVE_FACTOR` × `cap` bytes, then one notice
/// (a command like `yes` would otherwise flood the channel until it times
/// out).
struct Live<'a> {
    tx: Option<&'a UnboundedSender<String>>,
    cap: usize,
    left: usize,
}

impl<'a> Live<'a> {
    fn new(tx: Option<&'a UnboundedSender<String>>, cap: usize) -> Self {
        Self {
            tx,
            cap,
            left: cap.saturating_mul(LIVE_FACTOR),
        }
    }

    fn send(&mut self, text: &str) {
        let Some(tx) = self.tx else {
            return;
        };
        // The receiver may be gone; the output is still collected.
        if text.len() <= self.left {
            self.left -= text.len();
            let _ = tx.send(text.to_string());
            return;
        }
        let cut = text.floor_char_boundary(self.left);
        if cut > 0 {
            let _ = tx.send(text[..cut].to_string());
        }
        let _ = tx.send(format!(
            "\n[live output truncated; the full result is capped at {} byte{}]\n",
            self.cap,
            if self.cap == 1 { "" } else { "s" }
        ));
        // Nothing more is forwarded.
        self.tx = None;
    }
}

enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    WaitFailed(std::io::Error),
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

/// Reads from the pipe if it is still open; pending forever otherwise (the
/// `select!` precondition keeps that branch disabled).
async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(p) => p.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(sleep: &mut Option<std::pin::Pin<Box<Sleep>>>) {
    match sleep {
        Some(s) => s.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Sends SIGKILL to the process group, then to every process of the call
/// that left it, when asked or when dropped (e.g. the tool future is
/// aborted), so no descendant outlives the call.
struct GroupGuard {
    pgid: Option<i32>,
    sweep: Sweep,
    /// The call's end was swept already; the drop has nothing left to do.
    swept: bool,
}

impl GroupGuard {
    fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid.take()
            && pgid > 0
        {
            // SAFETY: kill(2) has no memory-safety preconditions; a negative
            // pid addresses the process group the shell leads (setsid).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }

    /// Kills and reaps what left the group; the drop then has nothing to do.
    async fn sweep(&mut self) {
        self.sweep.run_and_reap().await;
        self.swept = true;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_group();
        // Dropped part-way (interrupt, timeout): what the call left is swept here.
        if !self.swept {
            self.sweep.run();
        }
    }
}

/// Decodes a byte stream as UTF-8 without splitting characters across chunks;
/// invalid bytes become U+FFFD.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &after[bad..];
                        }
                        None => {
                            // Incomplete character at the end: wait for more.
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

/// Collects output in arrival order. Bounded in memory: past a limit only the
/// head and a sliding tail are kept, and `finish` renders exactly what
/// `cap_output` would have made of the whole text.
struct Collected {
    cap: usize,
    limit: usize,
    head: String,
    tail: String,
    omitted: usize,
    compacted: bool,
}

impl Collected {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            limit: cap.saturating_mul(4).max(MIN_BUFFER),
            head: String::new(),
            tail: String::new(),
            omitted: 0,
            compacted: false,
        }
    }

    fn keep(&self) -> usize {
        self.cap / 2
    }

    fn push(&mut self, text: &str) {
        if !self.compacted {
            self.head.push_str(text);
            if self.head.len() > self.limit {
                let split = self.head.floor_char_boundary(self.keep());
                self.tail = self.head.split_off(split);
                self.compacted = true;
                self.trim_tail();
            }
        } else {
            self.tail.push_str(text);
            if self.tail.len() > self.limit {
                self.trim_tail();
            }
        }
    }

    fn trim_tail(&mut self) {
        let start = self
            .tail
            .ceil_char_boundary(self.tail.len().saturating_sub(self.keep()));
        self.omitted += start;
        self.tail.drain(..start);
    }

    fn finish(mut self) -> String {
        if !self.compacted {
            return cap_output(&self.head, self.cap);
        }
        self.trim_tail();
        format!(
            "{}\n[… {} bytes truncated …]\n{}",
            self.head, self.omitted, self.tail
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
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
        f.config.bash_default_timeout = Duration::from_millis(300);
        let out = f.run(json!({"command": "sleep 30"})).await;
        assert_eq!(
            out.content,
            "Error: command timed out after 0.3 s (process group killed); no output"
        );
    }

    #[tokio::test]
    async fn timeout_is_clamped_to_the_maximum() {
        let mut f = fixture();
        f.config.bash_max_timeout = Duration::from_millis(300);
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
        let out = f
            .run(json!({"command": "true", "timeout_secs": "10"}))
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
        assert!(out.is_error() && out.was_interrupted(), "{out:?}");
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
    fn live_cut_keeps_characters_whole() {
        let drain = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>| {
            let mut chunks = Vec::new();
            while let Ok(chunk) = rx.try_recv() {
                chunks.push(chunk);
            }
            chunks
        };
        let notice = "\n[live output truncated; the full result is capped at 1 byte]\n";
        // Cap 1: 4 bytes are forwarded.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut live = Live::new(Some(&tx), 1);
        live.send("ab");
        live.send("é€");
        live.send("more");
        assert_eq!(drain(&mut rx), ["ab", "é", notice]);
        let mut live = Live::new(Some(&tx), 1);
        live.send("aaaé");
        live.send("x");
        assert_eq!(drain(&mut rx), ["aaa", notice]);
        let mut live = Live::new(Some(&tx), 1);
        live.send("abcd");
        live.send("e");
        assert_eq!(drain(&mut rx), ["abcd", notice]);
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

    #[test]
    fn utf8_stream_keeps_split_characters_whole() {
        let mut d = Utf8Stream::default();
        let bytes = "é€".as_bytes();
        assert_eq!(d.push(&bytes[..1]), "");
        assert_eq!(d.push(&bytes[1..3]), "é");
        assert_eq!(d.push(&bytes[3..]), "€");
        assert_eq!(d.push(&[0xff, b'x']), "\u{FFFD}x");
        assert_eq!(d.push(&[0xe2]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn collected_matches_cap_output_past_the_memory_limit() {
        let text: String = (0..200_000).map(|i| format!("{i}é\n")).collect();
        let mut c = Collected::new(1000);
        for piece in text.split_inclusive('\n') {
            c.push(piece);
        }
        assert!(c.compacted);
        assert_eq!(c.finish(), cap_output(&text, 1000));
    }
}
