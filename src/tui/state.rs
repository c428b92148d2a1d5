//! The TUI's state: everything the screen shows, and nothing else; no I/O
//! except the spill file of a huge tool output. Invariant: the checklist
//! always equals the engine's plan store (it is replaced whole from each
//! `PlanUpdated`), and what is typed in the input box is never dropped by
//! anything but the user (send, Ctrl+C).

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use ratatui::text::Line;
use ratatui_textarea::TextArea;
use serde_json::Value;

use super::style::Palette;
use crate::todo::{TodoItem, TodoStatus};

/// How long a changed plan item stays highlighted.
pub const HIGHLIGHT_FOR: Duration = Duration::from_millis(2500);
/// How long a first Ctrl+C waits for the second.
pub const QUIT_ARM_FOR: Duration = Duration::from_secs(2);
/// Bytes of one tool's output kept in memory; beyond it the whole output goes to a file.
pub const OUTPUT_MEMORY_CAP: usize = 256 * 1024;
/// Entries kept in the input history.
pub const HISTORY_CAP: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Input,
    Conversation,
    Checklist,
    Trace,
}

impl Focus {
    pub fn next(self) -> Self {
        match self {
            Focus::Input => Focus::Conversation,
            Focus::Conversation => Focus::Checklist,
            Focus::Checklist => Focus::Trace,
            Focus::Trace => Focus::Input,
        }
    }
    pub fn prev(self) -> Self {
        match self {
            Focus::Input => Focus::Trace,
            Focus::Conversation => Focus::Input,
            Focus::Checklist => Focus::Conversation,
            Focus::Trace => Focus::Checklist,
        }
    }
}

/// What the agent is doing, for the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    Idle,
    Thinking,
    Streaming,
    Tool { name: String },
    Retrying { reason: String },
    Interrupted,
    Failed,
    NoProvider,
}

/// A vertical scroll position. Following means "stick to the bottom";
/// otherwise `top` stays put while content grows below it.
#[derive(Debug, Default)]
pub struct Scroll {
    pub top: usize,
    pub follow: bool,
    /// Content and viewport height seen at the last render.
    pub seen: Cell<(usize, usize)>,
    /// The first line shown at the last render (what scrolling moves from).
    pub shown: Cell<usize>,
}

impl Scroll {
    pub fn following() -> Self {
        Self {
            top: 0,
            follow: true,
            seen: Cell::new((0, 0)),
            shown: Cell::new(0),
        }
    }

    pub fn top_only() -> Self {
        Self {
            top: 0,
            follow: false,
            seen: Cell::new((0, 0)),
            shown: Cell::new(0),
        }
    }

    /// The first visible line for `total` lines in `height` rows; records both.
    pub fn resolve(&self, total: usize, height: usize) -> usize {
        self.seen.set((total, height));
        let top = self.top_for(max_top(total, height));
        self.shown.set(top);
        top
    }

    /// Like [`Scroll::resolve`], but following keeps line `anchor` (and the one
    /// after it) in view instead of the bottom.
    pub fn resolve_around(&self, total: usize, height: usize, anchor: usize) -> usize {
        if !self.follow {
            return self.resolve(total, height);
        }
        self.seen.set((total, height));
        let top = (anchor + 2)
            .saturating_sub(height)
            .min(max_top(total, height));
        self.shown.set(top);
        top
    }

    fn top_for(&self, max_top: usize) -> usize {
        if self.follow {
            max_top
        } else {
            self.top.min(max_top)
        }
    }

    /// The first visible line at the last render.
    fn current_top(&self) -> usize {
        self.shown.get().min(self.max_top())
    }

    /// The last possible first line at the last render.
    fn max_top(&self) -> usize {
        let (total, height) = self.seen.get();
        max_top(total, height)
    }

    pub fn up(&mut self, n: usize) {
        self.top = self.current_top().saturating_sub(n);
        self.follow = false;
    }

    pub fn down(&mut self, n: usize, sticky: bool) {
        let max_top = self.max_top();
        self.top = (self.current_top() + n).min(max_top);
        self.follow = sticky && self.top >= max_top;
    }

    pub fn home(&mut self) {
        self.top = 0;
        self.follow = false;
    }

    pub fn end(&mut self, sticky: bool) {
        self.top = self.max_top();
        self.follow = sticky;
    }

    pub fn page(&self) -> usize {
        self.seen.get().1.saturating_sub(1).max(1)
    }
}

/// The last possible first line for `total` lines in `height` rows.
fn max_top(total: usize, height: usize) -> usize {
    total.saturating_sub(height)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    User,
    /// A user message waiting for the turn boundary.
    Queued,
    Assistant,
    Notice(NoticeKind),
}

/// An entry wrapped for one width: its height always, its lines only while
/// it is on screen (so a long session holds heights, not lines).
#[derive(Debug)]
pub struct Wrapped {
    pub width: u16,
    pub height: usize,
    pub lines: Option<Rc<Vec<Line<'static>>>>,
}

pub type LineCache = RefCell<Option<Wrapped>>;

/// One block of the conversation.
#[derive(Debug)]
pub struct ConvEntry {
    pub kind: EntryKind,
    text: String,
    pub cache: LineCache,
}

impl ConvEntry {
    pub fn new(kind: EntryKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            cache: RefCell::new(None),
        }
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
        self.cache.replace(None);
    }
    pub fn set_kind(&mut self, kind: EntryKind) {
        self.kind = kind;
        self.cache.replace(None);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceStatus {
    Running,
    Ok,
    Error,
    Interrupted,
}

/// A tool's output: bounded in memory, complete on disk when it is large.
#[derive(Debug, Default)]
pub struct OutputLog {
    head: String,
    /// The latest output: at most `2 * TAIL` bytes, trimmed to `TAIL` when it
    /// outgrows that (so trimming costs O(1) per byte pushed).
    tail: String,
    total: usize,
    spill: Option<(PathBuf, std::fs::File)>,
    spill_failed: bool,
}

impl OutputLog {
    const HEAD: usize = OUTPUT_MEMORY_CAP / 4;
    /// The tail window after a trim; it grows to twice this before the next,
    /// so head and tail together stay within `OUTPUT_MEMORY_CAP`.
    const TAIL: usize = (OUTPUT_MEMORY_CAP - Self::HEAD) / 2;

    pub fn push(&mut self, chunk: &str) {
        self.total += chunk.len();
        if self.total > OUTPUT_MEMORY_CAP && self.spill.is_none() && !self.spill_failed {
            self.start_spill();
        }
        if let Some((_, file)) = &mut self.spill
            && file.write_all(chunk.as_bytes()).is_err()
        {
            self.spill = None;
            self.spill_failed = true;
        }
        let mut rest = chunk;
        if self.head.len() < Self::HEAD {
            let room = Self::HEAD - self.head.len();
            let cut = rest.floor_char_boundary(room);
            self.head.push_str(&rest[..cut]);
            rest = &rest[cut..];
        }
        if rest.len() >= Self::TAIL {
            // A chunk bigger than the window replaces it: copy only its end.
            self.tail.clear();
            rest = &rest[rest.ceil_char_boundary(rest.len() - Self::TAIL)..];
        }
        self.tail.push_str(rest);
        if self.tail.len() > 2 * Self::TAIL {
            let cut = self.tail.ceil_char_boundary(self.tail.len() - Self::TAIL);
            self.tail.drain(..cut);
        }
    }

    fn start_spill(&mut self) {
        let made = tempfile::Builder::new()
            .prefix("waypoint-output-")
            .suffix(".log")
            .tempfile()
            .and_then(|f| f.keep().map_err(|e| e.error));
        match made {
            Ok((mut file, path)) => {
                // What is in memory so far is all there was (nothing dropped yet).
                if file
                    .write_all(self.head.as_bytes())
                    .and_then(|()| file.write_all(self.tail.as_bytes()))
                    .is_ok()
                {
                    self.spill = Some((path, file));
                } else {
                    self.spill_failed = true;
                }
            }
            Err(_) => self.spill_failed = true,
        }
    }

    /// Adds `line` on a line of its own after what is there.
    pub fn push_line(&mut self, line: &str) {
        if !self.is_empty() && !self.ends_with_newline() {
            self.push("\n");
        }
        self.push(line);
    }

    fn ends_with_newline(&self) -> bool {
        if self.tail.is_empty() {
            self.head.ends_with('\n')
        } else {
            self.tail.ends_with('\n')
        }
    }

    pub fn total_bytes(&self) -> usize {
        self.total
    }
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
    /// Where the complete output lives when it outgrew memory.
    pub fn spill_path(&self) -> Option<&PathBuf> {
        self.spill.as_ref().map(|(p, _)| p)
    }
    /// Bytes not held in memory.
    pub fn dropped_bytes(&self) -> usize {
        self.total.saturating_sub(self.head.len() + self.tail.len())
    }
    /// The text held in memory, with a marker where bytes were left out.
    pub fn text(&self) -> String {
        let tail = &self.tail;
        let dropped = self.dropped_bytes();
        if dropped == 0 {
            format!("{}{tail}", self.head)
        } else {
            let where_ = match self.spill_path() {
                Some(p) => format!("; full output in {}", p.display()),
                None => String::new(),
            };
            format!(
                "{}\n[… {dropped} bytes not shown{where_} …]\n{tail}",
                self.head
            )
        }
    }
    /// The last `n` non-blank lines held in memory.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = if self.tail.trim().is_empty() {
            &self.head
        } else {
            &self.tail
        };
        let mut lines: Vec<String> = text
            .rsplit('\n')
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(str::to_string)
            .collect();
        lines.reverse();
        lines
    }
}

impl Drop for OutputLog {
    /// The spill file lives as long as the session that shows it.
    fn drop(&mut self) {
        if let Some((path, _)) = self.spill.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[derive(Debug)]
pub struct TraceEntry {
    pub id: String,
    pub name: String,
    pub summary: crate::events::ToolSummary,
    pub input: Value,
    /// The plan item in progress when the call started.
    pub plan_item: Option<String>,
    pub status: TraceStatus,
    pub started: Instant,
    pub duration: Option<Duration>,
    pub output: OutputLog,
    /// Live output arrived (so the final result does not replace it).
    pub streamed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Added,
    Started,
    Completed,
}

#[derive(Debug, Default)]
pub struct Checklist {
    pub items: Vec<TodoItem>,
    /// Items changed by the last update, with when.
    pub changed: Vec<(String, Change, Instant)>,
    /// The item in progress and since when.
    pub active_since: Option<(String, Instant)>,
    pub collapsed: bool,
    pub scroll: Scroll,
    /// The last turn ended with this many items open.
    pub stopped_open: Option<usize>,
}

impl Checklist {
    pub fn completed(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.status == TodoStatus::Completed)
            .count()
    }
    pub fn active(&self) -> Option<&TodoItem> {
        self.items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
    }
    pub fn change_of(&self, id: &str, now: Instant) -> Option<Change> {
        self.changed
            .iter()
            .find(|(cid, _, at)| cid == id && now.saturating_duration_since(*at) < HIGHLIGHT_FOR)
            .map(|(_, c, _)| *c)
    }
    pub fn highlighting(&self, now: Instant) -> bool {
        self.changed
            .iter()
            .any(|(_, _, at)| now.saturating_duration_since(*at) < HIGHLIGHT_FOR)
    }
}

pub struct App {
    pub model: String,
    pub workspace: String,
    pub palette: Palette,
    pub conversation: Vec<ConvEntry>,
    pub conv_scroll: Scroll,
    pub trace: Vec<TraceEntry>,
    pub trace_selected: Option<usize>,
    pub trace_expanded: bool,
    pub detail_scroll: Scroll,
    pub checklist: Checklist,
    pub input: TextArea<'static>,
    pub history: Vec<String>,
    pub history_pos: Option<usize>,
    /// What was typed before history recall started.
    pub draft: Option<Vec<String>>,
    pub focus: Focus,
    pub show_help: bool,
    pub activity: Activity,
    pub activity_since: Instant,
    pub turn_started: Option<Instant>,
    /// When the last turn stopped (timers freeze there while nothing runs).
    pub turn_ended: Option<Instant>,
    pub running: bool,
    pub can_resume: bool,
    /// Session totals (input, output).
    pub tokens: (u64, u64),
    /// This turn's tokens (input, output).
    pub turn_tokens: (u64, u64),
    /// The model's price, when known.
    pub price: Option<crate::pricing::Price>,
    pub ctrl_c_at: Option<Instant>,
    /// False when no provider is configured (or the engine died): submissions
    /// explain why with `setup_help`.
    pub has_engine: bool,
    /// What to tell the user who sends a message without an engine.
    pub setup_help: Option<String>,
    /// The assistant entry streamed in the current round.
    pub round_entry: Option<usize>,
}

impl App {
    pub fn new(
        model: impl Into<String>,
        workspace: impl Into<String>,
        palette: Palette,
        now: Instant,
    ) -> Self {
        Self {
            model: model.into(),
            workspace: workspace.into(),
            palette,
            conversation: Vec::new(),
            conv_scroll: Scroll::following(),
            trace: Vec::new(),
            trace_selected: None,
            trace_expanded: false,
            detail_scroll: Scroll::top_only(),
            checklist: Checklist {
                // Following: the item in progress stays in view.
                scroll: Scroll::following(),
                ..Checklist::default()
            },
            input: new_input(),
            history: Vec::new(),
            history_pos: None,
            draft: None,
            focus: Focus::Input,
            show_help: false,
            activity: Activity::Idle,
            activity_since: now,
            turn_started: None,
            turn_ended: None,
            running: false,
            can_resume: false,
            tokens: (0, 0),
            turn_tokens: (0, 0),
            price: None,
            ctrl_c_at: None,
            has_engine: true,
            setup_help: None,
            round_entry: None,
        }
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.conversation
            .push(ConvEntry::new(EntryKind::Notice(kind), text));
        self.round_entry = None;
    }

    pub fn set_activity(&mut self, activity: Activity, now: Instant) {
        if self.activity != activity {
            self.activity = activity;
            self.activity_since = now;
        }
    }

    /// Something on screen changes with time alone (spinner, timers, highlight).
    pub fn animating(&self, now: Instant) -> bool {
        self.running || self.checklist.highlighting(now) || self.quit_armed(now)
    }

    /// A first Ctrl+C was pressed and a second one now quits.
    pub fn quit_armed(&self, now: Instant) -> bool {
        self.ctrl_c_at
            .is_some_and(|t| now.saturating_duration_since(t) < QUIT_ARM_FOR)
    }

    /// How long the plan's active item has been in progress; the clock stops
    /// when the turn does.
    pub fn active_for(&self, now: Instant) -> Duration {
        let until = if self.running {
            now
        } else {
            self.turn_ended.unwrap_or(now)
        };
        self.checklist
            .active_since
            .as_ref()
            .map(|(_, t)| until.saturating_duration_since(*t))
            .unwrap_or_default()
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// Replaces the input with `lines`, the cursor at the end.
    pub fn set_input(&mut self, lines: Vec<String>) {
        let mut area = input_area(lines);
        area.move_cursor(ratatui_textarea::CursorMove::Bottom);
        area.move_cursor(ratatui_textarea::CursorMove::End);
        self.input = area;
    }
}

fn new_input() -> TextArea<'static> {
    input_area(Vec::new())
}

/// The input box holding `lines`, styled and with its placeholder.
fn input_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_cursor_line_style(ratatui::style::Style::new());
    area.set_placeholder_text("Type a task · Enter sends · Alt+Enter new line · ? help");
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scroll_keeps_its_place_while_content_grows() {
        let mut s = Scroll::following();
        assert_eq!(s.resolve(100, 10), 90);
        s.up(5);
        assert_eq!(s.resolve(100, 10), 85);
        // More output arrives: the view does not move.
        assert_eq!(s.resolve(150, 10), 85);
        s.end(true);
        assert_eq!(s.resolve(200, 10), 190);
        s.up(1);
        s.down(100, true);
        assert!(s.follow);
    }

    #[test]
    fn output_log_is_bounded_and_spills_to_disk() {
        let mut log = OutputLog::default();
        let line = "x".repeat(99) + "\n";
        for _ in 0..20_000 {
            log.push(&line);
        }
        assert_eq!(log.total_bytes(), 2_000_000);
        assert!(log.text().len() < OUTPUT_MEMORY_CAP + 200);
        let path = log.spill_path().expect("spilled").clone();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2_000_000);
        assert!(log.text().contains("bytes not shown; full output in"));
        assert_eq!(log.last_lines(2), vec!["x".repeat(99), "x".repeat(99)]);
        drop(log);
        assert!(!path.exists(), "the spill file goes with the session");
    }

    #[test]
    fn small_output_stays_whole() {
        let mut log = OutputLog::default();
        log.push("héllo\nwörld\n");
        assert_eq!(log.text(), "héllo\nwörld\n");
        assert_eq!(log.last_lines(5), vec!["héllo", "wörld"]);
        assert!(log.spill_path().is_none());
    }
}
