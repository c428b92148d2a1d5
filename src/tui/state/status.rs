//! The session's status, as the status line shows it: what the agent is
//! doing and since when, the model, tokens (cached ones apart) and cost,
//! how full the context window is, and whether an engine is there at all.
//! Invariant: token totals only grow, per model too; prompt tokens are
//! always input + cache reads + cache writes.

use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use crate::llm::Usage;
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

pub struct Status {
    pub model: String,
    pub workspace: String,
    pub activity: Activity,
    pub activity_since: Instant,
    pub turn_started: Option<Instant>,
    /// When the last turn stopped (timers freeze there while nothing runs).
    pub turn_ended: Option<Instant>,
    pub running: bool,
    pub can_resume: bool,
    /// Session totals, as the engine counts them.
    pub totals: Usage,
    /// This turn's tokens (all prompt tokens, output).
    pub turn_tokens: (u64, u64),
    /// How full the context window was after the last request (used, window).
    pub context: Option<(u64, u64)>,
    /// Tokens per model, in the order the models were first used.
    pub by_model: Vec<ModelUsage>,
    /// The current model's price, when known.
    pub price: Option<Price>,
    /// Prices from the config file, for models switched to later.
    pub prices: BTreeMap<String, Price>,
    pub ctrl_c_at: Option<Instant>,
    /// False when no provider is configured (or the engine died): submissions
    /// explain why with `setup_help`.
    pub has_engine: bool,
    /// What to tell the user who sends a message without an engine.
    pub setup_help: Option<String>,
    /// The recorded session: its id and its transcript's path.
    pub session: Option<(String, String)>,
    /// The working folder, shortened (`~/src/proj`), and the git branch
    /// read once at start; empty when not known.
    pub folder: String,
    pub branch: Option<String>,
    /// How many times a request is retried (for `retrying (3/6)`), if known.
    pub max_retries: Option<u32>,
    /// The project instructions files read into the system prompt (path, bytes).
    pub instructions: Vec<(String, u64)>,
    /// The approval mode, and whether `bash` is sandboxed in it.
    pub approval: Option<(crate::events::ApprovalMode, bool)>,
    /// What a resumed session's start has to say, held until its history
    /// has replaced the screen (which would clear it).
    pub session_notices: Vec<(super::NoticeKind, String)>,
    /// Mouse capture was switched off (F2): the terminal selects text.
    pub mouse_off: bool,
}

impl Status {
    pub fn new(model: String, workspace: String, now: Instant) -> Self {
        Self {
            model: crate::text::clean_line(&model).into_owned(),
            workspace: crate::text::clean_line(&workspace).into_owned(),
            activity: Activity::Idle,
            activity_since: now,
            turn_started: None,
            turn_ended: None,
            running: false,
            can_resume: false,
            totals: Usage::default(),
            turn_tokens: (0, 0),
            context: None,
            by_model: Vec::new(),
            price: None,
            prices: BTreeMap::new(),
            ctrl_c_at: None,
            has_engine: true,
            mouse_off: false,
            setup_help: None,
            session: None,
            approval: None,
            instructions: Vec::new(),
            max_retries: None,
            folder: String::new(),
            branch: None,
            session_notices: Vec::new(),
        }
    }

    /// Where the session works, as the status line shows it: the folder
    /// (under `home` as `~/…`) and the branch (`None`: not a repository;
    /// `Some(None)`: a detached HEAD).
    pub fn set_place(&mut self, home: Option<&str>, branch: Option<Option<String>>) {
        self.folder = short_folder(&self.workspace, home);
        self.branch = branch.map(|b| b.unwrap_or_else(|| "detached".into()));
    }

    pub fn set_activity(&mut self, activity: Activity, now: Instant) {
        if self.activity != activity {
            self.activity = activity;
            self.activity_since = now;
        }
    }

    /// A first Ctrl+C was pressed and a second one now quits.
    pub fn quit_armed(&self, now: Instant) -> bool {
        self.ctrl_c_at
            .is_some_and(|t| now.saturating_duration_since(t) < QUIT_ARM_FOR)
    }

    /// Where timers stop: now while a turn runs, else when it ended.
    pub fn clock_until(&self, now: Instant) -> Instant {
        if self.running {
            now
        } else {
            self.turn_ended.unwrap_or(now)
        }
    }

    pub fn start_turn(&mut self, now: Instant) {
        self.running = true;
        self.can_resume = false;
        self.turn_started = Some(now);
        self.turn_tokens = (0, 0);
        self.set_activity(Activity::Thinking, now);
    }

    pub fn end_turn(&mut self, activity: Activity, now: Instant) {
        if self.running {
            self.turn_ended = Some(now);
        }
        self.running = false;
        self.set_activity(activity, now);
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

    /// The engine switched to `model`.
    pub fn set_model(&mut self, model: String) {
        self.price = price_of(&model, &self.prices);
        self.model = crate::text::clean_line(&model).into_owned();
    }

    /// All prompt tokens of the session: input, cache reads and writes.
    pub fn prompt_tokens(&self) -> u64 {
        self.totals.prompt_tokens()
    }

    /// The share of the session's prompt tokens read from the cache.
    pub fn cached_percent(&self) -> Option<u64> {
        self.totals.cached_percent()
    }

    /// How full the context window is, in percent (rounded down), once a
    /// request reported it.
    pub fn context_percent(&self) -> Option<u64> {
        self.context
            .filter(|&(_, window)| window > 0)
            .map(|(used, window)| used.saturating_mul(100) / window)
    }

    /// Counts one request's tokens for `model` (the current one when empty);
    /// `totals` are the session's, as the engine counts them.
    /// Forgets the tokens counted so far (another session's history follows).
    pub fn clear_usage(&mut self) {
        self.totals = Usage::default();
        self.turn_tokens = (0, 0);
        self.context = None;
        self.by_model.clear();
    }

    pub fn add_usage(&mut self, model: &str, request: Usage, totals: Usage) {
        self.totals = totals;
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
}
