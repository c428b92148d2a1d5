//! Running a check: an item's (or the goal's own) command, contained as
//! hooks and `bash` are (a session of its own, no terminal, no API key,
//! killed whole when it ends), in the sandbox's world whenever the
//! session has one and the mode is not yolo, with a time limit. Its exit
//! status is the evidence.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::shared::lock;
use crate::agent::thread::Host;
use crate::events::ApprovalMode;
use crate::hooks::run::Ended;
use crate::todo::Evidence;

/// The longest a check may run.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(600);

/// The lines of a check's output kept as its evidence.
const TAIL_LINES: usize = 20;

/// Runs `command` as the check of item `(id, content)` (an empty id: the
/// goal's own).
pub(in crate::agent) async fn run_check(
    host: &Host,
    command: &str,
    (id, content): (&str, &str),
    cancel: &CancellationToken,
) -> Evidence {
    let mode = lock(&host.shared.policy).mode;
    let confinement = match host.config.tools.sandbox.as_ref() {
        Some(sandbox) if mode != ApprovalMode::Yolo => match sandbox.confinement() {
            Ok(c) => Some(c),
            Err(e) => {
                return Evidence {
                    item: id.into(),
                    content: content.into(),
                    command: command.into(),
                    tail: format!("the check did not run: the sandbox could not be prepared: {e}"),
                    ..Evidence::default()
                };
            }
        },
        _ => None,
    };
    let session = host.config.tools.session.clone();
    let place = crate::tools::hook_run::Place {
        root: host.shared.workspace.root(),
        session: session.as_deref(),
        confinement: confinement.as_deref(),
        cancel,
    };
    let run = crate::tools::hook_run::run(command, b"", CHECK_TIMEOUT, &place).await;
    let mut tail = crate::todo::evidence::tail(&run.stdout, &run.stderr, TAIL_LINES);
    let exit_code = run.exit_code();
    let why = match &run.ended {
        Ended::Exited(_) => None,
        Ended::Signal(sig) => Some(format!("the check was killed by signal {sig}")),
        Ended::TimedOut => Some(format!(
            "the check timed out after {} s and was killed",
            CHECK_TIMEOUT.as_secs()
        )),
        Ended::Cancelled => Some("the check was interrupted".to_string()),
        Ended::Failed(e) => Some(format!("the check could not start: {e}")),
    };
    if let Some(why) = why {
        tail = if tail.is_empty() {
            why
        } else {
            format!("{tail}\n{why}")
        };
    }
    Evidence {
        item: id.into(),
        content: content.into(),
        command: command.into(),
        exit_code,
        passed: exit_code == Some(0),
        duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        tail,
    }
}
