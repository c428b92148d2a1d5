//! Terminal hygiene: raw mode, the alternate screen, mouse capture and
//! bracketed paste on the way in; all of it undone on the way out, whether
//! the app quits, fails, panics or is signalled. Invariant: `restore` is
//! idempotent and called by the guard's `Drop` and by the panic hook.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use ratatui::crossterm::{cursor, execute};

static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Keyboard enhancement (Shift+Enter told apart from Enter) was switched on.
static ENHANCED: AtomicBool = AtomicBool::new(false);
/// The thread that owns the terminal: only a panic there tears the screen down
/// (panics in tools and tasks are caught and reported in the app instead).
static UI_THREAD: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
pub struct TerminalGuard {
    pub terminal: Tui,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        let _ = UI_THREAD.set(std::thread::current().id());
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = execute!(
            stdout,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            // Focus reports, for notifications while the user is away.
            EnableFocusChange
        ) {
            restore();
            return Err(e);
        }
        // Where the terminal can tell Shift+Enter from Enter, ask it to.
        if supports_keyboard_enhancement().unwrap_or(false)
            && execute!(
                stdout,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )
            .is_ok()
        {
            ENHANCED.store(true, Ordering::SeqCst);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Hands the terminal to another program (the editor): the same as
/// [`restore`], but the guard takes it back with [`resume`].
pub fn suspend() {
    restore();
}

/// Takes the terminal back after [`suspend`]: raw mode, the alternate
/// screen, bracketed paste and (unless switched off) mouse capture again.
pub fn resume(terminal: &mut Tui, mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange
    )?;
    if mouse {
        execute!(stdout, EnableMouseCapture)?;
    }
    if supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        ENHANCED.store(true, Ordering::SeqCst);
    }
    terminal.clear()
}

/// Switches mouse capture on or off (off: the terminal selects text).
pub fn set_mouse(terminal: &mut Tui, on: bool) -> io::Result<()> {
    if on {
        execute!(terminal.backend_mut(), EnableMouseCapture)
    } else {
        execute!(terminal.backend_mut(), DisableMouseCapture)
    }
}

/// Writes `sequence` (an OSC 52 clipboard sequence, made by
/// `outside::osc52`) to the terminal through its writer.
pub fn write_sequence(terminal: &mut Tui, sequence: &str) -> io::Result<()> {
    execute!(
        terminal.backend_mut(),
        ratatui::crossterm::style::Print(sequence)
    )
}

/// Leaves the alternate screen and raw mode; does nothing the second time.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        if ENHANCED.swap(false, Ordering::SeqCst) {
            let _ = execute!(io::stdout(), PopKeyboardEnhancementFlags);
        }
        let _ = execute!(
            io::stdout(),
            DisableBracketedPaste,
            DisableFocusChange,
            DisableMouseCapture,
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // A panic on the UI thread ends the app: give the user their terminal
        // back before the report. Elsewhere (a tool, a task) it is caught and
        // reported in the app; printing over the screen would garble it.
        if UI_THREAD.get() == Some(&std::thread::current().id()) {
            restore();
            previous(info);
        } else {
            tracing::error!(%info, "a background task panicked");
        }
    }));
}
