//! The session's status, as the status line shows it, in five small
//! parts: the turn's clock (what the agent is doing and since when), the
//! accounts (model, tokens with cached ones apart, cost, the context
//! window), the place (folder, branch, instructions, the recorded
//! session), the engine's presence (and what it said of itself) and the
//! UI's own flags. Invariants, kept by each part's methods (their fields
//! are private): a running turn cannot be resumed; token counts change
//! only by a request's usage (they grow) or when another session's history
//! replaces them; prompt tokens are always input + cache reads + cache
//! writes; without an engine there is always help saying why.

mod apply;
mod mcp;

pub use mcp::McpView;

use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use crate::chat::Usage;
use crate::pricing::{Price, price_of};

/// How long a first Ctrl+C waits for the second.
pub const QUIT_ARM_FOR: Duration = Duration::from_secs(2);

/// What the agent is doing, for the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activity {
    Idle,
    Thinking,
    Streaming,
    Tool {
        name: String,
    },
    Retrying {
        reason: String,
    },
    /// The conversation is being summarised and rebuilt.
    Compacting,
    /// A tool call waits for the user's approval.
    Approval,
    /// The task given at start waits for MCP servers still starting (Esc
    /// skips the wait).
    McpWait,
    Interrupted,
    Failed,
    NoProvider,
}

/// The longest folder shown whole; a longer one keeps its last folders.
const FOLDER_WIDTH: usize = 24;

/// `~/src/proj` for `/home/me/src/proj`; a long path keeps its end
/// (`…/deep/proj`).
pub fn short_folder(path: &str, home: Option<&str>) -> String {
    let home = home
        .map(|h| h.trim_end_matches('/'))
        .filter(|h| !h.is_empty());
    let path = match home.and_then(|h| path.strip_prefix(h)) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_string(),
    };
    let path = crate::text::clean_line(&path).into_owned();
    if crate::tui::wrap::str_width(&path) <= FOLDER_WIDTH {
        return path;
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for keep in (1..=2).rev() {
        let tail = parts[parts.len().saturating_sub(keep)..].join("/");
        let short = format!("…/{tail}");
        if crate::tui::wrap::str_width(&short) <= FOLDER_WIDTH || keep == 1 {
            return crate::tui::wrap::truncate(&short, FOLDER_WIDTH);
        }
    }
    path
}

/// Tokens spent with one model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelUsage {
    pub model: String,
    pub usage: Usage,
    pub price: Option<Price>,
}

impl ModelUsage {
    /// What this model cost, cache reads and writes at their own prices.
    pub fn cost(&self) -> Option<f64> {
        self.price.map(|p| crate::pricing::cost(p, &self.usage))
    }
}

/// Everything the status line shows, by concern.
pub struct Status {
    /// What the agent is doing, since when, and the turn's clock.
    pub turn: Turn,
    /// The model, tokens, cost and the context window.
    pub accounts: Accounts,
    /// Where the session works and the session it records.
    pub place: Place,
    /// Whether an engine is there, and its settings it reported.
    pub engine: Presence,
    /// The UI's own switches (quit armed, mouse capture).
    pub ui: UiFlags,
    /// The MCP servers' states.
    pub mcp: McpView,
    /// The hooks that run and those that wait for approval, one line
    /// each, as the engine told them.
    pub hooks: HooksView,
    /// The session's skills and custom commands, for the command list.
    pub catalog: Vec<crate::events::CatalogEntry>,
    /// The session's background jobs, as the engine last told them.
    pub jobs: Vec<crate::events::JobInfo>,
}

/// See [`Status::hooks`].
#[derive(Debug, Default)]
pub struct HooksView {
    pub active: Vec<String>,
    pub waiting: Vec<String>,
}

impl Status {
    pub fn new(model: String, workspace: String, now: Instant) -> Self {
        Self {
            turn: Turn::new(now),
            accounts: Accounts::new(model),
            place: Place::new(workspace),
            engine: Presence::default(),
            ui: UiFlags::default(),
            mcp: McpView::default(),
            hooks: HooksView::default(),
            catalog: Vec::new(),
            jobs: Vec::new(),
        }
    }

    /// A turn began: its clock runs and its tokens count from zero.
    pub fn start_turn(&mut self, now: Instant) {
        self.turn.start(now);
        self.accounts.start_turn();
    }
}

/// What the agent is doing and since when, whether a turn runs and when
/// it began and ended, and whether a stopped one can be resumed.
#[derive(Debug)]
pub struct Turn {
    activity: Activity,
    since: Instant,
    started: Option<Instant>,
    /// When the last turn stopped (timers freeze there while nothing runs).
    ended: Option<Instant>,
    running: bool,
    resumable: bool,
}

impl Turn {
    fn new(now: Instant) -> Self {
        Self {
            activity: Activity::Idle,
            since: now,
            started: None,
            ended: None,
            running: false,
            resumable: false,
        }
    }

    pub fn activity(&self) -> &Activity {
        &self.activity
    }

    /// When the current activity began.
    pub fn since(&self) -> Instant {
        self.since
    }

    /// A turn runs (from `TurnStarted` to its end).
    pub fn running(&self) -> bool {
        self.running
    }

    /// When the running turn began (`None` while none runs).
    pub fn started(&self) -> Option<Instant> {
        self.started.filter(|_| self.running)
    }

    /// A stopped turn can be resumed (Enter on an empty input, F5).
    pub fn can_resume(&self) -> bool {
        self.resumable
    }

    /// Whether the stopped turn can be resumed; never while one runs.
    pub fn set_resumable(&mut self, resumable: bool) {
        self.resumable = resumable && !self.running;
    }

    pub fn set_activity(&mut self, activity: Activity, now: Instant) {
        if self.activity != activity {
            self.activity = activity;
            self.since = now;
        }
    }

    /// Where timers stop: now while a turn runs, else when it ended.
    pub fn clock_until(&self, now: Instant) -> Instant {
        if self.running {
            now
        } else {
            self.ended.unwrap_or(now)
        }
    }

    fn start(&mut self, now: Instant) {
        self.running = true;
        self.resumable = false;
        self.started = Some(now);
        self.set_activity(Activity::Thinking, now);
    }

    /// The turn ended (or never ran and something else stopped): the
    /// clock freezes and `activity` says how.
    pub fn end(&mut self, activity: Activity, now: Instant) {
        if self.running {
            self.ended = Some(now);
        }
        self.running = false;
        self.set_activity(activity, now);
    }
}

/// The model in use and what the session has spent: tokens per model
/// and in all, this turn's, the cost at known prices, and how full the
/// context window is.
#[derive(Debug)]
pub struct Accounts {
    model: String,
    /// The current model's price, when known.
    price: Option<Price>,
    /// Prices from the config file, for models switched to later.
    prices: BTreeMap<String, Price>,
    /// Session totals, as the engine counts them (the root thread's).
    totals: Usage,
    /// The subagents' requests.
    children: Usage,
    /// This turn's tokens (all prompt tokens, output).
    turn_tokens: (u64, u64),
    /// How full the context window was after the last request (used, window).
    context: Option<(u64, u64)>,
    /// Tokens per model, in the order the models were first used.
    by_model: Vec<ModelUsage>,
}

impl Accounts {
    fn new(model: String) -> Self {
        Self {
            model: crate::text::clean_line(&model).into_owned(),
            price: None,
            prices: BTreeMap::new(),
            totals: Usage::default(),
            children: Usage::default(),
            turn_tokens: (0, 0),
            context: None,
            by_model: Vec::new(),
        }
    }

    /// The model in use (one clean line).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The engine switched to `model`.
    pub fn set_model(&mut self, model: String) {
        self.price = price_of(&model, &self.prices);
        self.model = crate::text::clean_line(&model).into_owned();
    }

    /// The current model's price as the settings give it.
    pub fn set_price(&mut self, price: Option<Price>) {
        self.price = price;
    }

    /// The config file's prices, for models switched to later.
    pub fn set_prices(&mut self, prices: BTreeMap<String, Price>) {
        self.prices = prices;
    }

    pub fn prices(&self) -> &BTreeMap<String, Price> {
        &self.prices
    }

    /// The session's totals, as the engine counts them, its subagents'
    /// requests included.
    pub fn totals(&self) -> Usage {
        let mut all = self.totals;
        all.add(&self.children);
        all
    }

    /// This turn's tokens: all prompt tokens, output.
    pub fn turn_tokens(&self) -> (u64, u64) {
        self.turn_tokens
    }

    /// Tokens per model, in the order the models were first used.
    pub fn by_model(&self) -> &[ModelUsage] {
        &self.by_model
    }

    /// How full the context window was after the last request (used, window).
    pub fn context(&self) -> Option<(u64, u64)> {
        self.context
    }

    /// How full the context window is after a request (used, window).
    pub fn set_context(&mut self, used: u64, window: u64) {
        self.context = Some((used, window));
    }

    /// What the session cost so far, when every model used has a known price
    /// (before any usage is reported, at the current model's price); cache
    /// reads and writes at their own prices.
    pub fn cost(&self) -> Option<f64> {
        if self.by_model.is_empty() {
            return self.price.map(|p| crate::pricing::cost(p, &self.totals));
        }
        self.by_model.iter().map(ModelUsage::cost).sum()
    }

    /// All prompt tokens of the session: input, cache reads and writes.
    pub fn prompt_tokens(&self) -> u64 {
        self.totals().prompt_tokens()
    }

    /// The share of the session's prompt tokens read from the cache.
    pub fn cached_percent(&self) -> Option<u64> {
        self.totals().cached_percent()
    }

    /// How full the context window is, in percent (rounded down), once a
    /// request reported it.
    pub fn context_percent(&self) -> Option<u64> {
        self.context
            .filter(|&(_, window)| window > 0)
            .map(|(used, window)| used.saturating_mul(100) / window)
    }

    /// Forgets the tokens counted so far (another session's history follows).
    pub fn clear_usage(&mut self) {
        self.totals = Usage::default();
        self.children = Usage::default();
        self.turn_tokens = (0, 0);
        self.context = None;
        self.by_model.clear();
    }

    /// Counts one request's tokens for `model` (the current one when empty);
    /// `totals` are the session's, as the engine counts them.
    pub fn add_usage(&mut self, model: &str, request: Usage, totals: Usage) {
        self.totals = totals;
        self.count(model, request);
    }

    /// A subagent's request: counted in the session's totals, the turn's
    /// tokens and its model's.
    pub fn add_child_usage(&mut self, model: &str, request: Usage) {
        self.children.add(&request);
        self.count(model, request);
    }

    /// A request's tokens in the turn's and its model's counts.
    fn count(&mut self, model: &str, request: Usage) {
        self.turn_tokens.0 += request.prompt_tokens();
        self.turn_tokens.1 += request.output_tokens;
        let model = if model.is_empty() { &self.model } else { model };
        match self.by_model.iter_mut().find(|u| u.model == model) {
            Some(u) => u.usage.add(&request),
            None => {
                let price = if model == self.model {
                    self.price
                } else {
                    price_of(model, &self.prices)
                };
                self.by_model.push(ModelUsage {
                    model: model.to_string(),
                    usage: request,
                    price,
                });
            }
        }
    }

    fn start_turn(&mut self) {
        self.turn_tokens = (0, 0);
    }
}

/// Where the session works (the workspace, shortened for the status line
/// with its git branch), the project instructions read for it, and the
/// session being recorded.
#[derive(Debug)]
pub struct Place {
    workspace: String,
    /// The working folder, shortened (`~/src/proj`), and the git branch
    /// read once at start; empty when not known.
    folder: String,
    branch: Option<String>,
    /// The project instructions files read into the system prompt (path, bytes).
    instructions: Vec<(String, u64)>,
    /// The recorded session: its id and its transcript's path.
    session: Option<(String, String)>,
    /// What a resumed session's start has to say, held until its history
    /// has replaced the screen (which would clear it).
    held_notices: Vec<(super::NoticeKind, String)>,
}

impl Place {
    fn new(workspace: String) -> Self {
        Self {
            workspace: crate::text::clean_line(&workspace).into_owned(),
            folder: String::new(),
            branch: None,
            instructions: Vec::new(),
            session: None,
            held_notices: Vec::new(),
        }
    }

    /// The workspace as given (one clean line).
    pub fn workspace(&self) -> &str {
        &self.workspace
    }

    /// Another workspace (its folder is shortened again by `set_place`).
    pub fn set_workspace(&mut self, workspace: &str) {
        self.workspace = crate::text::clean_line(workspace).into_owned();
    }

    /// Where the session works, as the status line shows it: the folder
    /// (under `home` as `~/…`) and the branch (`None`: not a repository;
    /// `Some(None)`: a detached HEAD).
    pub fn set_place(&mut self, home: Option<&str>, branch: Option<Option<String>>) {
        self.folder = short_folder(&self.workspace, home);
        self.branch = branch.map(|b| b.unwrap_or_else(|| "detached".into()));
    }

    /// The shortened folder (empty until `set_place`).
    pub fn folder(&self) -> &str {
        &self.folder
    }

    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// The project instructions files in the system prompt (path, bytes).
    pub fn instructions(&self) -> &[(String, u64)] {
        &self.instructions
    }

    pub fn set_instructions(&mut self, instructions: Vec<(String, u64)>) {
        self.instructions = instructions;
    }

    /// The recorded session: its id and its transcript's path.
    pub fn session(&self) -> Option<&(String, String)> {
        self.session.as_ref()
    }

    /// The engine records session `id` at `path` now.
    pub fn set_session(&mut self, id: String, path: String) {
        self.session = Some((id, path));
    }

    /// The recorded session, taken at the end (to say how to resume it).
    pub fn take_session(&mut self) -> Option<(String, String)> {
        self.session.take()
    }

    /// Holds a resumed session's notices until its history is on screen.
    pub fn hold_notices(&mut self, notices: Vec<(super::NoticeKind, String)>) {
        self.held_notices = notices;
    }

    /// The notices held for after the history (none the second time).
    pub fn take_notices(&mut self) -> Vec<(super::NoticeKind, String)> {
        std::mem::take(&mut self.held_notices)
    }
}

/// Whether an engine is there (no provider set up, or it died: then what
/// to tell the user who sends a message), and what it reported of its
/// settings: the approval mode and how often a request is retried.
#[derive(Debug, Default)]
pub struct Presence {
    /// `Some(help)`: no engine, and why.
    missing: Option<String>,
    /// How many times a request is retried (for `retrying (3/6)`), if known.
    max_retries: Option<u32>,
    /// The approval mode, and whether `bash` is sandboxed in it.
    approval: Option<(crate::events::ApprovalMode, bool)>,
    /// The mode in force before plan mode (an approval's default).
    before_plan: Option<crate::events::ApprovalMode>,
}

impl Presence {
    /// An engine is there: messages can be sent.
    pub fn present(&self) -> bool {
        self.missing.is_none()
    }

    /// What to tell the user who sends a message without an engine.
    pub fn setup_help(&self) -> Option<&str> {
        self.missing.as_deref()
    }

    /// No engine (none could be set up, or it stopped), and why.
    pub fn gone(&mut self, help: String) {
        self.missing = Some(help);
    }

    /// An engine started.
    pub fn arrived(&mut self) {
        self.missing = None;
    }

    pub fn max_retries(&self) -> Option<u32> {
        self.max_retries
    }

    pub fn set_max_retries(&mut self, max: Option<u32>) {
        self.max_retries = max;
    }

    /// The approval mode in force, and whether `bash` is sandboxed in it.
    pub fn approval(&self) -> Option<(crate::events::ApprovalMode, bool)> {
        self.approval
    }

    pub fn set_approval(&mut self, mode: crate::events::ApprovalMode, sandboxed: bool) {
        use crate::events::ApprovalMode::Plan;
        if let Some((was, _)) = self.approval
            && was != Plan
            && mode == Plan
        {
            self.before_plan = Some(was);
        }
        self.approval = Some((mode, sandboxed));
    }

    /// The mode an approved plan runs in unless the user chooses: the one
    /// before plan mode (ask when the app started in plan mode), as the
    /// engine decides it too.
    pub fn before_plan(&self) -> crate::events::ApprovalMode {
        self.before_plan.unwrap_or(crate::events::ApprovalMode::Ask)
    }
}

/// The UI's own switches: a first Ctrl+C armed to quit, mouse capture off.
#[derive(Debug, Default)]
pub struct UiFlags {
    ctrl_c_at: Option<Instant>,
    /// Mouse capture was switched off (F2): the terminal selects text.
    mouse_off: bool,
}

impl UiFlags {
    /// A first Ctrl+C at `now`: a second one within [`QUIT_ARM_FOR`] quits.
    pub fn arm_quit(&mut self, now: Instant) {
        self.ctrl_c_at = Some(now);
    }

    /// Any other key: a Ctrl+C after it is a first one again.
    pub fn disarm_quit(&mut self) {
        self.ctrl_c_at = None;
    }

    /// A first Ctrl+C was pressed and a second one now quits.
    pub fn quit_armed(&self, now: Instant) -> bool {
        self.ctrl_c_at
            .is_some_and(|t| now.saturating_duration_since(t) < QUIT_ARM_FOR)
    }

    /// Mouse capture is off (the terminal selects text).
    pub fn mouse_off(&self) -> bool {
        self.mouse_off
    }

    /// Switches mouse capture; whether it is on now.
    pub fn toggle_mouse(&mut self) -> bool {
        self.mouse_off = !self.mouse_off;
        !self.mouse_off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_turn_cannot_be_resumed() {
        let now = Instant::now();
        let mut s = Status::new("m".into(), "/w".into(), now);
        s.turn.set_resumable(true);
        assert!(s.turn.can_resume());
        s.start_turn(now);
        assert!(!s.turn.can_resume(), "starting a turn uses the resume up");
        s.turn.set_resumable(true);
        assert!(!s.turn.can_resume());
        s.turn.end(Activity::Interrupted, now);
        s.turn.set_resumable(true);
        assert!(s.turn.can_resume());
    }

    #[test]
    fn the_turns_tokens_start_from_zero_and_the_totals_stay() {
        let now = Instant::now();
        let mut s = Status::new("m".into(), "/w".into(), now);
        let request = Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        };
        s.accounts.add_usage("", request, request);
        assert_eq!(s.accounts.turn_tokens(), (10, 5));
        s.start_turn(now);
        assert_eq!(s.accounts.turn_tokens(), (0, 0));
        assert_eq!(s.accounts.totals(), request);
        assert_eq!(s.accounts.by_model()[0].model, "m");
    }

    #[test]
    fn without_an_engine_there_is_help() {
        let mut p = Presence::default();
        assert!(p.present() && p.setup_help().is_none());
        p.gone("set a key".into());
        assert!(!p.present());
        assert_eq!(p.setup_help(), Some("set a key"));
        p.arrived();
        assert!(p.present() && p.setup_help().is_none());
    }
}
