//! The tool trace pane's state: one entry per tool call, the selection and
//! the expanded view. Invariant: entries are only appended (their serial
//! numbers name them for spill files), and an entry leaves `Running` once.
//! A plan item's filter only hides entries: the selection and the expanded
//! view always name an entry the filter shows.

use std::time::{Duration, Instant};

use super::output::{OutputLog, Spill};
use super::scroll::Scroll;
use ratatui::text::Line;

use crate::events::{ToolDetail, ToolStatus, ToolSummary};

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
    pub plan_item: Option<String>,
    /// Its stable id (what the plan pane's selection filters by).
    pub plan_item_id: Option<String>,
    pub status: TraceStatus,
    /// Waiting for the user's approval: not running yet (its clock starts
    /// when it is answered).
    pub waiting: bool,
    pub started: Instant,
    pub duration: Option<Duration>,
    pub output: OutputLog,
    /// Live output arrived (so the final result does not replace it).
    pub streamed: bool,
    /// A command's non-zero exit code (the call is shown as failed).
    pub exit_code: Option<i32>,
    /// Why the plan tool refused the update (the whole reason, cleaned).
    pub refusal: Option<String>,
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

impl TraceEntry {
    /// The call in one line for the conversation: tool, summary, and once
    /// it ended its duration and what went wrong (`exit 3`, `refused`).
    pub fn cell_text(&self) -> String {
        let mut out = self.name.clone();
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
        if let Some(d) = self.duration {
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

impl Trace {
    pub fn begin(
        &mut self,
        id: String,
        name: String,
        summary: ToolSummary,
        plan_item: Option<String>,
        now: Instant,
    ) {
        self.next_serial += 1;
        self.entries.push(TraceEntry {
            serial: self.next_serial,
            id,
            name,
            summary,
            plan_item,
            plan_item_id: None,
            status: TraceStatus::Running,
            waiting: false,
            started: now,
            duration: None,
            output: OutputLog::default(),
            streamed: false,
            exit_code: None,
            refusal: None,
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
            Some((id, _)) => t.plan_item_id.as_deref() == Some(id.as_str()),
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
                t.duration = Some(now.saturating_duration_since(t.started));
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
