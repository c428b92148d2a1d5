//! The app loop: merges terminal input, engine events and a tick for
//! animations in one `select!`, and draws at most ~60 frames per second
//! and only when something changed. Invariant: with nothing running and
//! nothing animating it sleeps until the next input (no idle wake-ups).

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ratatui::crossterm::event::{Event as TermEvent, EventStream};
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
use crate::events::Op;
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
    /// opened without one and the user sends a message or presses Ctrl+R
    /// (a key added to the config file then works without a restart).
    pub start: Option<StartEngine>,
    pub palette: Palette,
    /// The model's price, when known, for the cost in the status line.
    pub price: Option<Price>,
    /// The config file's prices, for models switched to with `/model`.
    pub prices: std::collections::BTreeMap<String, Price>,
    /// Where sessions are stored (for `/resume` and `/export`), if kept.
    pub sessions: Option<SessionStore>,
    /// Open the session picker first (`waypoint -r` without an id).
    pub pick_session: bool,
    /// The project instructions files in the system prompt: path and size.
    pub instructions: Vec<(String, u64)>,
    /// A warning for the first screen (e.g. why there is no sandbox).
    pub notice: Option<String>,
    /// How many times a failed request is retried.
    pub max_retries: Option<u32>,
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

/// Runs the full-screen app until the user quits or a signal arrives.
/// How the app ended, and the session it recorded (id, transcript path).
#[derive(Debug)]
pub struct Exit {
    pub ended: Ended,
    pub session: Option<(String, String)>,
}

pub async fn run(opts: TuiOptions) -> std::io::Result<Exit> {
    let now = Instant::now();
    let mut app = App::new(opts.model, opts.workspace, opts.palette, now);
    app.status.accounts.set_price(opts.price);
    app.status.place.set_instructions(opts.instructions);
    if let Some(notice) = opts.notice {
        app.notice(NoticeKind::Warning, notice);
    }
    app.status.engine.set_max_retries(opts.max_retries);
    // Read once: the status line shows where the session works.
    let home = std::env::var("HOME").ok();
    let branch = crate::context::git_branch(std::path::Path::new(app.status.place.workspace()));
    app.status.place.set_place(home.as_deref(), branch);
    app.status.accounts.set_prices(opts.prices);
    let (files_tx, mut files_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut io = Io {
        spills: SpillFiles::default(),
        sessions: opts.sessions,
        files: files_tx,
    };
    let mut start = opts.start;
    let mut engine = match opts.engine {
        Ok(handle) => Some(handle),
        Err(reason) => {
            update::no_engine(&mut app, reason, now);
            None
        }
    };
    let mut guard = TerminalGuard::enter()?;
    let mut term_events = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut sigint = signal(SignalKind::interrupt())?;

    if let Some(prompt) = opts.initial_prompt.filter(|p| !p.trim().is_empty()) {
        app.input.set_text(&prompt);
        let effects = update::on_key(&mut app, enter_key(), now);
        apply(&mut app, &mut engine, &mut start, &mut io, effects);
    }
    if opts.pick_session {
        apply(
            &mut app,
            &mut engine,
            &mut start,
            &mut io,
            vec![Effect::OpenPicker],
        );
    }

    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    let mut input_errors = 0;
    // A terminal error ends the loop (not the function), so the engine is
    // still stopped below before the error is returned.
    let mut failure: Option<std::io::Error> = None;
    let mut ended = Ended::Quit;
    loop {
        let now = Instant::now();
        if dirty && last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
            if let Err(e) = guard
                .terminal
                .draw(|f| view::draw(f, &mut app, Instant::now()))
            {
                failure = Some(e);
                break;
            }
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
        let mut effects = Vec::new();
        tokio::select! {
            ev = term_events.next() => {
                if matches!(ev, Some(Ok(_))) {
                    input_errors = 0;
                }
                match ev {
                    Some(Ok(TermEvent::Key(key))) => { effects = update::on_key(&mut app, key, Instant::now()); dirty = true; }
                    // Mouse capture reports motion too: only the wheel redraws.
                    Some(Ok(TermEvent::Mouse(m))) => dirty |= update::on_mouse(&mut app, m),
                    Some(Ok(TermEvent::Paste(text))) => { update::on_paste(&mut app, &text); dirty = true; }
                    Some(Ok(TermEvent::Resize(..))) => {
                        if let Err(e) = guard.terminal.autoresize() {
                            failure = Some(e);
                            break;
                        }
                        dirty = true;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "terminal input error");
                        input_errors += 1;
                        if input_errors >= MAX_INPUT_ERRORS {
                            failure = Some(e);
                            break;
                        }
                    }
                    None => break,
                }
            }
            ev = recv(&mut engine) => {
                match ev {
                    Some(event) => {
                        let now = Instant::now();
                        effects = update::on_event(&mut app, event.event, now);
                        // Drain the burst, then draw once.
                        if let Some(handle) = engine.as_mut() {
                            while let Ok(event) = handle.events.try_recv() {
                                effects.extend(update::on_event(&mut app, event.event, now));
                            }
                        }
                    }
                    None => {
                        engine = None;
                        update::engine_stopped(&mut app, Instant::now());
                    }
                }
                dirty = true;
            }
            Some((files, cut)) = files_rx.recv() => {
                update::files_listed(&mut app, files, cut);
                dirty = true;
            }
            _ = sleep_until(wake), if wake.is_some() => dirty = true,
            _ = sigterm.recv() => {
                ended = Ended::Terminated;
                break;
            }
            _ = sighup.recv() => {
                ended = Ended::HungUp;
                break;
            }
            // Like SIGTERM: the terminal is given back and the running
            // command is stopped with everything it started.
            _ = sigint.recv() => {
                ended = Ended::Interrupted;
                break;
            }
        }
        if effects.contains(&Effect::Redraw)
            && let Err(e) = guard.terminal.clear()
        {
            failure = Some(e);
            break;
        }
        let effects = match outside_effects(&mut app, &mut guard, &mut term_events, effects).await {
            Ok(effects) => effects,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        if apply(&mut app, &mut engine, &mut start, &mut io, effects) {
            break;
        }
    }
    if let Some(handle) = engine {
        let _ = handle.ops.send(Op::Interrupt);
        let _ = handle.ops.send(Op::Quit);
        let _ = tokio::time::timeout(Duration::from_secs(3), handle.task).await;
    }
    drop(guard);
    failure.map_or(
        Ok(Exit {
            ended,
            session: app.status.place.take_session(),
        }),
        Err,
    )
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
    term_events: &mut EventStream,
    effects: Vec<Effect>,
) -> std::io::Result<Vec<Effect>> {
    let mut rest = Vec::with_capacity(effects.len());
    for effect in effects {
        match effect {
            Effect::Edit(text) => {
                // The input reader must not take the editor's keys: it
                // stops with its stream and a new one starts afterwards.
                drop(std::mem::replace(term_events, EventStream::new()));
                terminal::suspend();
                let result = outside::run_editor(&text).await;
                terminal::resume(&mut guard.terminal, !app.status.ui.mouse_off())?;
                update::edited(app, result);
            }
            Effect::Copy(text) => {
                if let Err(e) =
                    terminal::write_sequence(&mut guard.terminal, &outside::osc52(&text))
                {
                    app.notice(NoticeKind::Error, format!("Copying failed: {e}"));
                }
            }
            Effect::MouseCapture(on) => terminal::set_mouse(&mut guard.terminal, on)?,
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
            Effect::Edit(_) | Effect::Copy(_) | Effect::MouseCapture(_) | Effect::Redraw => {}
            Effect::Quit => quit = true,
        }
    }
    quit
}

async fn recv(engine: &mut Option<AgentHandle>) -> Option<crate::events::Envelope> {
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
