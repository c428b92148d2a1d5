//! The app loop: merges terminal input, engine events and a tick for
//! animations in one `select!`, and draws at most ~60 frames per second
//! and only when something changed. Invariant: with nothing running and
//! nothing animating it sleeps until the next input (no idle wake-ups).

use std::time::{Duration, Instant};

use ratatui::crossterm::event::Event as TermEvent;

use super::input::TermInput;
use tokio::signal::unix::{SignalKind, signal};

use super::outside;
use super::sessions;
use super::spill::SpillFiles;
use super::state::{App, NoticeKind};
use super::style::Palette;
use super::terminal::{self, TerminalGuard};
use super::update::{self, Effect};
use super::view;
use crate::agent::AgentHandle;
use crate::events::{Envelope, Op};
use crate::pricing::Price;
use crate::session::{SessionStore, now_ms};

const FRAME: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(100);
/// Terminal input errors in a row after which the input is taken as gone.
const MAX_INPUT_ERRORS: u32 = 100;

/// Starts an engine from the settings as they are now: its handle and
/// model, or the first-run help saying what is still missing.
pub type StartEngine = Box<dyn FnMut() -> Result<(AgentHandle, String), String>>;

pub struct TuiOptions {
    pub model: String,
    pub workspace: String,
    pub initial_prompt: Option<String>,
    /// The engine, or `None` with the reason no provider could be set up.
    pub engine: Result<AgentHandle, String>,
    /// Reads the settings again and starts an engine: tried when the app
    /// opened without one and the user sends a message or presses F5
    /// (a key added to the config file then works without a restart).
    pub start: Option<StartEngine>,
    pub palette: Palette,
    /// What the models cost, for the cost in the status line.
    pub prices: Prices,
    /// Where sessions are stored (for `/resume` and `/export`), if kept.
    pub sessions: Option<SessionStore>,
    /// Open the session picker first (`waypoint -r` without an id).
    pub pick_session: bool,
    /// The project instructions files in the system prompt: path and size.
    pub instructions: Vec<(String, u64)>,
    /// A warning for the first screen (e.g. why there is no sandbox).
    pub notice: Option<String>,
    /// What the app follows of the settings.
    pub settings: AppSettings,
}

/// The settings the app itself follows.
pub struct AppSettings {
    /// How many times a failed request is retried (for the status line).
    pub max_retries: Option<u32>,
    /// When and how to send terminal notifications.
    pub notify: super::notify::Notifier,
}

/// What the models cost.
pub struct Prices {
    /// The model's price, when known.
    pub model: Option<Price>,
    /// The config file's prices, for models switched to with `/model`.
    pub table: std::collections::BTreeMap<String, Price>,
}

impl Prices {
    /// `model`'s price in `table` (or the built-in one), and the table.
    pub fn of(model: &str, table: &std::collections::BTreeMap<String, Price>) -> Self {
        Self {
            model: crate::pricing::price_of(model, table),
            table: table.clone(),
        }
    }
}

/// How the full-screen app ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The user quit.
    Quit,
    /// SIGTERM.
    Terminated,
    /// SIGHUP: the terminal went away.
    HungUp,
    /// SIGINT from outside (`kill -INT`, an IDE's stop button): in raw
    /// mode Ctrl+C is a key, so this signal is never the user's keyboard.
    Interrupted,
}

impl Ended {
    /// The process exit code: 0, or 128 + the signal's number.
    pub fn exit_code(self) -> i32 {
        match self {
            Ended::Quit => 0,
            Ended::Terminated => 143,
            Ended::HungUp => 129,
            Ended::Interrupted => 130,
        }
    }
}

/// How the app ended, and the session it recorded (id, transcript path).
#[derive(Debug)]
pub struct Exit {
    pub ended: Ended,
    pub session: Option<(String, String)>,
}

/// Runs the full-screen app until the user quits or a signal arrives:
/// opens the app, starts the loop, and stops the engine at the end.
pub async fn run(mut opts: TuiOptions) -> std::io::Result<Exit> {
    let now = Instant::now();
    let mut app = open_app(&mut opts, now);
    let (files_tx, files_rx) = tokio::sync::mpsc::unbounded_channel();
    let engine = match opts.engine {
        Ok(handle) => Some(handle),
        Err(reason) => {
            update::no_engine(&mut app, reason, now);
            None
        }
    };
    let mut guard = TerminalGuard::enter()?;
    let mut lp = Loop {
        engine,
        start: opts.start,
        io: Io {
            spills: SpillFiles::default(),
            sessions: opts.sessions,
            files: files_tx,
        },
        files: files_rx,
        term_events: TermInput::start()?,
        signals: Signals::new()?,
        input_errors: 0,
    };
    if let Some(prompt) = opts.initial_prompt.filter(|p| !p.trim().is_empty()) {
        app.input.set_text(&prompt);
        let effects = update::on_key(&mut app, enter_key(), now);
        lp.apply(&mut app, effects);
    }
    if opts.pick_session {
        lp.apply(&mut app, vec![Effect::OpenPicker]);
    }
    // A terminal error ends the loop (not the function), so the engine is
    // still stopped below before the error is returned.
    let outcome = match lp.run(&mut app, &mut guard).await {
        // Writing to a terminal that hung up fails with EIO: it ended as by
        // SIGHUP, which may come after (or never, when it is not the
        // controlling terminal).
        Err(e) if e.raw_os_error() == Some(libc::EIO) => Ok(Ended::HungUp),
        other => other,
    };
    lp.stop_engine().await;
    drop(guard);
    outcome.map(|ended| Exit {
        ended,
        session: app.status.place.take_session(),
    })
}

/// The app as it opens: the status line's model, prices and place, the
/// settings shown from the start, and the first screen's warning.
fn open_app(opts: &mut TuiOptions, now: Instant) -> App {
    let model = std::mem::take(&mut opts.model);
    let workspace = std::mem::take(&mut opts.workspace);
    let mut app = App::new(model, workspace, opts.palette, now);
    app.status.accounts.set_price(opts.prices.model);
    app.status
        .place
        .set_instructions(std::mem::take(&mut opts.instructions));
    if let Some(notice) = opts.notice.take() {
        app.notice(NoticeKind::Warning, notice);
    }
    app.status.engine.set_max_retries(opts.settings.max_retries);
    app.notify = opts.settings.notify.clone();
    // Read once: the status line shows where the session works.
    let home = std::env::var("HOME").ok();
    let branch = crate::context::git_branch(std::path::Path::new(app.status.place.workspace()));
    app.status.place.set_place(home.as_deref(), branch);
    app.status
        .accounts
        .set_prices(std::mem::take(&mut opts.prices.table));
    app
}

/// The signals that end the app: SIGTERM, SIGHUP and SIGINT from outside.
struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    winch: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            winch: signal(SignalKind::window_change())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }
}

/// What one wake of the loop brought.
enum Wake {
    /// Effects to carry out, and whether the screen changed.
    Changed {
        effects: Vec<Effect>,
        dirty: bool,
    },
    Ended(Ended),
    Failed(std::io::Error),
}

impl Wake {
    fn redraw(effects: Vec<Effect>) -> Self {
        Wake::Changed {
            effects,
            dirty: true,
        }
    }
}

/// What the loop owns besides the app and the terminal: the engine (and
/// how to start one), the effects' outside world, the terminal's input,
/// the file listing's channel and the signals.
struct Loop {
    engine: Option<AgentHandle>,
    start: Option<StartEngine>,
    io: Io,
    files: tokio::sync::mpsc::UnboundedReceiver<(Vec<String>, bool)>,
    term_events: TermInput,
    signals: Signals,
    /// Terminal input errors in a row.
    input_errors: u32,
}

impl Loop {
    /// Draws when something changed (at most once a frame) and sleeps
    /// until the next input, engine event, frame or animation tick, until
    /// the app ends.
    async fn run(&mut self, app: &mut App, guard: &mut TerminalGuard) -> std::io::Result<Ended> {
        let mut dirty = true;
        let mut last_draw: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if dirty && last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
                guard
                    .terminal
                    .draw(|f| view::draw(f, app, Instant::now()))?;
                dirty = false;
                last_draw = Some(Instant::now());
            }
            let next_frame = if dirty {
                last_draw.map(|t| t + FRAME)
            } else {
                None
            };
            let next_tick = app.animating(now).then(|| now + TICK);
            let wake = match (next_frame, next_tick) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let effects = match self.wait(app, guard, wake).await {
                Wake::Changed {
                    effects,
                    dirty: changed,
                } => {
                    dirty |= changed;
                    effects
                }
                Wake::Ended(ended) => return Ok(ended),
                Wake::Failed(e) => return Err(e),
            };
            if self.carry_out(app, guard, effects).await? {
                return Ok(Ended::Quit);
            }
        }
    }

    /// Waits for the next thing to happen and takes it into the app.
    async fn wait(
        &mut self,
        app: &mut App,
        guard: &mut TerminalGuard,
        wake: Option<Instant>,
    ) -> Wake {
        tokio::select! {
            ev = self.term_events.next() => self.on_terminal(app, guard, ev),
            ev = recv(&mut self.engine) => Wake::redraw(self.on_engine(app, ev)),
            Some((files, cut)) = self.files.recv() => {
                update::files_listed(app, files, cut);
                Wake::redraw(Vec::new())
            }
            _ = sleep_until(wake), if wake.is_some() => Wake::redraw(Vec::new()),
            _ = self.signals.term.recv() => Wake::Ended(Ended::Terminated),
            _ = self.signals.hup.recv() => Wake::Ended(Ended::HungUp),
            // Terminal input is read on its own thread, which does not see
            // a resize: it is taken here.
            _ = self.signals.winch.recv() => match guard.terminal.autoresize() {
                Ok(()) => Wake::redraw(Vec::new()),
                Err(e) => Wake::Failed(e),
            },
            // Like SIGTERM: the terminal is given back and the running
            // command is stopped with everything it started.
            _ = self.signals.int.recv() => Wake::Ended(Ended::Interrupted),
        }
    }

    /// A key, the mouse, a paste or a resize; the end of the input, or
    /// too many errors in a row.
    fn on_terminal(
        &mut self,
        app: &mut App,
        guard: &mut TerminalGuard,
        ev: Option<std::io::Result<TermEvent>>,
    ) -> Wake {
        if matches!(ev, Some(Ok(_))) {
            self.input_errors = 0;
        }
        match ev {
            Some(Ok(TermEvent::Key(key))) => Wake::redraw(update::on_key(app, key, Instant::now())),
            // Mouse capture reports motion too: only the wheel redraws.
            Some(Ok(TermEvent::Mouse(m))) => Wake::Changed {
                effects: Vec::new(),
                dirty: update::on_mouse(app, m),
            },
            Some(Ok(focus @ (TermEvent::FocusGained | TermEvent::FocusLost))) => {
                app.notify.set_focus(focus == TermEvent::FocusGained);
                Wake::Changed {
                    effects: Vec::new(),
                    dirty: false,
                }
            }
            Some(Ok(TermEvent::Paste(text))) => Wake::redraw(update::on_paste(app, &text)),
            Some(Ok(TermEvent::Resize(..))) => match guard.terminal.autoresize() {
                Ok(()) => Wake::redraw(Vec::new()),
                Err(e) => Wake::Failed(e),
            },
            Some(Err(e)) => {
                tracing::warn!(error = %e, "terminal input error");
                self.input_errors += 1;
                if self.input_errors >= MAX_INPUT_ERRORS {
                    return Wake::Failed(e);
                }
                Wake::Changed {
                    effects: Vec::new(),
                    dirty: false,
                }
            }
            // The terminal hung up (its reader saw it before the signal).
            None => Wake::Ended(Ended::HungUp),
        }
    }

    /// An engine event and the rest of its burst (drawn once), or the
    /// engine's end.
    fn on_engine(&mut self, app: &mut App, ev: Option<Envelope>) -> Vec<Effect> {
        let Some(envelope) = ev else {
            self.engine = None;
            update::engine_stopped(app, Instant::now());
            return Vec::new();
        };
        let now = Instant::now();
        let mut effects = update::on_envelope(app, envelope, now);
        if let Some(handle) = self.engine.as_mut() {
            while let Ok(envelope) = handle.events.try_recv() {
                effects.extend(update::on_envelope(app, envelope, now));
            }
        }
        effects
    }

    /// Carries out `effects`: those of the terminal first, then the rest;
    /// whether to quit.
    async fn carry_out(
        &mut self,
        app: &mut App,
        guard: &mut TerminalGuard,
        effects: Vec<Effect>,
    ) -> std::io::Result<bool> {
        if effects.contains(&Effect::Redraw) {
            guard.terminal.clear()?;
        }
        let effects = outside_effects(app, guard, &mut self.term_events, effects).await?;
        Ok(self.apply(app, effects))
    }

    fn apply(&mut self, app: &mut App, effects: Vec<Effect>) -> bool {
        apply(
            app,
            &mut self.engine,
            &mut self.start,
            &mut self.io,
            effects,
        )
    }

    /// Interrupts and stops the engine, waiting a little for it.
    async fn stop_engine(&mut self) {
        if let Some(handle) = self.engine.take() {
            let _ = handle.ops.send(Op::Interrupt);
            let _ = handle.ops.send(Op::Quit);
            let _ = tokio::time::timeout(Duration::from_secs(3), handle.task).await;
        }
    }
}

/// What effects write to and read from besides the engine.
struct Io {
    spills: SpillFiles,
    sessions: Option<SessionStore>,
    /// Where the `@` picker's listing is sent when done.
    files: tokio::sync::mpsc::UnboundedSender<(Vec<String>, bool)>,
}

/// Carries out the effects that need the terminal itself (the editor, the
/// clipboard, mouse capture); returns the others.
async fn outside_effects(
    app: &mut App,
    guard: &mut TerminalGuard,
    term_events: &mut TermInput,
    effects: Vec<Effect>,
) -> std::io::Result<Vec<Effect>> {
    let mut rest = Vec::with_capacity(effects.len());
    for effect in effects {
        match effect {
            Effect::Edit(text) => {
                // The input reader must not take the editor's keys: it
                // pauses until the terminal is the app's again.
                term_events.pause();
                terminal::suspend();
                let result = outside::run_editor(&text).await;
                let resumed = terminal::resume(&mut guard.terminal, !app.status.ui.mouse_off());
                term_events.resume();
                resumed?;
                update::edited(app, result);
            }
            Effect::Copy(text) => {
                if let Err(e) =
                    terminal::write_sequence(&mut guard.terminal, &outside::osc52(&text))
                {
                    app.notice(NoticeKind::Error, format!("Copying failed: {e}"));
                }
            }
            Effect::ReadImage(path) => {
                let root = std::path::PathBuf::from(app.status.place.workspace());
                let read = outside::read_image(&root, path.as_deref()).await;
                update::image_read(app, path, read);
            }
            Effect::MouseCapture(on) => terminal::set_mouse(&mut guard.terminal, on)?,
            Effect::Notify(sequence) => {
                // A terminal that cannot show it loses nothing.
                let _ = terminal::write_sequence(&mut guard.terminal, &sequence);
            }
            other => rest.push(other),
        }
    }
    Ok(rest)
}

/// Carries out effects; returns true to quit.
fn apply(
    app: &mut App,
    engine: &mut Option<AgentHandle>,
    start: &mut Option<StartEngine>,
    io: &mut Io,
    effects: Vec<Effect>,
) -> bool {
    let mut quit = false;
    for effect in effects {
        match effect {
            Effect::Send(op) => {
                if let Some(handle) = engine
                    && handle.ops.send(op).is_err()
                {
                    app.notice(
                        NoticeKind::Error,
                        "The engine is not running; see the log file.",
                    );
                }
            }
            Effect::SpillOutput { serial, text } => io.spills.write(app, serial, &text),
            Effect::OpenPicker => sessions::open_picker(app, io.sessions.as_ref(), now_ms()),
            Effect::ItemHistory => sessions::item_history(app, io.sessions.as_ref()),
            Effect::LoadPrompts => sessions::load_prompts(app, io.sessions.as_ref()),
            Effect::Export { id, path } => {
                sessions::export(app, io.sessions.as_ref(), &id, path.as_deref())
            }
            Effect::StartEngine => {
                if engine.is_some() {
                    continue;
                }
                match start.as_mut().map(|start| start()) {
                    Some(Ok((handle, model))) => {
                        *engine = Some(handle);
                        update::engine_started(app, model, Instant::now());
                    }
                    Some(Err(help)) => update::no_engine(app, help, Instant::now()),
                    None => {}
                }
            }
            Effect::ListFiles => {
                let tx = io.files.clone();
                let root = std::path::PathBuf::from(app.status.place.workspace());
                tokio::task::spawn_blocking(move || {
                    let _ = tx.send(outside::list_files(&root, outside::MAX_FILES));
                });
            }
            // Carried out by `outside_effects` before.
            Effect::Edit(_)
            | Effect::Copy(_)
            | Effect::ReadImage(_)
            | Effect::MouseCapture(_)
            | Effect::Redraw
            | Effect::Notify(_) => {}
            Effect::Quit => quit = true,
        }
    }
    quit
}

async fn recv(engine: &mut Option<AgentHandle>) -> Option<Envelope> {
    match engine {
        Some(handle) => handle.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

fn enter_key() -> ratatui::crossterm::event::KeyEvent {
    ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Enter,
        ratatui::crossterm::event::KeyModifiers::NONE,
    )
}
