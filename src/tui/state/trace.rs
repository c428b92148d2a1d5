//! The tool trace pane's state: one entry per tool call, the selection and
//! the expanded view. Invariant: entries are only appended (their serial
//! numbers name them for spill files), and an entry leaves `Running` once.
//! A plan item's filter only hides entries: the selection and the expanded
//! view always name an entry the filter shows.

use std::time::{Duration, Instant};

use super::output::{OutputLog, Spill};
use super::scroll::Scroll;
use ratatui::text::Line;

use crate::events::{Event, Refuser, ToolDetail, ToolOutcome, ToolStatus, ToolSummary};
use crate::text::clean_line;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceStatus {
    Running,
    Ok,
    Error,
    Interrupted,
}

impl From<ToolStatus> for TraceStatus {
    fn from(status: ToolStatus) -> Self {
        match status {
            ToolStatus::Ok => TraceStatus::Ok,
            ToolStatus::Error => TraceStatus::Error,
            ToolStatus::Interrupted => TraceStatus::Interrupted,
        }
    }
}

#[derive(Debug)]
pub struct TraceEntry {
    /// Unique in the session (tool call ids from a model may repeat).
    pub serial: u64,
    pub id: String,
    pub name: String,
    pub summary: ToolSummary,
    /// The plan item in progress when the call started.
    pub plan_item: PlanLink,
    pub status: TraceStatus,
    /// When it started (after any approval wait) and how long it took.
    pub clock: CallClock,
    pub output: OutputLog,
    /// Live output arrived (so the final result does not replace it).
    pub streamed: bool,
    /// A command's non-zero exit code (the call is shown as failed).
    pub exit_code: Option<i32>,
    /// Why the plan tool refused the update (the whole reason, cleaned).
    pub refusal: Option<String>,
    /// The tool's latest word on how it is getting on, while it runs.
    pub progress: Option<String>,
    /// The plan change this plan call made, in one line (its cell says it).
    plan_echo: Option<String>,
}

/// The plan item a call was made for: in progress when it started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanLink {
    /// Its content, for display (one clean line).
    pub content: Option<String>,
    /// Its stable id (what the plan pane's selection filters by).
    pub id: Option<String>,
}

/// A call's clock. Invariant: a wait for the user's approval is not the
/// call's time (its clock starts again when it is answered); once it has
/// a duration, it ran that long.
#[derive(Clone, Copy, Debug)]
pub struct CallClock {
    started: Instant,
    waiting: bool,
    duration: Option<Duration>,
}

impl CallClock {
    fn new(now: Instant) -> Self {
        Self {
            started: now,
            waiting: false,
            duration: None,
        }
    }

    /// When the call started (or was answered, after a wait).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Waiting for the user's approval: not running yet.
    pub fn waiting(&self) -> bool {
        self.waiting
    }

    /// How long it ran, once it ended.
    pub fn duration(&self) -> Option<Duration> {
        self.duration
    }

    /// How long it has run at `now`: its duration once it ended.
    pub fn elapsed(&self, now: Instant) -> Duration {
        self.duration
            .unwrap_or_else(|| now.saturating_duration_since(self.started))
    }

    /// It waits for the user's approval.
    pub fn wait(&mut self) {
        self.waiting = true;
    }

    /// The user answered at `now`: it runs (if it runs) from now.
    pub fn answered(&mut self, now: Instant) {
        self.waiting = false;
        self.started = now;
    }

    /// It ended after `duration` (as the engine measured it).
    pub fn end(&mut self, duration: Duration) {
        self.duration = Some(duration);
    }
}

#[derive(Debug)]
pub struct Trace {
    pub entries: Vec<TraceEntry>,
    /// The selected entry; `None` follows the newest.
    pub selected: Option<usize>,
    pub expanded: bool,
    pub detail_scroll: Scroll,
    /// Only the calls made for this plan item (its id and 1-based place).
    pub filter: Option<(String, usize)>,
    /// The expanded entry's diff, built once per entry and width.
    pub diff_cache: Option<DiffCache>,
    next_serial: u64,
}

/// A file change's numbered diff lines for the expanded view.
#[derive(Debug)]
pub struct DiffCache {
    pub serial: u64,
    /// The entry's status then (its output, which places the diff, is final once it ended).
    pub status: TraceStatus,
    pub width: usize,
    pub lines: Vec<Line<'static>>,
}

impl Default for Trace {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            selected: None,
            expanded: false,
            detail_scroll: Scroll::top_only(),
            filter: None,
            diff_cache: None,
            next_serial: 0,
        }
    }
}

/// A refusal's first clause: up to the first `.`, `;` or line end.
pub fn first_clause(reason: &str) -> &str {
    let end = reason
        .find(". ")
        .into_iter()
        .chain(reason.find(';'))
        .chain(reason.find('\n'))
        .min()
        .unwrap_or(reason.len());
    reason[..end].trim_end_matches('.').trim()
}

/// How a call of the tool `name` is named on screen: another program's
/// tool by its server and its own name (`github · create_issue`), the
/// others by theirs (cleaned for one line).
pub fn shown_name<'a>(name: &'a str, detail: &ToolDetail) -> std::borrow::Cow<'a, str> {
    match detail {
        ToolDetail::Call { server, tool, .. } => {
            std::borrow::Cow::Owned(format!("{} · {}", clean_line(server), clean_line(tool)))
        }
        _ => clean_line(name),
    }
}

impl TraceEntry {
    /// How the call's tool is named on screen: another program's tool by
    /// its server and its own name (`github · create_issue`), the others
    /// by theirs.
    pub fn display_name(&self) -> std::borrow::Cow<'_, str> {
        shown_name(&self.name, &self.summary.detail)
    }

    /// The call in one line for the conversation: tool, summary, and once
    /// it ended its duration and what went wrong (`exit 3`, `refused`).
    pub fn cell_text(&self) -> String {
        // A plan write says what it changed (item by item), not its size.
        if let Some(echo) = &self.plan_echo {
            return format!("plan {echo}");
        }
        let mut out = self.display_name().into_owned();
        if !self.summary.line.is_empty() {
            out.push(' ');
            out.push_str(&self.summary.line);
        }
        // A file change says how many lines it adds and removes (not once
        // it failed: then it changed nothing).
        if let ToolDetail::Diff { old, new, .. } = &self.summary.detail
            && !matches!(self.status, TraceStatus::Error | TraceStatus::Interrupted)
        {
            let (added, removed) = crate::tui::measure::diff_stats(old, new);
            if added > 0 {
                out.push_str(&format!(" +{added}"));
            }
            if removed > 0 {
                out.push_str(&format!(" −{removed}"));
            }
        }
        if let Some(d) = self.clock.duration() {
            out.push_str(" · ");
            out.push_str(&crate::tui::measure::short_duration(d));
        }
        if let Some(code) = self.exit_code {
            out.push_str(&format!(" · exit {code}"));
        } else if self.refusal.is_some() {
            out.push_str(" · refused");
        } else if self.status == TraceStatus::Interrupted {
            out.push_str(" · interrupted");
        }
        out
    }
}

/// What an event did to the trace that other panes follow.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TraceChange {
    /// The conversation's one-line cell of the call, to add or redraw.
    pub cell: Option<ToolCell>,
    /// Output for the spill file of entry `serial` (made on first use).
    pub spill: Option<(u64, String)>,
    /// The plan tool refused the update: the whole reason.
    pub refused: Option<String>,
    /// An entry was added (the plan item's filter may show it).
    pub grew: bool,
}

/// A tool call's cell in the conversation, as the trace has it now.
#[derive(Debug, PartialEq, Eq)]
pub enum ToolCell {
    /// The call began: its line, drawn running from `started`.
    Begin {
        serial: u64,
        text: String,
        started: Instant,
    },
    /// Its output grew: the last lines shown under it.
    Tail { serial: u64, tail: Vec<String> },
    /// It ended: its status, final line and last lines.
    End {
        serial: u64,
        status: TraceStatus,
        text: String,
        tail: Vec<String>,
    },
}

impl Trace {
    /// The trace's part of an engine event: tool calls begin, stream and
    /// end here (the model's strings cleaned to one line each), a call
    /// waits for approval, a new session empties the pane.
    pub fn apply(&mut self, event: &Event, now: Instant) -> TraceChange {
        let mut change = TraceChange::default();
        match event {
            Event::ToolCallBegin {
                id,
                name,
                summary,
                plan_item,
                plan_item_id,
                ..
            } => {
                // The model chose these strings: shown as one clean line each.
                let summary = ToolSummary {
                    line: clean_line(&summary.line).into_owned(),
                    detail: summary.detail.clone(),
                };
                let plan_item = PlanLink {
                    content: plan_item.as_deref().map(|p| clean_line(p).into_owned()),
                    id: plan_item_id.clone(),
                };
                let name = clean_line(name).into_owned();
                self.begin(id.clone(), name, summary, plan_item, now);
                change.grew = true;
                change.cell = self.entries.last().map(|t| ToolCell::Begin {
                    serial: t.serial,
                    text: t.cell_text(),
                    started: t.clock.started(),
                });
            }
            Event::ToolCallOutputDelta { id, chunk } => {
                if let Some(t) = self.by_id(id) {
                    t.streamed = true;
                    change.spill = t.output.push(chunk).map(|text| (t.serial, text));
                    change.cell = Some(ToolCell::Tail {
                        serial: t.serial,
                        tail: t.cell_tail(),
                    });
                }
            }
            Event::ToolCallProgress { id, message } => {
                if let Some(t) = self.by_id(id)
                    && t.status == TraceStatus::Running
                {
                    t.progress = Some(clean_line(message).into_owned());
                    change.cell = Some(ToolCell::Tail {
                        serial: t.serial,
                        tail: t.cell_tail(),
                    });
                }
            }
            Event::ToolCallEnd {
                id,
                status,
                outcome,
                duration_ms,
                output,
                exit_code,
                ..
            } => {
                if let Some(t) = self.by_id(id) {
                    change = t.end(*status, outcome, *duration_ms, output, *exit_code);
                }
            }
            Event::ApprovalRequested { id, .. } => {
                if let Some(t) = self.by_id(id)
                    && t.status == TraceStatus::Running
                {
                    t.clock.wait();
                }
            }
            Event::Hook { report } => change = self.hook(report, now),
            Event::PlanUpdated {
                diff,
                author: crate::todo::Author::Model,
                ..
            } => {
                // The model's write comes just before its call's end: the
                // cell that ends next says what it changed.
                if let Some(t) = self.entries.iter_mut().rev().find(|t| {
                    t.summary.detail == ToolDetail::Plan && t.status == TraceStatus::Running
                }) {
                    t.plan_echo = Some(clean_line(&diff.echo()).into_owned());
                }
            }
            Event::SessionReset => self.clear(),
            _ => {}
        }
        change
    }

    /// A hook's run: an entry of its own in the Tools pane, ended as it
    /// starts (the conversation has no cell for it: one that blocked or
    /// failed is a notice).
    fn hook(&mut self, report: &crate::events::HookReport, now: Instant) -> TraceChange {
        use crate::events::HookResult;
        let about = report
            .subject
            .as_deref()
            .map(|s| format!(" · {}", clean_line(s)))
            .unwrap_or_default();
        let summary = ToolSummary {
            line: format!("{}{about} · {}", report.event, clean_line(&report.command)),
            detail: ToolDetail::Output,
        };
        let id = format!("hook-{}", self.next_serial + 1);
        self.begin(id, "hook".into(), summary, PlanLink::default(), now);
        let (status, outcome) = match report.result {
            HookResult::Ok | HookResult::Overridden => (ToolStatus::Ok, ToolOutcome::Ok),
            HookResult::Interrupted => (ToolStatus::Interrupted, ToolOutcome::Ok),
            _ => (ToolStatus::Error, ToolOutcome::Ok),
        };
        let output = report.message.clone().unwrap_or_default();
        let Some(entry) = self.entries.last_mut() else {
            return TraceChange::default();
        };
        let mut change = entry.end(
            status,
            &outcome,
            report.duration_ms,
            &output,
            report.exit_code,
        );
        change.cell = None;
        change
    }
}

/// A line the model was told, in the user's words for a cell or a folded
/// row (the expanded view keeps the model's).
pub(crate) fn users_words(line: &str) -> Option<&'static str> {
    match line.trim() {
        l if l == crate::events::INTERRUPTED => Some("you interrupted it before it finished"),
        l if l == crate::events::NOT_RUN => {
            Some("not run: you interrupted the turn before it started")
        }
        _ => None,
    }
}

impl TraceEntry {
    /// The call ended: its status (a command that ran but failed is shown
    /// as failed), time, output and, when the plan's rules refused it, why.
    fn end(
        &mut self,
        status: ToolStatus,
        outcome: &ToolOutcome,
        duration_ms: u64,
        output: &str,
        exit_code: Option<i32>,
    ) -> TraceChange {
        let mut change = TraceChange::default();
        self.status = status.into();
        self.clock.end(Duration::from_millis(duration_ms));
        if let Some(code) = exit_code.filter(|c| *c != 0) {
            self.exit_code = Some(code);
            if self.status == TraceStatus::Ok {
                self.status = TraceStatus::Error;
            }
        }
        if let ToolOutcome::Refused {
            by: Refuser::Plan,
            reason,
        } = outcome
        {
            self.refusal = Some(clean_line(reason.trim()).into_owned());
            change.refused.clone_from(&self.refusal);
        }
        let spill = if !self.streamed {
            self.output.push(output)
        } else if status != ToolStatus::Ok {
            // Keep the live log (and its spill file) and add why it stopped:
            // the outcome's own line, or the first of the result (the rest
            // repeats the log).
            let why = outcome
                .headline()
                .unwrap_or_else(|| output.lines().next().unwrap_or_default());
            self.output.push_line(why)
        } else {
            None
        };
        change.spill = spill.map(|text| (self.serial, text));
        change.cell = Some(ToolCell::End {
            serial: self.serial,
            status: self.status,
            text: self.cell_text(),
            tail: self.cell_tail(),
        });
        change
    }

    /// The output lines a tool cell shows under it: a command's last three
    /// (live while it runs), the end of any other call's error; none for a
    /// call that went well (its one line says enough) or for the plan tools.
    pub fn cell_tail(&self) -> Vec<String> {
        const TAIL_LINES: usize = 3;
        if self.summary.detail == ToolDetail::Plan {
            // A refused plan update says why under its cell, not only in the
            // Tools pane.
            return match (&self.refusal, self.status) {
                (Some(why), TraceStatus::Error) => vec![why.clone()],
                (None, TraceStatus::Error) => self.output.command_tail(1),
                _ => Vec::new(),
            };
        }
        if let Some(progress) = self
            .progress
            .as_ref()
            .filter(|_| self.status == TraceStatus::Running)
        {
            // The tool's own word on how it is getting on, under its last
            // output lines.
            let mut tail = self.output.command_tail(TAIL_LINES - 1);
            tail.push(progress.clone());
            return tail;
        }
        if self.name == "bash" || self.status != TraceStatus::Ok {
            let mut tail = self.output.command_tail(TAIL_LINES);
            for line in &mut tail {
                if let Some(words) = users_words(line) {
                    *line = words.to_string();
                }
            }
            return tail;
        }
        Vec::new()
    }
}

impl Trace {
    pub fn begin(
        &mut self,
        id: String,
        name: String,
        summary: ToolSummary,
        plan_item: PlanLink,
        now: Instant,
    ) {
        self.next_serial += 1;
        self.entries.push(TraceEntry {
            serial: self.next_serial,
            id,
            name,
            summary,
            plan_item,
            status: TraceStatus::Running,
            clock: CallClock::new(now),
            output: OutputLog::default(),
            streamed: false,
            exit_code: None,
            refusal: None,
            progress: None,
            plan_echo: None,
        });
    }

    /// The newest entry of the call `id`.
    pub fn by_id(&mut self, id: &str) -> Option<&mut TraceEntry> {
        self.entries.iter_mut().rev().find(|t| t.id == id)
    }

    pub fn by_serial(&mut self, serial: u64) -> Option<&mut TraceEntry> {
        self.entries.iter_mut().rev().find(|t| t.serial == serial)
    }

    /// Whether the filter (if any) shows `t`.
    pub fn shows(&self, t: &TraceEntry) -> bool {
        match &self.filter {
            Some((id, _)) => t.plan_item.id.as_deref() == Some(id.as_str()),
            None => true,
        }
    }

    /// The indexes of the entries the filter shows, oldest first.
    pub fn shown(&self) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&i| self.shows(&self.entries[i]))
            .collect()
    }

    /// The index of the newest entry the filter shows.
    pub fn last_shown(&self) -> Option<usize> {
        (0..self.entries.len())
            .rev()
            .find(|&i| self.shows(&self.entries[i]))
    }

    /// The entry shown expanded: the selected one, or the newest shown.
    pub fn focused(&self) -> Option<&TraceEntry> {
        self.selected
            .and_then(|i| self.entries.get(i))
            .filter(|t| self.shows(t))
            .or_else(|| self.entries.iter().rev().find(|t| self.shows(t)))
    }

    /// Empties the pane; serial numbers go on (spill files keep their names).
    pub fn clear(&mut self) {
        *self = Self {
            next_serial: self.next_serial,
            filter: self.filter.take(),
            ..Self::default()
        };
    }

    /// Everything still running stopped (the engine went away).
    pub fn stop_running(&mut self, now: Instant) {
        for t in &mut self.entries {
            if t.status == TraceStatus::Running {
                t.status = TraceStatus::Interrupted;
                t.clock
                    .end(now.saturating_duration_since(t.clock.started()));
            }
        }
    }

    /// The spill file of entry `serial` exists at `path` (or could not be made).
    pub fn spill_result(&mut self, serial: u64, path: Option<std::path::PathBuf>) {
        if let Some(t) = self.by_serial(serial) {
            t.output.spill = match path {
                Some(path) => Spill::Active { path: Some(path) },
                None => Spill::Failed,
            };
        }
    }
}
