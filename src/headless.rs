//! Headless mode: prints the engine's events for a person (`text`) or a
//! program (`jsonl`). Invariant: the answer, tool lines and plans go to
//! `out`; retries, errors and the usage summary go to `err`, so
//! `waypoint -p … > answer.txt` captures the work and shows the diagnostics.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::events::{AbortReason, Envelope, ErrorKind, Event, StopReason, ToolOutcome, ToolStatus};
use crate::llm::Usage;
use crate::pricing::{self, Price};
use crate::text::{StreamCleaner, clean, clean_line};
use crate::todo::{Author, PlanDiff};

mod children;
mod goal;
pub mod notes;
mod ops_in;
mod proposal;
mod result_line;
pub use ops_in::{InputFormat, OpsIn, Seam, print_events, schema_text};
pub use result_line::{Outcome, PlanProgress, ResultLine, result_schema};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Jsonl,
}

pub struct Printer<O: Write, E: Write> {
    format: OutputFormat,
    out: O,
    err: E,
    /// Write text deltas as they arrive (a terminal) instead of holding each
    /// reply until it is complete (a pipe or file: a retried reply then
    /// appears once, not twice).
    live_text: bool,
    /// Text of the current reply not yet written (when not live).
    held: String,
    /// The cursor is not at the start of a line on `out`.
    mid_line: bool,
    /// Id, name and summary of each running tool call (calls that only
    /// read run at once), printed with its result.
    running: Vec<(String, String, String)>,
    /// Holds an escape sequence split between two live text deltas.
    cleaner: StreamCleaner,
    /// A plan update made by the running call, printed after its line.
    pending_plan: Option<String>,
    /// The recorded session's id, for the `result` line and "resume with".
    session: Option<String>,
    /// The plan's progress: (completed, items).
    plan: (usize, usize),
    /// Subagents' lines (text format).
    children: children::ChildLines,
    /// The plan is a proposal waiting for approval (its revision).
    proposed: Option<u32>,
    /// The run approves the proposed plan: a refusal ends it.
    approving: bool,
    agreement: proposal::Agreement,
    /// The goal's last report (`--goal`).
    goal: Option<crate::events::GoalReport>,
}

/// How a headless run ended, for its last lines.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub outcome: Outcome,
    /// Per model, with its cost when the price is known.
    pub by_model: Vec<ModelTotals>,
    pub duration_ms: u64,
}

impl<O: Write, E: Write> Printer<O, E> {
    pub fn new(format: OutputFormat, out: O, err: E) -> Self {
        Self {
            format,
            out,
            err,
            live_text: false,
            held: String::new(),
            mid_line: false,
            running: Vec::new(),
            cleaner: StreamCleaner::default(),
            pending_plan: None,
            session: None,
            plan: (0, 0),
            children: children::ChildLines::default(),
            proposed: None,
            approving: false,
            agreement: proposal::Agreement::default(),
            goal: None,
        }
    }

    /// The run approves the proposed plan (`--approve-plan`): a refused
    /// approval ends it as failed.
    pub fn approving(mut self, approving: bool) -> Self {
        self.approving = approving;
        self
    }

    /// Streams text as it arrives (use when `out` is a terminal).
    pub fn live_text(mut self, live: bool) -> Self {
        self.live_text = live;
        self
    }

    /// Prints one event (jsonl: with its address); returns the outcome
    /// when it ends the run (only the root thread's turn does).
    pub fn handle(&mut self, envelope: &Envelope) -> io::Result<Option<Outcome>> {
        let event = &envelope.event;
        let outcome = match event {
            _ if !envelope.thread.is_root() => None,
            Event::TurnComplete { .. } if self.proposed.is_some() => Some(Outcome::PlanProposed),
            Event::TurnComplete { open_items: 0, .. } => Some(Outcome::Completed),
            Event::Error {
                kind: ErrorKind::PlanEdit,
                ..
            } if self.approving => Some(Outcome::Failed),
            Event::Error {
                kind: ErrorKind::PromptBlocked,
                ..
            } => Some(Outcome::Failed),
            Event::TurnComplete { .. } => Some(Outcome::OpenItems),
            Event::TurnAborted { reason, .. } => Some(match reason {
                AbortReason::Interrupted => Outcome::Interrupted,
                AbortReason::MaxTurns | AbortReason::Hook => Outcome::MaxTurns,
                AbortReason::Failed => Outcome::Failed,
            }),
            _ => None,
        };
        if envelope.thread.is_root() {
            self.goal_event(event, self.format == OutputFormat::Text)?;
        }
        let outcome = outcome.map(|o| goal::outcome(self.goal.as_ref(), o));
        match event {
            Event::SessionStarted {
                id, resumed, notes, ..
            } => {
                self.session = Some(id.clone());
                if *resumed {
                    writeln!(self.err, "waypoint: resumed session {}", clean_line(id))?;
                }
                for note in notes {
                    writeln!(self.err, "waypoint: note: {}", clean_line(note))?;
                }
            }
            // A child's plan is its own: the run's is the root thread's.
            Event::PlanUpdated { .. }
            | Event::PlanProposed { .. }
            | Event::PlanApproved { .. }
            | Event::PlanChangeAccepted { .. }
            | Event::SessionReset
                if envelope.thread.is_root() =>
            {
                self.note_plan(event)
            }
            Event::History { events } => {
                // The past is not printed again, but the plan it ends with counts.
                events.iter().for_each(|past| self.note_plan(&past.event));
                return Ok(None);
            }
            _ => {}
        }
        match self.format {
            OutputFormat::Jsonl => {
                serde_json::to_writer(&mut self.out, envelope)?;
                self.out.write_all(b"\n")?;
                // The one clear line on stderr is promised in every format.
                match event {
                    Event::TurnAborted { message, .. } | Event::Error { message, .. } => {
                        self.error_line(message)?;
                    }
                    Event::TurnComplete { open_items, .. } => self.open_items_line(*open_items)?,
                    _ => {}
                }
            }
            OutputFormat::Text if envelope.thread.is_root() => {
                self.children.root(event);
                self.text(event)?;
            }
            // A child's refused approval is said like the parent's.
            OutputFormat::Text if matches!(event, Event::ApprovalRequested { .. }) => {
                self.text(event)?;
            }
            OutputFormat::Text => {
                if let Some(line) = self.children.line(envelope) {
                    self.end_line()?;
                    self.out.write_all(line.as_bytes())?;
                }
            }
        }
        self.out.flush()?;
        Ok(outcome)
    }

    /// The run's last lines: the token summary (text), the `result` event
    /// (jsonl) and, on stderr, how to resume the session.
    pub fn finish(&mut self, result: &RunResult) -> io::Result<()> {
        let mut all = Usage::default();
        for m in &result.by_model {
            all.add(&m.usage);
        }
        match self.format {
            OutputFormat::Text => {
                if all != Usage::default() {
                    self.summary(&result.by_model)?;
                }
                self.agreement_line()?;
            }
            OutputFormat::Jsonl => {
                let cost = total_cost(&result.by_model);
                let line = ResultLine {
                    exit_reason: result.outcome,
                    exit_code: result.outcome.exit_code(),
                    session_id: self.session.clone(),
                    plan: PlanProgress {
                        completed: self.plan.0,
                        total: self.plan.1,
                    },
                    agreement: proposal::progress(&self.agreement),
                    goal: self.goal.clone(),
                    usage: all,
                    cost_usd: cost,
                    duration_ms: result.duration_ms,
                };
                serde_json::to_writer(&mut self.out, &line)?;
                self.out.write_all(b"\n")?;
                self.out.flush()?;
            }
        }
        if let Some(id) = &self.session {
            writeln!(
                self.err,
                "waypoint: resume with: waypoint -r {}",
                clean_line(id)
            )?;
        }
        Ok(())
    }

    /// A turn that ended with open plan items says so (exit code 4 follows).
    fn open_items_line(&mut self, open_items: usize) -> io::Result<()> {
        if open_items == 0 {
            return Ok(());
        }
        writeln!(
            self.err,
            "waypoint: stopped with {open_items} plan item(s) still open (exit code 4); `waypoint -c -p` continues"
        )
    }

    /// The one clear line an error or a failed turn prints on stderr.
    fn error_line(&mut self, message: &str) -> io::Result<()> {
        writeln!(self.err, "waypoint: {}", clean_line(message))
    }

    /// A hook that blocked or failed, on `err` (one that went on says nothing).
    fn hook_line(&mut self, report: &crate::events::HookReport) -> io::Result<()> {
        let Some(line) = crate::hooks::report_line(report) else {
            return Ok(());
        };
        self.end_line()?;
        self.error_line(&line)
    }

    fn write_text(&mut self, text: &str) -> io::Result<()> {
        if !text.is_empty() {
            self.out.write_all(text.as_bytes())?;
            self.mid_line = !text.ends_with('\n');
        }
        Ok(())
    }

    /// Writes held text and ends the line: something else is printed next.
    fn end_line(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.write_text(&clean(&held))?;
        self.cleaner.finish();
        if std::mem::take(&mut self.mid_line) {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Prints one event for a person: the reply's text, one line per tool
    /// call (with the plan it changed after it), plans, and on `err` the
    /// retries, refusals, errors and compactions.
    fn text(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::ApprovalRequested { name, summary, .. } => self.cannot_ask(name, summary)?,
            Event::TextDelta { text } if self.live_text => {
                let text = self.cleaner.push(text);
                self.write_text(&text)?;
            }
            Event::TextDelta { text } => self.held.push_str(text),
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.retrying(*attempt, *delay_ms, reason)?,
            Event::ToolCallBegin {
                id, name, summary, ..
            } => {
                self.end_line()?;
                self.running.push((
                    id.clone(),
                    clean_line(name).into_owned(),
                    clean_line(&summary.line).into_owned(),
                ));
            }
            Event::ToolCallEnd {
                id,
                outcome,
                duration_ms,
                output,
                exit_code,
                ..
            } => self.tool_line(id, outcome, *exit_code, *duration_ms, output)?,
            Event::PlanUpdated {
                rendered,
                diff,
                author,
                ..
            } => self.plan_lines(rendered, diff, *author)?,
            Event::TurnComplete {
                open_items,
                stop_reason,
            } => {
                self.end_line()?;
                if *stop_reason == StopReason::MaxTokens {
                    writeln!(
                        self.err,
                        "waypoint: the reply hit the token limit and may be cut off (raise --max-tokens)"
                    )?;
                }
                if self.proposed.is_none() {
                    self.open_items_line(*open_items)?;
                }
            }
            Event::PlanProposed { .. }
            | Event::PlanApproved { .. }
            | Event::PlanChangeRequested { .. }
            | Event::PlanChangeAccepted { .. }
            | Event::PlanChangeRefused { .. } => self.proposal_line(event)?,
            Event::TurnAborted { message, .. } | Event::Error { message, .. } => {
                self.end_line()?;
                self.error_line(message)?;
            }
            Event::McpServer { name, status } => self.mcp_line(name, status)?,
            Event::McpWait { wait } => self.mcp_wait_line(wait)?,
            Event::Hook { report } => self.hook_line(report)?,
            Event::McpTools { deferred, .. } if *deferred > 0 => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: {deferred} MCP tools are found with mcp_search (their definitions would take too much of the context)"
                )?;
            }
            // Reasoning is not part of the reply; the jsonl format has it.
            Event::ReasoningDelta { .. }
            | Event::Usage { .. }
            | Event::TurnStarted { .. }
            | Event::RoundStarted { .. }
            | Event::ToolCallOutputDelta { .. }
            | Event::ToolCallProgress { .. }
            | Event::Queued { .. }
            | Event::ModelChanged { .. }
            | Event::SessionReset
            | Event::PlanStats { .. }
            | Event::SessionStarted { .. }
            | Event::ApprovalMode { .. }
            | Event::History { .. }
            | Event::UserMessage { .. }
            | Event::ContextUsage { .. }
            | Event::CompactionBegin { .. }
            | Event::SummaryDelta { .. }
            | Event::McpTools { .. }
            | Event::Hooks { .. }
            | Event::Catalog { .. }
            | Event::Jobs { .. }
            | Event::TaskDone { .. }
            | Event::Checkpoint { .. }
            | Event::GoalSet { .. }
            | Event::GoalUpdated { .. }
            | Event::GoalBudget { .. }
            | Event::ItemChecked { .. }
            | Event::Idle { .. } => {}
            Event::CompactionEnd {
                before_tokens,
                after_tokens,
                fallback,
            } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: {}",
                    crate::units::compaction(*before_tokens, *after_tokens, *fallback)
                )?;
            }
        }
        Ok(())
    }

    /// A retry: the reply starts again from scratch, so what was held or
    /// half-written of it is dropped or ended; the retry is said on `err`.
    fn retrying(&mut self, attempt: u32, delay_ms: u64, reason: &str) -> io::Result<()> {
        self.held.clear();
        self.cleaner.finish();
        if std::mem::take(&mut self.mid_line) {
            self.out.write_all(b"\n")?;
        }
        let repeat = if self.live_text {
            "; the reply starts again"
        } else {
            ""
        };
        writeln!(
            self.err,
            "waypoint: retry {attempt} in {:.1} s ({}){repeat}",
            delay_ms as f64 / 1000.0,
            clean_line(reason)
        )
    }

    /// The finished tool call's line (`→ bash ls  [ok 12 ms]`, with the
    /// first line of its output when it failed), then the plan it changed.
    /// A command that exited non-zero says its code (`[exit 2 · 3 ms]`) and
    /// one the sandbox stopped says so, as the app's cells do.
    fn tool_line(
        &mut self,
        id: &str,
        outcome: &ToolOutcome,
        exit_code: Option<i32>,
        duration_ms: u64,
        output: &str,
    ) -> io::Result<()> {
        self.end_line()?;
        let status = outcome.status();
        let first_line = || {
            let first = output.lines().next().unwrap_or("");
            let first: String = first.chars().take(160).collect();
            format!(": {}", clean_line(&first))
        };
        let badge = match (outcome, exit_code.filter(|c| *c != 0)) {
            (ToolOutcome::SandboxBlocked { .. }, _) => {
                format!("blocked by the sandbox · {duration_ms} ms")
            }
            (_, Some(code)) if status == ToolStatus::Ok => {
                format!("exit {code} · {duration_ms} ms")
            }
            _ => {
                let label = match status {
                    ToolStatus::Ok => "ok",
                    ToolStatus::Error => "error",
                    ToolStatus::Interrupted => "interrupted",
                };
                let detail = if status == ToolStatus::Ok {
                    String::new()
                } else {
                    first_line()
                };
                format!("{label} {duration_ms} ms{detail}")
            }
        };
        let (name, summary) = match self.running.iter().position(|(i, _, _)| i == id) {
            Some(at) => {
                let (_, name, summary) = self.running.remove(at);
                (name, summary)
            }
            None => Default::default(),
        };
        let sep = if summary.is_empty() { "" } else { " " };
        writeln!(self.out, "→ {name}{sep}{summary}  [{badge}]")?;
        if self.running.is_empty()
            && let Some(plan) = self.pending_plan.take()
        {
            self.out.write_all(plan.as_bytes())?;
        }
        Ok(())
    }

    /// The plan: what changed and who changed it, then its lines; held
    /// while a tool runs, to follow that call's line.
    fn plan_lines(&mut self, rendered: &str, diff: &PlanDiff, author: Author) -> io::Result<()> {
        let by = match author {
            Author::User => " (your edit)",
            Author::PlanFile => " (plan file)",
            Author::Skill => " (a skill's plan)",
            Author::Approved => " (approved)",
            Author::Reply => " (model's reply)",
            Author::Model => "",
        };
        let mut text = format!("Plan{by}: {}\n", clean_line(&diff.summary()));
        for line in rendered.lines().filter(|l| !l.is_empty()) {
            let line = clean_line(line);
            text.push_str("  ");
            text.push_str(&line);
            text.push('\n');
        }
        if !self.running.is_empty() {
            self.pending_plan = Some(text);
        } else {
            self.end_line()?;
            self.out.write_all(text.as_bytes())?;
        }
        Ok(())
    }

    /// Prints the session's token totals with their cached share, and
    /// their cost when every price is known (text mode only); one line per
    /// model as well when more than one model answered.
    pub fn summary(&mut self, by_model: &[ModelTotals]) -> io::Result<()> {
        if self.format != OutputFormat::Text || by_model.is_empty() {
            return Ok(());
        }
        let mut all = Usage::default();
        for m in by_model {
            all.add(&m.usage);
        }
        let cost = total_cost(by_model);
        writeln!(self.err, "waypoint: tokens {}", totals_line(&all, cost))?;
        if by_model.len() > 1 {
            for m in by_model {
                writeln!(
                    self.err,
                    "waypoint:   {}: {}",
                    clean_line(&m.model),
                    totals_line(&m.usage, m.cost)
                )?;
            }
        }
        Ok(())
    }
}

/// What all models cost, when every price is known: from `0.0` (a sum of
/// no `f64`s is `-0.0`, which a result would print as `-0.0`).
fn total_cost(by_model: &[ModelTotals]) -> Option<f64> {
    by_model
        .iter()
        .try_fold(0.0, |total, m| m.cost.map(|c| total + c))
}

/// One model's tokens over a session, and their cost when its price is known.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTotals {
    pub model: String,
    pub usage: Usage,
    pub cost: Option<f64>,
}

/// The tokens of a headless run per model, in the order the models first
/// answered, added up from its `Usage` events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally(Vec<(String, Usage)>);

impl Tally {
    /// Adds the tokens of a `Usage` event; any other event changes nothing.
    pub fn add(&mut self, event: &Event) {
        let Event::Usage { model, request, .. } = event else {
            return;
        };
        match self.0.iter_mut().find(|(m, _)| m == model) {
            Some((_, u)) => u.add(request),
            None => self.0.push((model.clone(), *request)),
        }
    }

    /// Each model's tokens with their cost, where its price is known
    /// (`prices`: the config's overrides).
    pub fn priced(self, prices: &BTreeMap<String, Price>) -> Vec<ModelTotals> {
        let priced = |(model, usage): (String, Usage)| {
            let cost = pricing::price_of(&model, prices).map(|p| pricing::cost(p, &usage));
            ModelTotals { model, usage, cost }
        };
        self.0.into_iter().map(priced).collect()
    }
}

/// `412.0k in (88% cached) / 12.0k out · $0.4100`: every prompt token
/// counts as "in"; the cached share is what was read from the cache.
fn totals_line(u: &Usage, cost: Option<f64>) -> String {
    let prompt = u.prompt_tokens();
    let cached = u
        .cached_percent()
        .map(|pct| format!(" ({pct}% cached)"))
        .unwrap_or_default();
    let cost = cost
        .map(|c| format!(" · {}", crate::pricing::format_cost(c)))
        .unwrap_or_default();
    format!(
        "{} in{cached} / {} out{cost}",
        crate::units::tokens(prompt),
        crate::units::tokens(u.output_tokens)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_shows_the_cached_share_and_each_model() {
        let sonnet = ModelTotals {
            model: "claude-sonnet-4-5".into(),
            usage: Usage {
                input_tokens: 20_000,
                output_tokens: 12_000,
                cache_read_tokens: 362_000,
                cache_write_tokens: 30_000,
            },
            cost: Some(0.41),
        };
        let mut err = Vec::new();
        Printer::new(OutputFormat::Text, Vec::new(), &mut err)
            .summary(std::slice::from_ref(&sonnet))
            .unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "waypoint: tokens 412.0k in (88% cached) / 12.0k out · $0.4100\n"
        );
        let local = ModelTotals {
            model: "qwen".into(),
            usage: Usage::uncached(800, 50),
            cost: None,
        };
        let mut err = Vec::new();
        Printer::new(OutputFormat::Text, Vec::new(), &mut err)
            .summary(&[sonnet, local])
            .unwrap();
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "waypoint: tokens 412.8k in (88% cached) / 12.1k out\n\
             waypoint:   claude-sonnet-4-5: 412.0k in (88% cached) / 12.0k out · $0.4100\n\
             waypoint:   qwen: 800 in / 50 out\n"
        );
    }

    #[test]
    fn a_result_without_model_requests_costs_zero_not_minus_zero() {
        let mut out = Vec::new();
        Printer::new(OutputFormat::Jsonl, &mut out, Vec::new())
            .finish(&RunResult {
                outcome: Outcome::Failed,
                by_model: Vec::new(),
                duration_ms: 5,
            })
            .unwrap();
        let line = String::from_utf8(out).unwrap();
        assert!(line.contains(r#""cost_usd":0.0"#), "{line}");
        assert!(!line.contains("-0.0"), "{line}");
    }

    #[test]
    fn exit_codes_are_distinct() {
        let codes = [
            Outcome::Completed,
            Outcome::Failed,
            Outcome::MaxTurns,
            Outcome::OpenItems,
            Outcome::Interrupted,
            Outcome::Terminated,
            Outcome::HungUp,
            Outcome::PlanProposed,
            Outcome::BudgetLimited,
        ]
        .map(Outcome::exit_code);
        // An unmet goal is open work, as open items are (4).
        assert_eq!(
            Outcome::GoalUnmet.exit_code(),
            Outcome::OpenItems.exit_code()
        );
        assert_eq!(codes, [0, 1, 3, 4, 130, 143, 129, 5, 6]);
    }
    use crate::todo::PlanDiff;

    fn run(live: bool, events: &[Event]) -> (String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        {
            let mut p = Printer::new(OutputFormat::Text, &mut out, &mut err).live_text(live);
            for e in events {
                p.handle(&Envelope::root(1, e.clone())).unwrap();
            }
        }
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    fn text(t: &str) -> Event {
        Event::TextDelta { text: t.into() }
    }

    fn retry() -> Event {
        Event::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "cut".into(),
        }
    }

    fn complete(stop: StopReason) -> Event {
        Event::TurnComplete {
            stop_reason: stop,
            open_items: 0,
        }
    }

    #[test]
    fn a_retried_reply_is_printed_once_when_not_live() {
        let (out, err) = run(
            false,
            &[
                text("Hello "),
                retry(),
                text("Hello "),
                text("world"),
                complete(StopReason::EndTurn),
            ],
        );
        assert_eq!(out, "Hello world\n");
        assert!(err.contains("retry 1 in 0.5 s (cut)"));
    }

    #[test]
    fn live_text_streams_and_warns_that_the_reply_restarts() {
        let (out, err) = run(
            true,
            &[
                text("Hel"),
                retry(),
                text("Hello"),
                complete(StopReason::MaxTokens),
            ],
        );
        assert_eq!(out, "Hel\nHello\n");
        assert!(err.contains("the reply starts again"));
        assert!(err.contains("token limit"));
    }

    #[test]
    fn tool_line_then_its_plan() {
        let events = [
            text("Planning."),
            Event::ToolCallBegin {
                id: "1".into(),
                name: "todo_write".into(),
                summary: crate::events::ToolSummary {
                    line: "1 item".into(),
                    detail: crate::events::ToolDetail::Plan,
                },
                input: serde_json::json!({}),
                plan_item_id: None,
                plan_item: None,
            },
            Event::PlanUpdated {
                items: Vec::new(),
                rendered: "[>] A <- Doing A\n\n(0/1 completed)".into(),
                diff: PlanDiff {
                    added: vec!["A".into()],
                    ..PlanDiff::default()
                },
                revision: 1,
                author: crate::todo::Author::Model,
                at: 0,
                note: None,
            },
            Event::ToolCallEnd {
                id: "1".into(),
                name: "todo_write".into(),
                status: ToolStatus::Ok,
                outcome: crate::events::ToolOutcome::Ok,
                duration_ms: 3,
                output: String::new(),
                exit_code: None,
            },
            Event::ToolCallBegin {
                id: "2".into(),
                name: "bash".into(),
                summary: crate::events::ToolSummary {
                    line: "false".into(),
                    detail: crate::events::ToolDetail::Output,
                },
                input: serde_json::json!({}),
                plan_item_id: None,
                plan_item: None,
            },
            Event::ToolCallEnd {
                id: "2".into(),
                name: "bash".into(),
                status: ToolStatus::Error,
                outcome: crate::events::ToolOutcome::Failed {
                    failure: crate::events::Failure::Tool,
                },
                duration_ms: 9,
                output: "Error: boom\nmore".into(),
                exit_code: None,
            },
        ];
        let (out, _) = run(false, &events);
        assert_eq!(
            out,
            "Planning.\n→ todo_write 1 item  [ok 3 ms]\nPlan: +1 added\n  [>] A <- Doing A\n  (0/1 completed)\n→ bash false  [error 9 ms: Error: boom]\n"
        );
    }

    #[test]
    fn escape_sequences_never_reach_the_terminal() {
        let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
        for live in [true, false] {
            let (out, err) = run(
                live,
                &[
                    text("Hi \u{1b}]0;pw"),
                    text(&format!("ned\u{7}there{evil}")),
                    Event::ToolCallBegin {
                        id: "1".into(),
                        name: format!("bash{evil}"),
                        summary: crate::events::ToolSummary {
                            line: format!("ls{evil}"),
                            detail: crate::events::ToolDetail::Output,
                        },
                        input: serde_json::json!({}),
                        plan_item_id: None,
                        plan_item: None,
                    },
                    Event::ToolCallEnd {
                        id: "1".into(),
                        name: "bash".into(),
                        status: ToolStatus::Error,
                        outcome: crate::events::ToolOutcome::Failed {
                            failure: crate::events::Failure::Tool,
                        },
                        duration_ms: 1,
                        output: format!("Error: {evil}boom"),
                        exit_code: None,
                    },
                    Event::Error {
                        kind: crate::events::ErrorKind::Api,
                        message: format!("server{evil}\nsays"),
                    },
                    complete(StopReason::EndTurn),
                ],
            );
            for s in [&out, &err] {
                assert!(!s.contains("pw") && !s.contains("[2J"), "{s:?}");
                assert!(!s.chars().any(|c| c.is_control() && c != '\n'), "{s:?}");
            }
            assert!(
                out.starts_with("Hi there\n→ bash ls  [error 1 ms: Error: boom]"),
                "{out:?}"
            );
            assert!(err.contains("waypoint: server says"), "{err:?}");
        }
    }

    #[test]
    fn jsonl_still_says_the_error_on_stderr() {
        let mut out = Vec::new();
        let mut err = Vec::new();
        {
            let mut p = Printer::new(OutputFormat::Jsonl, &mut out, &mut err);
            p.handle(&Envelope::root(
                1,
                Event::TurnAborted {
                    reason: AbortReason::Failed,
                    message: "the API refused the request (HTTP 401): invalid x-api-key".into(),
                    error: Some(crate::events::ErrorKind::Auth),
                },
            ))
            .unwrap();
        }
        let out = String::from_utf8(out).unwrap();
        let err = String::from_utf8(err).unwrap();
        assert!(out.contains("\"turn_aborted\""), "{out}");
        assert_eq!(
            err,
            "waypoint: the API refused the request (HTTP 401): invalid x-api-key\n"
        );
    }

    #[test]
    fn the_tally_adds_per_model_in_the_order_they_first_answered() {
        let usage = |model: &str, input_tokens, output_tokens| Event::Usage {
            model: model.into(),
            request: Usage {
                cache_read_tokens: 1,
                ..Usage::uncached(input_tokens, output_tokens)
            },
            totals: Usage::default(),
        };
        let mut tally = Tally::default();
        tally.add(&usage("unpriced-local", 10, 1));
        tally.add(&text("not a usage event"));
        tally.add(&usage("claude-sonnet-4-5", 1_000_000, 0));
        tally.add(&usage("unpriced-local", 5, 2));
        let totals = tally.priced(&BTreeMap::new());
        let models: Vec<&str> = totals.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(models, ["unpriced-local", "claude-sonnet-4-5"]);
        let local = &totals[0];
        assert_eq!(
            (local.usage.input_tokens, local.usage.output_tokens),
            (15, 3)
        );
        assert_eq!(local.usage.cache_read_tokens, 2);
        assert_eq!(local.cost, None, "no price, no cost");
        assert!(totals[1].cost.is_some_and(|c| c > 0.0), "{totals:?}");
    }
}
