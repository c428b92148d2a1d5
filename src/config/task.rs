//! `[task]`: how many subagents run at once and where each one, and all of
//! them together, stop. Invariant: every limit is positive (a zero would
//! stop every child before its first request); a bad value is refused with
//! the setting's name.

use std::time::Duration;

use serde::Deserialize;

/// The `[task]` table as the file has it.
#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskLayer {
    /// Subagents running at once; more wait for a place.
    pub max_parallel: Option<usize>,
    /// Model requests per subagent.
    pub max_turns: Option<u32>,
    /// Tokens per subagent (prompt and output over its requests).
    pub max_tokens: Option<u64>,
    /// Minutes a subagent may run.
    pub max_minutes: Option<u64>,
    /// Tokens all the session's subagents may spend together.
    pub session_tokens: Option<u64>,
    /// In ask mode, more subagents than this at once are asked about first.
    pub ask_above: Option<usize>,
}

/// Subagents' places and limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    /// Children running at once; more wait for a place.
    pub max_parallel: usize,
    /// Model requests per child.
    pub max_turns: u32,
    /// Tokens (prompt and output, summed over its requests) per child.
    pub max_tokens: u64,
    pub max_time: Duration,
    /// Tokens all the session's children may spend together.
    pub session_tokens: u64,
    /// In ask mode, more subagents at once than this are put to the user first.
    pub ask_above: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            max_parallel: 4,
            max_turns: 40,
            max_tokens: 1_000_000,
            max_time: Duration::from_secs(15 * 60),
            session_tokens: 5_000_000,
            ask_above: 4,
        }
    }
}

impl TaskLayer {
    /// The limits this table sets over the defaults; the first setting
    /// that is zero, named.
    pub fn limits(&self) -> Result<TaskLimits, &'static str> {
        let d = TaskLimits::default();
        let positive = |name: &'static str, v: Option<u64>, default: u64| match v {
            Some(0) => Err(name),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        Ok(TaskLimits {
            max_parallel: positive(
                "task.max_parallel",
                self.max_parallel.map(|v| v as u64),
                d.max_parallel as u64,
            )? as usize,
            max_turns: positive(
                "task.max_turns",
                self.max_turns.map(u64::from),
                u64::from(d.max_turns),
            )?
            .try_into()
            .unwrap_or(u32::MAX),
            max_tokens: positive("task.max_tokens", self.max_tokens, d.max_tokens)?,
            max_time: Duration::from_secs(
                positive(
                    "task.max_minutes",
                    self.max_minutes,
                    d.max_time.as_secs() / 60,
                )?
                .saturating_mul(60),
            ),
            session_tokens: positive("task.session_tokens", self.session_tokens, d.session_tokens)?,
            ask_above: self.ask_above.unwrap_or(d.ask_above),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_and_zero_is_refused_by_name() {
        let layer: TaskLayer = toml::from_str("max_parallel = 2\nmax_minutes = 3").expect("parses");
        let limits = layer.limits().expect("valid");
        assert_eq!(limits.max_parallel, 2);
        assert_eq!(limits.max_time, Duration::from_secs(180));
        assert_eq!(limits.max_turns, TaskLimits::default().max_turns);
        let zero: TaskLayer = toml::from_str("max_tokens = 0").expect("parses");
        assert_eq!(zero.limits(), Err("task.max_tokens"));
        assert!(
            toml::from_str::<TaskLayer>("parallel = 2").is_err(),
            "unknown keys are refused"
        );
    }
}
