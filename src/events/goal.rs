//! What goals are made of (issue 46): a durable objective the agent keeps
//! working on until the evidence says it is met, within budgets the user
//! can see coming. Plain data that round-trips through serde: the goal
//! and its budget as the user set them, its state, what it spent, and the
//! evidence of each plan item's check. Invariant: a goal is `met` only
//! when every plan item is completed and verified (its check passed) or
//! accepted by the user, and the goal's own check passed; never because
//! a model said so.

use serde::{Deserialize, Serialize};

/// Where a goal is.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GoalState {
    /// Waypoint keeps the agent going until it is met or stopped.
    Active,
    /// The user paused it (`/goal pause`, Esc); `/goal resume` goes on.
    Paused,
    /// The evidence says it is met.
    Met,
    /// It stopped without being met (no progress, no evidence).
    Unmet,
    /// A budget ran out before it was met.
    BudgetLimited,
}

impl GoalState {
    /// `active`, `paused`, `met`, `unmet`, `budget-limited`.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalState::Active => "active",
            GoalState::Paused => "paused",
            GoalState::Met => "met",
            GoalState::Unmet => "unmet",
            GoalState::BudgetLimited => "budget-limited",
        }
    }

    /// It is over: met, unmet or out of budget.
    pub fn ended(self) -> bool {
        matches!(
            self,
            GoalState::Met | GoalState::Unmet | GoalState::BudgetLimited
        )
    }
}

impl std::fmt::Display for GoalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A goal's limits: any of tokens, cost, time and turns (none: no limit).
#[derive(
    schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize,
)]
pub struct Budget {
    /// Tokens of every request (prompt, cached and output), subagents'
    /// included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Cost in US cents, where the model's price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cents: Option<u64>,
    /// Wall time, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    /// Model requests (rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
}

impl Budget {
    /// No limit at all.
    pub fn is_empty(&self) -> bool {
        *self == Budget::default()
    }

    /// Reads `2M` (tokens; `500k`), `$5` (`$0.50`), `45m` (minutes; `2h`,
    /// `90s`), `30 turns` (or `30t`), several separated by commas or
    /// spaces, into one budget.
    pub fn parse(text: &str) -> Result<Budget, String> {
        let mut budget = Budget::default();
        let words: Vec<&str> = text
            .split([',', ' '])
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        let mut i = 0;
        while let Some(word) = words.get(i) {
            i += 1;
            let lower = word.to_ascii_lowercase();
            // `30 turns`: the unit as a word of its own.
            if let Some(next) = words.get(i)
                && matches!(
                    next.to_ascii_lowercase().as_str(),
                    "turns" | "turn" | "rounds"
                )
                && lower.chars().all(|c| c.is_ascii_digit())
            {
                i += 1;
                budget.turns = Some(number(&lower, word)? as u32);
                continue;
            }
            if let Some(dollars) = lower.strip_prefix('$') {
                let value: f64 = dollars.parse().map_err(|_| {
                    format!("`{word}` is not an amount of dollars (e.g. $5, $0.50)")
                })?;
                if !(value.is_finite() && value > 0.0) {
                    return Err(format!("`{word}`: a cost budget must be above $0"));
                }
                budget.cost_cents = Some((value * 100.0).round().max(1.0) as u64);
                continue;
            }
            // The unit's case matters: `2M` is tokens, `45m` minutes.
            let split = word
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(word.len());
            let (digits, unit) = word.split_at(split);
            let value: f64 = digits.parse().map_err(|_| usage(word))?;
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("`{word}`: a budget must be above 0"));
            }
            match unit {
                "" => budget.tokens = Some(value as u64),
                "k" | "K" => budget.tokens = Some((value * 1e3) as u64),
                "M" => budget.tokens = Some((value * 1e6) as u64),
                "m" | "min" => budget.seconds = Some((value * 60.0) as u64),
                "h" => budget.seconds = Some((value * 3600.0) as u64),
                "s" => budget.seconds = Some(value as u64),
                "t" | "turns" | "turn" => budget.turns = Some(value as u32),
                _ => return Err(usage(word)),
            }
        }
        if budget.is_empty() {
            return Err(usage(text));
        }
        Ok(budget)
    }

    /// `2.0M tokens, $5.00, 45 min, 30 turns`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = self.tokens {
            parts.push(format!("{} tokens", crate::units::tokens(t)));
        }
        if let Some(c) = self.cost_cents {
            parts.push(format!("${}.{:02}", c / 100, c % 100));
        }
        if let Some(s) = self.seconds {
            parts.push(duration(s));
        }
        if let Some(t) = self.turns {
            parts.push(format!("{t} turns"));
        }
        parts.join(", ")
    }
}

pub use crate::units::duration;

fn number(digits: &str, word: &str) -> Result<u64, String> {
    digits.parse().map_err(|_| usage(word))
}

fn usage(word: &str) -> String {
    format!(
        "`{word}` is not a budget: use tokens (2M, 500k), dollars ($5), time (45m, 2h) or turns (30 turns)"
    )
}

/// What a goal spent so far, measured from when it was set.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub tokens: u64,
    /// Where the prices are known.
    pub cost_usd: f64,
    pub seconds: u64,
    /// Model requests.
    pub turns: u32,
}

impl Spent {
    /// What plan item `stats` spent while in progress, in a budget's
    /// terms (its tool calls stand for turns).
    pub fn of_item(stats: &crate::todo::ItemStats) -> Spent {
        Spent {
            tokens: stats.input_tokens.saturating_add(stats.output_tokens),
            cost_usd: stats.cost_usd.unwrap_or(0.0),
            seconds: stats.time_ms / 1000,
            turns: stats.tool_calls,
        }
    }

    /// The largest share of a limit spent (0.0 to 1.0 and beyond), and
    /// the limit's name; none without limits.
    pub fn share(&self, budget: &Budget) -> Option<(f64, &'static str)> {
        let shares = [
            budget
                .tokens
                .map(|l| (self.tokens as f64 / l as f64, "tokens")),
            budget
                .cost_cents
                .map(|l| (self.cost_usd * 100.0 / l as f64, "cost")),
            budget
                .seconds
                .map(|l| (self.seconds as f64 / l as f64, "time")),
            budget
                .turns
                .map(|l| (f64::from(self.turns) / f64::from(l), "turns")),
        ];
        shares
            .into_iter()
            .flatten()
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }
}

/// A goal as the user set it.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// The objective, in the user's words.
    pub text: String,
    /// A command whose success is the goal's own evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    #[serde(default, skip_serializing_if = "Budget::is_empty")]
    pub budget: Budget,
    /// Each plan item's own limit (its tokens, cost and time while in
    /// progress; `turns` counts its tool calls).
    #[serde(default, skip_serializing_if = "Budget::is_empty")]
    pub item_budget: Budget,
}

/// What the user does to the session's goal.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum GoalAction {
    /// Set the goal (replacing an ended one; refused while one is active
    /// or paused) and start working on it.
    Set {
        #[serde(flatten)]
        goal: Goal,
    },
    /// Stop after the running request; the goal waits.
    Pause,
    /// Go on with a paused goal.
    Resume,
    /// Drop the goal (it is not met; nothing else changes).
    Clear,
    /// Accept plan item `n` (1-based) as done without evidence.
    Accept { n: usize },
}

pub use crate::todo::Evidence;

/// One plan item in a goal's report.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportItem {
    /// The item's id.
    pub id: String,
    pub content: String,
    /// `completed`, `in_progress` or `pending`.
    pub status: crate::todo::TodoStatus,
    /// `verified` (its check passed), `accepted` (by the user, without
    /// evidence), `failed` (its last check failed) or `unverified`.
    pub evidence: String,
    /// The last check run for it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Evidence>,
}

/// A goal's account: where it is, why, what it spent, each item's
/// evidence and what is left.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalReport {
    pub goal: Goal,
    pub state: GoalState,
    /// Why it is in this state (for paused, unmet and budget-limited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub spent: Spent,
    pub items: Vec<ReportItem>,
    /// The goal's own check, when it ran last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Evidence>,
}

impl GoalReport {
    /// The report's lines for a person.
    pub fn lines(&self) -> Vec<String> {
        let report = self;
        let mut lines = vec![format!(
            "goal {}: {}{}",
            report.state,
            crate::text::clean_line(&report.goal.text),
            report
                .reason
                .as_deref()
                .map(|r| format!(" ({})", crate::text::clean_line(r)))
                .unwrap_or_default()
        )];
        for (i, item) in report.items.iter().enumerate() {
            let evidence = match &item.check {
                Some(c) => format!(
                    "{}: `{}` exit {} in {} ms",
                    item.evidence,
                    crate::text::clean_line(&c.command),
                    c.exit_code
                        .map_or_else(|| "none".to_string(), |c| c.to_string()),
                    c.duration_ms
                ),
                None => item.evidence.clone(),
            };
            lines.push(format!(
                "  {}. [{}] {} — {evidence}",
                i + 1,
                item.status.as_str(),
                crate::text::clean_line(&item.content)
            ));
        }
        if let Some(check) = &report.check {
            lines.push(format!(
                "  goal check `{}`: {}",
                crate::text::clean_line(&check.command),
                if check.passed { "passed" } else { "failed" }
            ));
        }
        let spent = &report.spent;
        let mut line = format!(
            "  spent: {} tokens, {}, {} turns",
            crate::units::tokens(spent.tokens),
            crate::events::goal::duration(spent.seconds),
            spent.turns
        );
        if spent.cost_usd > 0.0 {
            line.push_str(&format!(
                ", {}",
                crate::pricing::format_cost(spent.cost_usd)
            ));
        }
        if !report.goal.budget.is_empty() {
            line.push_str(&format!(" (budget: {})", report.goal.budget.describe()));
        }
        lines.push(line);
        let left = report.left();
        if !left.is_empty() && report.state != GoalState::Met {
            lines.push(format!("  left: {}", left.join("; ")));
        }
        lines
    }

    /// Items not completed yet.
    pub fn left(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter(|i| i.status != crate::todo::TodoStatus::Completed)
            .map(|i| i.content.as_str())
            .collect()
    }

    /// Completed items without evidence the user accepted.
    pub fn unverified(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter(|i| i.evidence == "unverified" || i.evidence == "failed")
            .map(|i| i.content.as_str())
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_people_write_them() {
        let b = Budget::parse("2M, $5 45m").unwrap();
        assert_eq!(b.tokens, Some(2_000_000));
        assert_eq!(b.cost_cents, Some(500));
        assert_eq!(b.seconds, Some(2700));
        assert_eq!(Budget::parse("500k").unwrap().tokens, Some(500_000));
        assert_eq!(Budget::parse("30 turns").unwrap().turns, Some(30));
        assert_eq!(Budget::parse("30t").unwrap().turns, Some(30));
        assert_eq!(Budget::parse("$0.50").unwrap().cost_cents, Some(50));
        assert_eq!(Budget::parse("2h").unwrap().seconds, Some(7200));
        assert_eq!(Budget::parse("1.5M").unwrap().tokens, Some(1_500_000));
        assert_eq!(Budget::parse("90s").unwrap().seconds, Some(90));
        for bad in ["", "lots", "$-1", "$x", "0", "12q", "2x"] {
            assert!(Budget::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_largest_share_of_a_limit_is_the_one_that_counts() {
        let budget = Budget {
            tokens: Some(1000),
            turns: Some(10),
            ..Budget::default()
        };
        let spent = Spent {
            tokens: 500,
            turns: 9,
            ..Spent::default()
        };
        assert_eq!(spent.share(&budget), Some((0.9, "turns")));
        assert_eq!(spent.share(&Budget::default()), None);
    }
}
