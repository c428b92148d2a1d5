//! What each plan item has cost: wall time in progress, tool calls, tokens
//! and money. Invariants: it is fed only facts with their times (plan
//! revisions, turn starts and ends, tool calls, usage), so the live engine
//! and a replayed transcript compute the same figures; an item's clock runs
//! only while it is in progress *and* a turn runs (an interrupt stops it, a
//! resume starts it again); an item keeps its figures when it is reworded
//! (same id) and when it leaves the plan.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{TodoItem, TodoStatus};
use crate::chat::Usage;
use crate::pricing::Price;

/// One item's account.
#[derive(schemars::JsonSchema, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ItemStats {
    /// The item's id (`TodoItem`'s `id`).
    pub id: String,
    /// Its text, as the plan last had it.
    pub content: String,
    /// Its status as the plan last had it; null when no revision of the
    /// plan has held it.
    pub status: Option<TodoStatus>,
    /// The item is no longer in the plan.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
    /// Wall time in progress while a turn ran, in milliseconds.
    pub time_ms: u64,
    /// Tool calls made while it was in progress (its subagents' included).
    pub tool_calls: u32,
    /// Prompt tokens (cached ones included) of the requests made while it
    /// was in progress.
    pub input_tokens: u64,
    /// Output tokens of those requests.
    pub output_tokens: u64,
    /// Their price in US dollars, when the model's price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The running account of a session's plan items.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    items: Vec<ItemStats>,
    /// Each item's tokens per model (by the item's place in `items`),
    /// priced when reported, with the prices the user set.
    usage: Vec<Vec<(String, Usage)>>,
    /// The item in progress, and since when its clock runs (when a turn runs).
    active: Option<String>,
    since: Option<u64>,
    turn_running: bool,
    /// A call waits for the user's approval: the clock stands.
    waiting: bool,
}

impl Ledger {
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// The place of item `id`'s account, made when it has none yet.
    fn place(&mut self, id: &str) -> usize {
        match self.items.iter().position(|i| i.id == id) {
            Some(at) => at,
            None => {
                self.items.push(ItemStats {
                    id: id.to_string(),
                    ..ItemStats::default()
                });
                self.usage.push(Vec::new());
                self.items.len() - 1
            }
        }
    }

    fn entry(&mut self, id: &str) -> &mut ItemStats {
        let at = self.place(id);
        &mut self.items[at]
    }

    fn stop_clock(&mut self, at: u64) {
        if let (Some(id), Some(since)) = (self.active.clone(), self.since.take()) {
            let entry = self.entry(&id);
            entry.time_ms = entry.time_ms.saturating_add(at.saturating_sub(since));
        }
    }

    fn start_clock(&mut self, at: u64) {
        if self.turn_running && !self.waiting && self.active.is_some() {
            self.since = Some(at);
        }
    }

    /// A plan revision accepted at `at`.
    pub fn plan(&mut self, items: &[TodoItem], at: u64) {
        let active = items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
            .map(|i| i.id.clone());
        if active != self.active {
            self.stop_clock(at);
            self.active = active;
            self.start_clock(at);
        }
        for stats in &mut self.items {
            stats.removed = !items.iter().any(|i| i.id == stats.id);
        }
        for item in items {
            let entry = self.entry(&item.id);
            entry.content.clone_from(&item.content);
            entry.status = Some(item.status);
            entry.removed = false;
        }
    }

    pub fn turn_started(&mut self, at: u64) {
        if !self.turn_running {
            self.turn_running = true;
            self.start_clock(at);
        }
    }

    pub fn turn_ended(&mut self, at: u64) {
        self.stop_clock(at);
        self.turn_running = false;
        self.waiting = false;
    }

    /// A call began waiting for the user's approval (`true`) or was
    /// answered: the wait is nobody's work.
    pub fn approval(&mut self, waiting: bool, at: u64) {
        if waiting {
            self.stop_clock(at);
            self.waiting = true;
        } else if self.waiting {
            self.waiting = false;
            self.start_clock(at);
        }
    }

    /// A tool call made while `item` (its id) was in progress.
    pub fn tool_call(&mut self, item: Option<&str>) {
        if let Some(id) = item {
            let entry = self.entry(id);
            entry.tool_calls = entry.tool_calls.saturating_add(1);
        }
    }

    /// A request's tokens, counted to the item in progress (priced when
    /// reported).
    pub fn usage(&mut self, model: &str, usage: &Usage) {
        let Some(id) = self.active.clone() else {
            return;
        };
        let at = self.place(&id);
        let entry = &mut self.items[at];
        entry.input_tokens = entry.input_tokens.saturating_add(usage.prompt_tokens());
        entry.output_tokens = entry.output_tokens.saturating_add(usage.output_tokens);
        let by_model = &mut self.usage[at];
        match by_model.iter_mut().find(|(m, _)| m == model) {
            Some((_, u)) => u.add(usage),
            None => by_model.push((model.to_string(), *usage)),
        }
    }

    /// A subagent finished: its tokens and tool calls are counted to the
    /// item it worked for (`item`, else the one in progress; its time is
    /// the item's already: the item was in progress while it ran).
    pub fn subagent(&mut self, item: Option<&str>, model: &str, usage: &Usage, tool_calls: u32) {
        let Some(id) = item.map(str::to_string).or_else(|| self.active.clone()) else {
            return;
        };
        let at = self.place(&id);
        let entry = &mut self.items[at];
        entry.input_tokens = entry.input_tokens.saturating_add(usage.prompt_tokens());
        entry.output_tokens = entry.output_tokens.saturating_add(usage.output_tokens);
        entry.tool_calls = entry.tool_calls.saturating_add(tool_calls);
        let by_model = &mut self.usage[at];
        match by_model.iter_mut().find(|(m, _)| m == model) {
            Some((_, u)) => u.add(usage),
            None => by_model.push((model.to_string(), *usage)),
        }
    }

    /// What item `at`'s tokens cost at `prices` (the config's, over the
    /// built-in table); `None` when a model's price is unknown.
    fn cost(&self, at: usize, prices: &BTreeMap<String, Price>) -> Option<f64> {
        let by_model = self.usage.get(at)?;
        if by_model.is_empty() {
            return None;
        }
        by_model
            .iter()
            .map(|(model, usage)| {
                crate::pricing::price_of(model, prices).map(|p| crate::pricing::cost(p, usage))
            })
            .sum()
    }

    /// One item's account (without the time of a clock running now),
    /// priced at `prices`.
    pub fn get(&self, id: &str, prices: &BTreeMap<String, Price>) -> Option<ItemStats> {
        let at = self.items.iter().position(|s| s.id == id)?;
        Some(ItemStats {
            cost_usd: self.cost(at, prices),
            ..self.items[at].clone()
        })
    }

    /// Nothing was ever counted.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The item whose clock runs now.
    pub fn running(&self) -> Option<&str> {
        self.since.and(self.active.as_deref())
    }

    /// Every item's account at `now`, priced at `prices`: the plan's items
    /// in its order, then removed items that did some work.
    pub fn report(
        &self,
        plan: &[TodoItem],
        now: u64,
        prices: &BTreeMap<String, Price>,
    ) -> Vec<ItemStats> {
        let live = |stats: &ItemStats| {
            let mut stats = stats.clone();
            if let Some(at) = self.items.iter().position(|s| s.id == stats.id) {
                stats.cost_usd = self.cost(at, prices);
            }
            if self.running() == Some(stats.id.as_str())
                && let Some(since) = self.since
            {
                stats.time_ms = stats.time_ms.saturating_add(now.saturating_sub(since));
            }
            stats
        };
        let mut out: Vec<ItemStats> = plan
            .iter()
            .map(|item| match self.items.iter().find(|s| s.id == item.id) {
                Some(stats) => live(stats),
                None => ItemStats {
                    id: item.id.clone(),
                    content: item.content.clone(),
                    status: Some(item.status),
                    ..ItemStats::default()
                },
            })
            .collect();
        out.extend(
            self.items
                .iter()
                .filter(|s| s.removed && (s.time_ms > 0 || s.tool_calls > 0))
                .map(live),
        );
        out
    }
}

/// `1m 05s`, `12s`, `0s`.
pub fn format_ms(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn tokens(n: u64) -> String {
    crate::units::tokens(n)
}

/// A Markdown table of `stats`: item, status, time, tool calls, tokens, cost.
pub fn stats_table(stats: &[ItemStats]) -> String {
    let mut out = String::from(
        "| # | item | status | time | tool calls | tokens in/out | cost |\n|---|---|---|---|---|---|---|\n",
    );
    for (n, s) in stats.iter().enumerate() {
        let status = if s.removed {
            "removed"
        } else {
            s.status.map_or("", TodoStatus::as_str)
        };
        let cost = s
            .cost_usd
            .map_or_else(|| "–".to_string(), crate::pricing::format_cost);
        let content = s.content.replace('|', "\\|");
        let _ = writeln!(
            out,
            "| {} | {content} | {status} | {} | {} | {}/{} | {cost} |",
            n + 1,
            format_ms(s.time_ms),
            s.tool_calls,
            tokens(s.input_tokens),
            tokens(s.output_tokens),
        );
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn items(spec: &[(&str, char)]) -> Vec<TodoItem> {
        spec.iter()
            .map(|(id, st)| TodoItem {
                id: (*id).into(),
                content: format!("Item {id}"),
                status: match st {
                    'x' => TodoStatus::Completed,
                    '>' => TodoStatus::InProgress,
                    _ => TodoStatus::Pending,
                },
                active_form: format!("Doing {id}"),
                scope: Default::default(),
            })
            .collect()
    }

    fn time_of(l: &Ledger, plan: &[TodoItem], now: u64, id: &str) -> u64 {
        l.report(plan, now, &BTreeMap::new())
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.time_ms)
            .unwrap()
    }

    /// Each step: (what happens, at) then the expected times of items 1 and 2.
    #[test]
    fn time_runs_only_while_an_item_is_in_progress_in_a_running_turn() {
        enum Step {
            Turn(bool),
            Plan(&'static [(&'static str, char)]),
            Waiting(bool),
        }
        use Step::*;
        let steps: Vec<(Step, u64, u64, u64)> = vec![
            (Turn(true), 0, 0, 0),
            (Plan(&[("1", '>'), ("2", ' ')]), 1_000, 0, 0),
            // interrupted after 4 s in item 1
            (Turn(false), 5_000, 4_000, 0),
            // the user waits 100 s: no time counted
            (Turn(true), 105_000, 4_000, 0),
            (Plan(&[("1", 'x'), ("2", '>')]), 106_000, 5_000, 0),
            // the process died and the session was resumed: the repair ends
            // the turn at the last record's time
            (Turn(false), 108_000, 5_000, 2_000),
            (Turn(true), 500_000, 5_000, 2_000),
            // a call waits 50 s for the user's approval: nobody's time
            (Waiting(true), 501_000, 5_000, 3_000),
            (Waiting(false), 551_000, 5_000, 3_000),
            (Plan(&[("1", 'x'), ("2", 'x')]), 553_000, 5_000, 5_000),
            (Turn(false), 600_000, 5_000, 5_000),
        ];
        let mut l = Ledger::new();
        let mut plan = Vec::new();
        for (i, (step, at, one, two)) in steps.into_iter().enumerate() {
            match step {
                Turn(true) => l.turn_started(at),
                Turn(false) => l.turn_ended(at),
                Waiting(w) => l.approval(w, at),
                Plan(spec) => {
                    plan = items(spec);
                    l.plan(&plan, at);
                }
            }
            if !plan.is_empty() {
                assert_eq!(time_of(&l, &plan, at, "1"), one, "step {i}: item 1");
                assert_eq!(time_of(&l, &plan, at, "2"), two, "step {i}: item 2");
            }
        }
    }

    #[test]
    fn live_time_tool_calls_and_tokens_go_to_the_item_in_progress() {
        let mut l = Ledger::new();
        l.turn_started(0);
        let plan = items(&[("1", '>'), ("2", ' ')]);
        l.plan(&plan, 0);
        l.tool_call(Some("1"));
        l.tool_call(Some("1"));
        l.tool_call(None);
        let used = |input, output| Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        };
        l.usage("priced", &used(1_000, 50));
        l.usage("priced", &used(2_000, 70));
        assert_eq!(l.running(), Some("1"));
        // $10 per million in, nothing out: the user's price, not a built-in one.
        let prices = BTreeMap::from([("priced".to_string(), Price::new(10.0, 0.0))]);
        let report = l.report(&plan, 7_000, &prices);
        assert_eq!(report[0].time_ms, 7_000, "live time of the running item");
        assert_eq!(report[0].tool_calls, 2);
        assert_eq!(
            (report[0].input_tokens, report[0].output_tokens),
            (3_000, 120)
        );
        assert!((report[0].cost_usd.unwrap() - 0.03).abs() < 1e-9);
        assert_eq!(report[1].tool_calls, 0);
        assert_eq!(report[1].cost_usd, None);
        // Unpriced: the tokens are counted, the cost is unknown.
        assert_eq!(l.report(&plan, 7_000, &BTreeMap::new())[0].cost_usd, None);
        assert_eq!(l.get("1", &prices).map(|s| s.tool_calls), Some(2));
        // Item 1 leaves the plan without completion: still reported, as removed.
        let next = items(&[("2", '>')]);
        l.plan(&next, 8_000);
        let report = l.report(&next, 9_000, &prices);
        assert_eq!(report.len(), 2);
        assert!(report[1].removed && report[1].time_ms == 8_000);
        assert_eq!(report[0].time_ms, 1_000);
        let table = stats_table(&report);
        assert!(
            table.contains("| 1 | Item 2 | in_progress | 1s | 0 |"),
            "{table}"
        );
        assert!(
            table.contains("| 2 | Item 1 | removed | 8s | 2 |"),
            "{table}"
        );
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_ms(0), "0s");
        assert_eq!(format_ms(12_400), "12s");
        assert_eq!(format_ms(65_000), "1m 05s");
        assert_eq!(format_ms(3_660_000), "1h 01m");
    }
}
