//! What the app loop must do after an update: the pure update functions
//! (keys, events, slash commands) return these, and `app.rs` carries them
//! out (I/O, the engine, the terminal).

use crate::events::Op;

/// What the app loop must do after an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Send(Op),
    /// Append `text` to the spill file of trace entry `serial` (made on first use).
    SpillOutput {
        serial: u64,
        text: String,
    },
    /// Read the settings again and start the engine (the app opened
    /// without a provider).
    StartEngine,
    /// Read the stored sessions once and open the picker over them.
    OpenPicker,
    /// Read this workspace's earlier sessions' item times once (their
    /// cards), for the plan's forecast (a goal was set).
    ItemHistory,
    /// Write session `id` as Markdown to `path` (relative to the
    /// workspace; `None`: `exports/waypoint-session-ID.md` in the data
    /// folder).
    Export {
        id: String,
        path: Option<String>,
    },
    /// Clear and fully redraw the terminal (Ctrl+L, /clear).
    Redraw,
    /// Read the stored sessions' prompts once for the open prompt search
    /// (this workspace's first, newest first, capped).
    LoadPrompts,
    /// List the workspace's files for the `@` picker (once per opening).
    ListFiles,
    /// Edit `text` in `$VISUAL`/`$EDITOR`; the result replaces the input.
    Edit(String),
    /// Put `text` on the clipboard through the terminal (OSC 52).
    Copy(String),
    /// Read an image for the input: the file at a pasted path (relative
    /// to the workspace), or the clipboard's (`None`, Ctrl+V).
    ReadImage(Option<String>),
    /// Switch mouse capture on (`true`) or off.
    MouseCapture(bool),
    /// Write a terminal notification (a sequence made by `tui::notify`).
    Notify(String),
    Quit,
}
