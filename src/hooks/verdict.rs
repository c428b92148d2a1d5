//! What a hook's run says, in Claude Code's contract. Exit 0: go on; its
//! stdout, when it is a JSON object, may say more (`decision: "block"` +
//! `reason`, `continue: false` + `stopReason`, `systemMessage`, and in
//! `hookSpecificOutput`: `permissionDecision` allow/deny/ask with its
//! reason, `updatedInput`, `additionalContext`); plain stdout of a
//! `UserPromptSubmit` or `SessionStart` hook is context for the model.
//! Exit 2: block, with stderr as the reason. Any other end (another code,
//! a signal, the timeout, a failure to start): a warning for the user, and
//! the moment goes on as if there were no hook.

use serde_json::{Map, Value};

use super::HookEvent;
use super::run::{Ended, HookRun};

/// What a hook decided about the moment it ran at.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Decision {
    /// Go on (the default).
    #[default]
    Continue,
    /// Block: the call is not run, the prompt not sent, the item kept
    /// open, the turn kept going (`Stop`); the reason is for the model
    /// (for a prompt, the user).
    Block(String),
    /// A `PreToolUse` hook allows the call without asking.
    Allow,
    /// A `PreToolUse` hook wants the user asked, whatever the mode.
    Ask(String),
}

/// One run's verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub decision: Decision,
    /// `updatedInput`: the input the call runs with instead.
    pub updated_input: Option<Map<String, Value>>,
    /// `additionalContext` (or a prompt hook's plain stdout): for the model.
    pub context: Option<String>,
    /// `continue: false`: the agent stops, with this reason for the user.
    pub stop: Option<String>,
    /// For the user: `systemMessage`, or why the hook did not work.
    pub message: Option<String>,
}

impl Verdict {
    /// Reads `run` of a hook at `event`.
    pub fn of(event: HookEvent, run: &HookRun) -> Self {
        match run.ended {
            Ended::Exited(0) => Self::of_success(event, run.stdout.trim()),
            Ended::Exited(2) => Self {
                decision: Decision::Block(reason_of(&run.stderr, "a hook blocked it (exit 2)")),
                ..Self::default()
            },
            _ => Self {
                message: Some(run.describe_failure()),
                ..Self::default()
            },
        }
    }

    fn of_success(event: HookEvent, stdout: &str) -> Self {
        let json = stdout
            .starts_with('{')
            .then(|| serde_json::from_str::<Map<String, Value>>(stdout).ok())
            .flatten();
        let Some(json) = json else {
            let plain = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
            return Self {
                context: (plain && !stdout.is_empty()).then(|| stdout.to_string()),
                ..Self::default()
            };
        };
        let text = |map: &Map<String, Value>, key: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let specific = json
            .get("hookSpecificOutput")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let reason = text(&json, "reason");
        let mut verdict = Self {
            updated_input: specific
                .get("updatedInput")
                .and_then(Value::as_object)
                .cloned(),
            context: text(&specific, "additionalContext"),
            message: text(&json, "systemMessage"),
            ..Self::default()
        };
        if json.get("continue") == Some(&Value::Bool(false)) {
            verdict.stop = Some(
                text(&json, "stopReason").unwrap_or_else(|| "a hook stopped the agent".into()),
            );
        }
        let why = text(&specific, "permissionDecisionReason").or(reason.clone());
        verdict.decision = match (
            text(&specific, "permissionDecision").as_deref(),
            text(&json, "decision").as_deref(),
        ) {
            (Some("deny"), _) => Decision::Block(why.unwrap_or_else(|| "a hook denied it".into())),
            (Some("ask"), _) => Decision::Ask(why.unwrap_or_default()),
            (Some("allow"), _) => Decision::Allow,
            // The older top-level `decision`: `block` everywhere, and
            // `approve` for a call.
            (None, Some("block")) => {
                Decision::Block(reason.unwrap_or_else(|| "a hook blocked it".into()))
            }
            (None, Some("approve")) if event == HookEvent::PreToolUse => Decision::Allow,
            _ => Decision::Continue,
        };
        verdict
    }
}

/// A hook's stderr as a reason, or `fallback` when it said nothing.
fn reason_of(stderr: &str, fallback: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        fallback.to_string()
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn run(ended: Ended, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            command: "h".into(),
            ended,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn exit_codes_and_json_answers_read_as_claude_code_reads_them() {
        let pre = HookEvent::PreToolUse;
        let blocked = Verdict::of(pre, &run(Ended::Exited(2), "", "no rm\n"));
        assert_eq!(blocked.decision, Decision::Block("no rm".into()));
        let warned = Verdict::of(pre, &run(Ended::Exited(1), "", "oops"));
        assert_eq!(warned.decision, Decision::Continue);
        assert!(warned.message.unwrap().contains("exit code 1"));
        let timed = Verdict::of(pre, &run(Ended::TimedOut, "", ""));
        assert!(timed.message.unwrap().contains("timed out"));
        let json = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "ask", "permissionDecisionReason": "check it",
            "updatedInput": {"command": "ls"}}}"#;
        let asked = Verdict::of(pre, &run(Ended::Exited(0), json, ""));
        assert_eq!(asked.decision, Decision::Ask("check it".into()));
        assert_eq!(asked.updated_input.unwrap()["command"], "ls");
        let old = Verdict::of(
            pre,
            &run(Ended::Exited(0), r#"{"decision":"block","reason":"r"}"#, ""),
        );
        assert_eq!(old.decision, Decision::Block("r".into()));
        let stop = Verdict::of(
            HookEvent::Stop,
            &run(
                Ended::Exited(0),
                r#"{"continue":false,"stopReason":"enough"}"#,
                "",
            ),
        );
        assert_eq!(stop.stop.as_deref(), Some("enough"));
        let plain = Verdict::of(
            HookEvent::UserPromptSubmit,
            &run(Ended::Exited(0), "today is Friday\n", ""),
        );
        assert_eq!(plain.context.as_deref(), Some("today is Friday"));
        let ignored = Verdict::of(pre, &run(Ended::Exited(0), "{not json", ""));
        assert_eq!(ignored, Verdict::default());
    }
}
