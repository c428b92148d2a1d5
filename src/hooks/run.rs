//! A hook's run, as its runner (`crate::tools::hook_run`) returns it:
//! how it ended, what it printed, how long it took.

use std::time::Duration;

/// How a hook's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signal(i32),
    TimedOut,
    /// The turn was interrupted.
    Cancelled,
    /// It could not be started.
    Failed(String),
}

/// One run of a hook.
#[derive(Clone, Debug)]
pub struct HookRun {
    pub command: String,
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

impl HookRun {
    /// The exit code, when it exited.
    pub fn exit_code(&self) -> Option<i32> {
        match self.ended {
            Ended::Exited(code) => Some(code),
            _ => None,
        }
    }

    /// Why a run that neither went on (0) nor blocked (2) did not work,
    /// in one line for the user, after the line that names the hook and
    /// says it failed (`exit code 1: what it printed`).
    pub fn describe_failure(&self) -> String {
        let how = match &self.ended {
            Ended::Exited(code) => format!("exit code {code}"),
            Ended::Signal(sig) => format!("killed by signal {sig}"),
            Ended::TimedOut => format!("timed out after {:.0} s", self.duration.as_secs_f64()),
            Ended::Cancelled => "interrupted".to_string(),
            Ended::Failed(why) => format!("it could not start: {why}"),
        };
        let said = crate::text::clean_line(self.stderr.trim().lines().next().unwrap_or(""));
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        format!("{how}{said}")
    }
}

/// A command cut to a short line, for messages.
pub fn short(command: &str) -> String {
    let line = crate::text::clean_line(command.lines().next().unwrap_or("")).into_owned();
    if line.chars().count() > 60 {
        let cut: String = line.chars().take(59).collect();
        format!("{cut}…")
    } else {
        line
    }
}
