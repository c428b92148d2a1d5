//! The input box's state: the text being typed and the history. Invariant:
//! typed text is only ever removed by the user (sending it, Ctrl+C).

use ratatui_textarea::{CursorMove, TextArea};

/// Entries kept in the input history.
pub const HISTORY_CAP: usize = 200;

pub const PLACEHOLDER: &str = "Type a task · Enter sends · / commands · ? help";

pub struct Input {
    pub area: TextArea<'static>,
    pub history: Vec<String>,
    /// The history entry shown, while recalling.
    pub history_pos: Option<usize>,
    /// What was typed before history recall started.
    pub draft: Option<Vec<String>>,
}

impl Default for Input {
    fn default() -> Self {
        Self {
            area: input_area(Vec::new()),
            history: Vec::new(),
            history_pos: None,
            draft: None,
        }
    }
}

impl Input {
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(String::is_empty)
    }

    /// Replaces the input with `lines`, the cursor at the end.
    pub fn set(&mut self, lines: Vec<String>) {
        let mut area = input_area(lines);
        area.move_cursor(CursorMove::Bottom);
        area.move_cursor(CursorMove::End);
        self.area = area;
    }

    pub fn set_text(&mut self, text: &str) {
        self.set(text.split('\n').map(str::to_string).collect());
    }

    pub fn clear(&mut self) {
        self.set(Vec::new());
        self.history_pos = None;
    }

    /// Takes the text out to send it, remembering it in the history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.set(Vec::new());
        if self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY_CAP {
                self.history.remove(0);
            }
        }
        self.history_pos = None;
        self.draft = None;
        text
    }

    /// Shows the previous (`older`) or next history entry; past the newest,
    /// the draft typed before recall started comes back.
    pub fn recall(&mut self, older: bool) {
        if self.history.is_empty() {
            return;
        }
        let pos = match (self.history_pos, older) {
            (None, true) => {
                self.draft = Some(self.area.lines().to_vec());
                self.history.len() - 1
            }
            (None, false) => return,
            (Some(p), true) => p.saturating_sub(1),
            (Some(p), false) if p + 1 < self.history.len() => p + 1,
            (Some(_), false) => {
                self.history_pos = None;
                let draft = self.draft.take().unwrap_or_default();
                self.set(draft);
                return;
            }
        };
        self.history_pos = Some(pos);
        let text = self.history[pos].clone();
        self.set_text(&text);
    }

    pub fn on_first_line(&self) -> bool {
        self.area.cursor().0 == 0
    }

    pub fn on_last_line(&self) -> bool {
        self.area.cursor().0 + 1 >= self.area.lines().len()
    }
}

/// The input box holding `lines`, styled and with its placeholder.
fn input_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_cursor_line_style(ratatui::style::Style::new());
    area.set_placeholder_text(PLACEHOLDER);
    area
}
