//! The semantic palette: every colour the TUI uses has a meaning here, uses
//! the terminal's ANSI colours (so the user's theme applies), and always goes
//! with a symbol or modifier so the screen reads without colour. Invariant:
//! the monochrome palette (theme `no-color`, or `NO_COLOR` set — resolved in
//! `config.rs`) never emits a foreground or background colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Palette {
    color: bool,
}

impl Palette {
    pub fn colored() -> Self {
        Self { color: true }
    }

    pub fn monochrome() -> Self {
        Self { color: false }
    }

    /// Whether this palette uses colours at all.
    pub fn is_colored(self) -> bool {
        self.color
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn text(self) -> Style {
        Style::new()
    }
    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub fn success(self) -> Style {
        self.fg(Color::Green)
    }
    pub fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn warning(self) -> Style {
        self.fg(Color::Yellow)
    }
    /// The plan item in progress, the running tool.
    pub fn active(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    pub fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn heading(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }
    /// A heading of `level` (1–6), each level told apart without color:
    /// `#` underlined, `##` bold, `###` bold italic, deeper ones italic.
    pub fn heading_at(self, level: u8) -> Style {
        match level {
            0 | 1 => self.heading().add_modifier(Modifier::UNDERLINED),
            2 => self.heading(),
            3 => self.heading().add_modifier(Modifier::ITALIC),
            _ => self.fg(Color::Magenta).add_modifier(Modifier::ITALIC),
        }
    }
    pub fn code(self) -> Style {
        self.fg(Color::Cyan)
    }
    pub fn emphasis(self) -> Style {
        Style::new().add_modifier(Modifier::ITALIC)
    }
    pub fn strong(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }
    /// Selected entry, focused pane border.
    pub fn selection(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub fn focus_border(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn border(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    /// A just-changed plan item.
    pub fn highlight(self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    /// A token of highlighted code (keyword, string…) in an ANSI colour.
    pub fn syntax(self, c: Color) -> Style {
        self.fg(c)
    }
    pub fn diff_added(self) -> Style {
        self.fg(Color::Green)
    }
    pub fn diff_removed(self) -> Style {
        self.fg(Color::Red)
    }
}

/// Markers: a symbol beside every colour.
pub const DONE: &str = "[x]";
pub const ACTIVE: &str = "[>]";
pub const PENDING: &str = "[ ]";
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
