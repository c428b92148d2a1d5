//! The input box's state: the text being typed, long pastes shown as
//! placeholders, and the history. Invariants: typed text is only ever
//! removed by the user (sending it, Ctrl+C); a placeholder
//! (`[pasted 60 lines]`) stands for exactly one paste, is deleted whole,
//! and what is sent has the pasted text in its place.

use ratatui_textarea::{CursorMove, TextArea};

/// Entries kept in the input history.
pub const HISTORY_CAP: usize = 200;

pub const PLACEHOLDER: &str = "Type a task · Enter sends · / commands · ? help";

/// A paste of more lines than this shows as a placeholder.
pub const PASTE_LINES: usize = 10;

/// A long paste: the token shown in the input and the text it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pasted {
    pub token: String,
    pub text: String,
}

pub struct Input {
    pub area: TextArea<'static>,
    pub history: Vec<String>,
    /// The history entry shown, while recalling.
    pub history_pos: Option<usize>,
    /// What was typed before history recall started.
    pub draft: Option<Vec<String>>,
    /// Long pastes shown as placeholders, in the order pasted.
    pub pasted: Vec<Pasted>,
    /// Images pasted (a path, Ctrl+V), each with its token in the text.
    pub images: Vec<(String, crate::chat::ImageSource)>,
}

impl Default for Input {
    fn default() -> Self {
        Self {
            area: input_area(Vec::new()),
            history: Vec::new(),
            history_pos: None,
            draft: None,
            pasted: Vec::new(),
            images: Vec::new(),
        }
    }
}

impl Input {
    /// The text as shown (placeholders as such).
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// The text to send: each placeholder replaced by what was pasted.
    pub fn expanded(&self) -> String {
        expand(&self.text(), &self.pasted)
    }

    /// The text as the conversation shows it once sent: each long paste
    /// as its first [`PREVIEW_LINES`] lines and how many more it holds.
    pub fn shown(&self) -> String {
        let previews: Vec<Pasted> = self
            .pasted
            .iter()
            .map(|p| Pasted {
                token: p.token.clone(),
                text: preview(&p.text),
            })
            .collect();
        expand(&self.text(), &previews)
    }

    /// Inserts pasted `text` (already cleaned) at the cursor: a paste of
    /// more than [`PASTE_LINES`] lines as a placeholder.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n");
        let lines = text.trim_end_matches('\n').split('\n').count();
        if lines <= PASTE_LINES {
            self.area.insert_str(&text);
            return;
        }
        let mut token = format!("[pasted {lines} lines]");
        let mut n = 1;
        while self.pasted.iter().any(|p| p.token == token) {
            n += 1;
            token = format!("[pasted {lines} lines #{n}]");
        }
        self.area.insert_str(&token);
        self.pasted.push(Pasted { token, text });
    }

    /// Puts a pasted image at the cursor as `[image 1: 640x480 png]` (a
    /// token deleted whole, sent as it is); returns the token.
    pub fn attach_image(
        &mut self,
        source: crate::chat::ImageSource,
        info: crate::chat::ImageInfo,
    ) -> String {
        let mut n = self.images.len() + 1;
        let mut token = format!("[image {n}: {info}]");
        while self.pasted.iter().any(|p| p.token == token) {
            n += 1;
            token = format!("[image {n}: {info}]");
        }
        self.area.insert_str(&token);
        self.pasted.push(Pasted {
            token: token.clone(),
            text: token.clone(),
        });
        self.images.push((token.clone(), source));
        token
    }

    /// The images whose token is still in `sent` (the text taken to
    /// send), in order; none are kept after.
    pub fn take_images(&mut self, sent: &str) -> Vec<crate::chat::ImageSource> {
        std::mem::take(&mut self.images)
            .into_iter()
            .filter(|(token, _)| sent.contains(token.as_str()))
            .map(|(_, source)| source)
            .collect()
    }

    /// Backspace right after a placeholder deletes it whole; returns
    /// whether it did.
    pub fn delete_placeholder(&mut self) -> bool {
        let cursor = self.area.cursor();
        let Some(line) = self.area.lines().get(cursor.0) else {
            return false;
        };
        let before: String = line.chars().take(cursor.1).collect();
        let Some(i) = self
            .pasted
            .iter()
            .position(|p| before.ends_with(p.token.as_str()))
        else {
            return false;
        };
        let chars = self.pasted[i].token.chars().count();
        for _ in 0..chars {
            self.area.delete_char();
        }
        self.pasted.remove(i);
        true
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
        self.pasted.clear();
        self.images.clear();
    }

    /// Replaces the input with `text` come back from the editor (long
    /// pastes went out in full): the images whose token it still holds
    /// stay attached, each token again one piece; returns the tokens of
    /// those it lost.
    pub fn replace_keeping_images(&mut self, text: &str) -> Vec<String> {
        let (kept, lost): (Vec<_>, Vec<_>) = std::mem::take(&mut self.images)
            .into_iter()
            .partition(|(token, _)| text.contains(token.as_str()));
        self.clear();
        self.set_text(text);
        for (token, _) in &kept {
            self.pasted.push(Pasted {
                token: token.clone(),
                text: token.clone(),
            });
        }
        self.images = kept;
        lost.into_iter().map(|(token, _)| token).collect()
    }

    /// Takes the text out to send it (placeholders expanded), remembering
    /// it in the history.
    pub fn take(&mut self) -> String {
        let text = self.expanded();
        self.pasted.clear();
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

/// Lines of a long paste the conversation shows.
pub const PREVIEW_LINES: usize = 3;

/// A long paste's first lines and a line saying how many more it holds
/// (an image's token, one line, stays as it is).
fn preview(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
    if lines.len() <= PREVIEW_LINES + 1 {
        return text.to_string();
    }
    let more = lines.len() - PREVIEW_LINES;
    let end = if text.ends_with('\n') { "\n" } else { "" };
    format!(
        "{}\n… {more} more lines{end}",
        lines[..PREVIEW_LINES].join("\n")
    )
}

/// `text` with the first occurrence of each paste's token (after the
/// previous one's) replaced by its text; pasted text is never searched.
pub fn expand(text: &str, pasted: &[Pasted]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut left: Vec<&Pasted> = pasted.iter().collect();
    loop {
        let next = left
            .iter()
            .enumerate()
            .filter_map(|(k, p)| rest.find(p.token.as_str()).map(|at| (at, k)))
            .min();
        let Some((at, k)) = next else {
            out.push_str(rest);
            return out;
        };
        let p = left.remove(k);
        out.push_str(&rest[..at]);
        out.push_str(&p.text);
        rest = &rest[at + p.token.len()..];
    }
}

/// The input box holding `lines`, styled and with its placeholder.
fn input_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_cursor_line_style(ratatui::style::Style::new());
    area.set_placeholder_text(PLACEHOLDER);
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_long_paste_is_a_placeholder_and_sent_in_full() {
        let mut input = Input::default();
        input.area.insert_str("look: ");
        input.paste(&lines(60));
        input.area.insert_str(" thanks");
        assert_eq!(input.text(), "look: [pasted 60 lines] thanks");
        let sent = input.take();
        assert_eq!(sent, format!("look: {} thanks", lines(60)));
        assert!(input.pasted.is_empty());
        // Ten lines or fewer are pasted as they are.
        input.paste(&lines(10));
        assert_eq!(input.text(), lines(10));
    }

    #[test]
    fn placeholders_are_distinct_and_expand_in_order() {
        let mut input = Input::default();
        input.paste(&lines(12));
        input.area.insert_char(' ');
        input.paste(&"x\n".repeat(12));
        assert_eq!(input.text(), "[pasted 12 lines] [pasted 12 lines #2]");
        assert_eq!(
            input.expanded(),
            format!("{} {}", lines(12), "x\n".repeat(12))
        );
    }

    #[test]
    fn pasted_text_is_never_expanded_again() {
        // A paste that holds another paste's token stays as pasted.
        let pasted = vec![
            Pasted {
                token: "[a]".into(),
                text: "has [b] inside".into(),
            },
            Pasted {
                token: "[b]".into(),
                text: "B".into(),
            },
        ];
        assert_eq!(expand("[a] then [b]", &pasted), "has [b] inside then B");
        // A token the user deleted or edited leaves the text as typed.
        assert_eq!(expand("[a", &pasted), "[a");
    }

    #[test]
    fn backspace_deletes_a_placeholder_whole() {
        let mut input = Input::default();
        input.area.insert_str("a ");
        input.paste(&lines(20));
        assert!(input.delete_placeholder());
        assert_eq!(input.text(), "a ");
        assert!(input.pasted.is_empty());
        assert!(!input.delete_placeholder());
    }
}
