//! A `bash` call run in the editor's terminal ([`EditorTerminal`]): only a
//! command that would not run in the sandbox (one the user approved, or
//! any in yolo mode), after every check `bash` makes. Its output is polled
//! into the call's live output and makes the result as Waypoint's own
//! runner would (capped, with its exit code). Invariants: the timeout and
//! an interrupt kill the command; the terminal is always released (if the
//! call's future is dropped, by a task of its own).

use std::sync::Arc;
use std::time::Duration;

use super::stream::Sink;
use super::{fmt_duration, so_far};
use crate::tools::editor::{EditorTerminal, TerminalExit, TerminalRun};
use crate::tools::{Failure, ToolEnv, ToolOutcome, ToolOutput, procs};

/// How often the terminal's output is read while the command runs.
pub(super) const POLL: Duration = Duration::from_millis(200);

/// Output the editor is asked to keep: the result only ever shows head and
/// tail, and the head is collected as it comes.
const KEPT: usize = 1 << 20;

/// How many bytes of a shifted output's beginning (the editor dropped
/// what came before) find where it overlaps the last one read, and at
/// most how many places where they are found are tried.
const OVERLAP: usize = 256;
const CANDIDATES: usize = 16;

/// The editor's terminal, if this call runs there: it offers one and the
/// command does not run in the sandbox.
pub(super) fn for_call(env: &ToolEnv<'_>) -> Option<Arc<dyn EditorTerminal>> {
    env.config.bash.editor.clone().filter(|_| !env.sandboxed)
}

/// How the watch of a terminal ended.
enum Watch {
    Exited(TerminalExit),
    TimedOut,
    Cancelled,
    Failed(String),
}

/// Runs `command` in the editor's terminal, to its end, its timeout or an
/// interrupt.
pub(super) async fn run(
    term: Arc<dyn EditorTerminal>,
    command: &str,
    timeout: Duration,
    env: &ToolEnv<'_>,
) -> ToolOutput {
    let mut vars = Vec::new();
    if let Some(session) = &env.config.session {
        vars.push((procs::SESSION_VAR.to_string(), session.clone()));
    }
    let request = TerminalRun {
        command,
        cwd: env.workspace.root(),
        env: vars,
        output_limit: KEPT.max(env.config.output_cap),
        call: env.call,
    };
    let id = match term.create(request).await {
        Ok(id) => id,
        Err(e) => {
            return ToolOutput::error(format!(
                "could not start the command in the editor's terminal: {e}"
            ));
        }
    };
    let mut held = Held {
        term: Some(term.clone()),
        id: id.clone(),
    };
    let mut sink = Sink::new(env);
    let mut seen = Seen::default();
    let watch = watch(&*term, &id, timeout, env, &mut sink, &mut seen).await;
    if !matches!(watch, Watch::Exited(_)) {
        let _ = term.kill(&id).await;
    }
    // What it printed last (after a kill: up to it).
    if let Ok(last) = term.output(&id).await {
        sink.emit(seen.new_part(&last.output));
    }
    let _ = term.release(&id).await;
    held.term = None;
    let output = sink.finish();
    match watch {
        Watch::Exited(exit) => ended(output, &exit),
        Watch::TimedOut => ToolOutput::failed(
            Failure::TimedOut,
            format!(
                "command timed out after {} (killed in the editor's terminal){}",
                fmt_duration(timeout),
                so_far(&output)
            ),
        ),
        Watch::Cancelled => {
            ToolOutput::interrupted("The command was killed in the editor's terminal.", &output)
        }
        Watch::Failed(e) => ToolOutput::error(format!(
            "the editor's terminal failed: {e} (the command was killed){}",
            so_far(&output)
        )),
    }
}

/// Polls the terminal's output into `sink` until the command ends, the
/// timeout passes or the call is cancelled.
async fn watch(
    term: &dyn EditorTerminal,
    id: &str,
    timeout: Duration,
    env: &ToolEnv<'_>,
    sink: &mut Sink<'_>,
    seen: &mut Seen,
) -> Watch {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let exited = term.wait(id);
    tokio::pin!(exited);
    // An editor that cannot wait is still read until its output says the end.
    let mut waiting = true;
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = env.cancel.cancelled() => return Watch::Cancelled,
            _ = &mut deadline => return Watch::TimedOut,
            r = &mut exited, if waiting => match r {
                Ok(exit) => return Watch::Exited(exit),
                Err(_) => waiting = false,
            },
            _ = tick.tick() => match term.output(id).await {
                Ok(now) => {
                    sink.emit(seen.new_part(&now.output));
                    if let Some(exit) = now.exit {
                        return Watch::Exited(exit);
                    }
                }
                Err(e) => return Watch::Failed(e),
            },
        }
    }
}

/// The result of a command that ended: its output and exit status, as
/// Waypoint's own runner reports them.
fn ended(output: String, exit: &TerminalExit) -> ToolOutput {
    let mut content = if output.is_empty() {
        "(no output)".to_string()
    } else {
        output
    };
    if !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(&match (exit.code, &exit.signal) {
        (Some(code), _) => format!("[exit code: {code}]"),
        (None, Some(signal)) => format!("[killed by signal {signal}]"),
        (None, None) => "[exit status unknown]".to_string(),
    });
    ToolOutput {
        exit_code: exit.code.and_then(|c| i32::try_from(c).ok()),
        ..ToolOutput::ended(content, ToolOutcome::Ok)
    }
}

/// The terminal's output read last: each read is the whole of what the
/// editor kept, and only what is new goes on.
#[derive(Default)]
struct Seen {
    last: String,
}

impl Seen {
    /// What `now` holds past the output read last. When the editor dropped
    /// the beginning, `now` starts inside what was read: it goes on where
    /// the two overlap (all of `now` if they do not).
    fn new_part<'o>(&mut self, now: &'o str) -> &'o str {
        let start = if now.starts_with(&self.last) {
            self.last.len()
        } else {
            let head = &now[..now.floor_char_boundary(OVERLAP)];
            self.last
                .match_indices(head)
                .take(CANDIDATES)
                .map(|(at, _)| at)
                .find(|at| !head.is_empty() && now.starts_with(&self.last[*at..]))
                .map_or(0, |at| self.last.len() - at)
        };
        self.last = now.to_string();
        &now[start..]
    }
}

/// The terminal until it is released: if the call's future is dropped
/// first, a task kills and releases it.
struct Held {
    term: Option<Arc<dyn EditorTerminal>>,
    id: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let (Some(term), Ok(runtime)) = (self.term.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let id = std::mem::take(&mut self.id);
        runtime.spawn(async move {
            let _ = term.kill(&id).await;
            let _ = term.release(&id).await;
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use futures_util::future::BoxFuture;
    use serde_json::json;

    use super::*;
    use crate::tools::editor::TerminalOutput;
    use crate::tools::test_support::Fixture;

    /// An editor's terminal that prints `pieces`, one per read of its
    /// output, then ends with `exit` (`None`: runs until killed).
    #[derive(Debug, Default)]
    struct Fake {
        pieces: Mutex<VecDeque<String>>,
        printed: Mutex<String>,
        exit: Option<TerminalExit>,
        killed: Mutex<bool>,
        calls: Mutex<Vec<String>>,
    }

    impl Fake {
        fn new(pieces: &[&str], exit: Option<u32>) -> Arc<Self> {
            Arc::new(Self {
                pieces: Mutex::new(pieces.iter().map(|p| p.to_string()).collect()),
                exit: exit.map(|code| TerminalExit {
                    code: Some(code),
                    signal: None,
                }),
                ..Self::default()
            })
        }

        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }

        fn log(&self, call: String) {
            self.calls.lock().unwrap().push(call);
        }
    }

    impl EditorTerminal for Fake {
        fn create<'a>(&'a self, run: TerminalRun<'a>) -> BoxFuture<'a, Result<String, String>> {
            self.log(format!("create {} in {}", run.command, run.cwd.display()));
            Box::pin(async { Ok("term-1".to_string()) })
        }
        fn output<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>> {
            assert_eq!(id, "term-1");
            let mut printed = self.printed.lock().unwrap();
            if let Some(piece) = self.pieces.lock().unwrap().pop_front() {
                printed.push_str(&piece);
            }
            let exit = if *self.killed.lock().unwrap() {
                Some(TerminalExit {
                    code: None,
                    signal: Some("SIGKILL".to_string()),
                })
            } else {
                self.exit
                    .clone()
                    .filter(|_| self.pieces.lock().unwrap().is_empty())
            };
            let out = TerminalOutput {
                output: printed.clone(),
                truncated: false,
                exit,
            };
            Box::pin(async move { Ok(out) })
        }
        fn wait<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>> {
            // Read from the output instead.
            Box::pin(std::future::pending())
        }
        fn kill<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
            self.log("kill".to_string());
            *self.killed.lock().unwrap() = true;
            Box::pin(async { Ok(()) })
        }
        fn release<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
            self.log("release".to_string());
            Box::pin(async { Ok(()) })
        }
    }

    fn with(fake: &Arc<Fake>) -> Fixture {
        let mut f = Fixture::new();
        f.config.bash.editor = Some(fake.clone() as Arc<dyn EditorTerminal>);
        f
    }

    #[tokio::test]
    async fn the_command_runs_in_the_editor_its_output_streamed() {
        let fake = Fake::new(&["a\n", "b\n"], Some(3));
        let f = with(&fake);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let input = json!({"command": "make test"});
        let out = crate::tools::bash::run(&input, &f.env_with_output(&tx)).await;
        drop(tx);
        let mut streamed = String::new();
        while let Some(chunk) = rx.recv().await {
            streamed.push_str(&chunk);
        }
        assert_eq!(streamed, "a\nb\n");
        assert_eq!(out.content, "a\nb\n[exit code: 3]");
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.outcome, ToolOutcome::Ok);
        let root = f.ws.root().display().to_string();
        let calls = fake.calls();
        assert_eq!(calls.first(), Some(&format!("create make test in {root}")));
        assert_eq!(calls.last().map(String::as_str), Some("release"));
        assert!(!calls.contains(&"kill".to_string()), "{calls:?}");
    }

    #[tokio::test]
    async fn the_output_cap_applies() {
        let long = "x".repeat(500);
        let fake = Fake::new(&[&long, "end\n"], Some(0));
        let mut f = with(&fake);
        f.config.output_cap = 100;
        let out = crate::tools::bash::run(&json!({"command": "big"}), &f.env()).await;
        assert!(out.content.contains("bytes truncated"), "{}", out.content);
        assert!(
            out.content.ends_with("end\n[exit code: 0]"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn the_timeout_kills_and_releases_the_terminal() {
        let fake = Fake::new(&["started\n"], None);
        let mut f = with(&fake);
        f.config.bash.default_timeout = Duration::from_millis(500);
        let out = crate::tools::bash::run(&json!({"command": "sleep 60"}), &f.env()).await;
        assert_eq!(
            out.outcome,
            ToolOutcome::Failed {
                failure: Failure::TimedOut
            }
        );
        assert!(
            out.content.starts_with(
                "Error: command timed out after 0.5 s (killed in the editor's terminal)"
            ),
            "{}",
            out.content
        );
        assert!(out.content.contains("started"), "{}", out.content);
        let calls = fake.calls();
        assert_eq!(calls[calls.len() - 2..], ["kill", "release"], "{calls:?}");
    }

    #[tokio::test]
    async fn an_interrupt_kills_and_releases_the_terminal() {
        let fake = Fake::new(&["working\n"], None);
        let f = with(&fake);
        let cancel = f.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cancel.cancel();
        });
        let out = crate::tools::bash::run(&json!({"command": "sleep 60"}), &f.env()).await;
        assert!(
            matches!(out.outcome, ToolOutcome::Interrupted { .. }),
            "{:?}",
            out.outcome
        );
        assert!(out.content.contains("working"), "{}", out.content);
        let calls = fake.calls();
        assert_eq!(calls[calls.len() - 2..], ["kill", "release"], "{calls:?}");
    }

    #[tokio::test]
    async fn a_dropped_call_still_kills_and_releases_the_terminal() {
        let fake = Fake::new(&["working\n"], None);
        let f = with(&fake);
        let env = f.env();
        let input = json!({"command": "sleep 60"});
        let run = crate::tools::bash::run(&input, &env);
        assert!(
            tokio::time::timeout(Duration::from_millis(300), run)
                .await
                .is_err()
        );
        for _ in 0..50 {
            if fake.calls().last().map(String::as_str) == Some("release") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let calls = fake.calls();
        assert_eq!(calls[calls.len() - 2..], ["kill", "release"], "{calls:?}");
    }

    #[tokio::test]
    async fn a_sandboxed_command_never_reaches_the_editor() {
        let fake = Fake::new(&["from the editor\n"], Some(0));
        let f = with(&fake);
        let env = ToolEnv {
            sandboxed: true,
            ..f.env()
        };
        let out = crate::tools::bash::run(&json!({"command": "echo contained"}), &env).await;
        assert_eq!(out.content, "contained\n[exit code: 0]");
        assert!(fake.calls().is_empty(), "{:?}", fake.calls());
    }

    #[test]
    fn a_shifted_output_goes_on_after_what_was_seen() {
        let mut seen = Seen::default();
        assert_eq!(seen.new_part("abc"), "abc");
        assert_eq!(seen.new_part("abcdef"), "def");
        // The editor dropped the beginning: only what is new goes on.
        let kept: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let mut seen = Seen::default();
        assert_eq!(seen.new_part(&kept), kept);
        let shifted = format!("{}new\n", &kept[400..]);
        assert_eq!(seen.new_part(&shifted), "new\n");
        // Nothing in common: all of it.
        assert_eq!(seen.new_part("xyz"), "xyz");
        assert_eq!(seen.new_part("xyz"), "");
    }
}
