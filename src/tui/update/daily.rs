//! The daily-driver keys: the `@` file picker (opened by `@` at a word's
//! start, following what is typed after it), the external editor, copying
//! the last reply and the mouse-capture switch. Pure like the rest of
//! `update`: the listing, the editor, the clipboard and the terminal's
//! modes are `Effect`s the app loop carries out. Invariant: nothing here
//! drops typed text: a failed editor or an empty listing keeps the input.

use super::Effect;
use crate::tui::keymap::Action;
use crate::tui::state::files::mention_starts;
use crate::tui::state::{App, EntryKind, FilePicker, Focus, NoticeKind};

/// The clipboard gets at most this many bytes of a reply.
pub const COPY_CAP: usize = 100_000;

/// Runs a daily-driver action; `None` when it does not apply (the key
/// then goes on, e.g. `@` inside a word is typed).
pub fn key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::Editor => Some(edit(app)),
        Action::CopyReply => Some(copy(app)),
        Action::ToggleMouse => Some(toggle_mouse(app)),
        Action::PasteImage => Some(vec![Effect::ReadImage(None)]),
        _ => file_key(app, action),
    }
}

/// Runs a file-picker action; `None` when it does not apply.
fn file_key(app: &mut App, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::Mention => {
            let at = mention_starts(&app.input)?;
            app.input.area.insert_char('@');
            app.overlays.files = Some(FilePicker::new(at));
            Some(vec![Effect::ListFiles])
        }
        Action::FileMove { up } => {
            let picker = app.overlays.files.as_mut()?;
            picker.step(if up { -1 } else { 1 });
            Some(Vec::new())
        }
        Action::FileInsert { or_send } => {
            let picker = app.overlays.files.as_mut()?;
            if picker.chosen().is_none() {
                // Nothing to insert: Tab (and anything while listing) does
                // nothing; Enter with no match sends the text as typed.
                let swallow = !or_send || picker.files.is_none();
                return swallow.then(Vec::new);
            }
            if !picker.insert(&mut app.input) {
                app.overlays.files = None;
            }
            Some(Vec::new())
        }
        Action::FileClose => {
            app.overlays.files = None;
            Some(Vec::new())
        }
        _ => None,
    }
}

/// The image file a paste names, when it is one path to an image (as a
/// terminal pastes a dropped file: quoted, with `\ ` escapes, or as a
/// `file://` URL); `None` for any other paste.
pub fn image_path(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || t.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t);
    let path = match unquoted.strip_prefix("file://") {
        Some(url) => crate::text::percent_decoded(url),
        None => unquoted.replace("\\ ", " "),
    };
    crate::chat::image::looks_like_image(std::path::Path::new(&path)).then_some(path)
}

/// An image was read for the input (`from`: the pasted path, or the
/// clipboard): its token goes in; on failure the pasted path is typed as
/// it was (nothing lost) and the user told why.
pub fn image_read(
    app: &mut App,
    from: Option<String>,
    read: Result<(crate::chat::ImageSource, crate::chat::ImageInfo), String>,
) {
    app.focus = Focus::Input;
    match (read, from) {
        (Ok((source, info)), _) => {
            app.input.attach_image(source, info);
        }
        (Err(why), Some(path)) => {
            app.input.paste(&crate::text::clean(&path));
            app.notice(NoticeKind::Error, format!("Not attached: {why}"));
        }
        (Err(why), None) => app.notice(NoticeKind::Error, why),
    }
}

/// After the input changed: the picker follows the word after its `@`,
/// or closes when that word is gone.
pub fn follow(app: &mut App) {
    if let Some(picker) = app.overlays.files.as_mut()
        && !picker.follow(&app.input)
    {
        app.overlays.files = None;
    }
}

/// The workspace's files arrived for the open picker.
pub fn files_listed(app: &mut App, files: Vec<String>, truncated: bool) {
    if let Some(picker) = app.overlays.files.as_mut() {
        picker.listed(files, truncated);
        picker.follow(&app.input);
    }
}

/// Ctrl+G: the message (long pastes in full) goes to the editor.
pub fn edit(app: &mut App) -> Vec<Effect> {
    app.focus = Focus::Input;
    app.overlays.files = None;
    vec![Effect::Edit(app.input.expanded())]
}

/// The editor finished: its text replaces the input (images whose token
/// it still holds stay attached; the others are named as left out); a
/// failure keeps the input as it was and says why.
pub fn edited(app: &mut App, result: Result<String, String>) {
    match result {
        Ok(text) => {
            let text = crate::text::clean(text.trim_end_matches('\n')).into_owned();
            let lost = app.input.replace_keeping_images(&text);
            if !lost.is_empty() {
                let (names, verb) = match &lost[..] {
                    [one] => (one.clone(), "is"),
                    many => (many.join(", "), "are"),
                };
                app.notice(
                    NoticeKind::Info,
                    format!(
                        "{names} {verb} no longer attached: the edited message dropped its token."
                    ),
                );
            }
        }
        Err(why) => app.notice(
            NoticeKind::Error,
            format!(
                "The editor failed: {}. The message is unchanged.",
                crate::text::clean_line(&why)
            ),
        ),
    }
}

/// The model's last reply: its text since the last message of the user
/// (messages still queued wait below the running turn's output).
pub fn last_reply(app: &App) -> Option<String> {
    let entries = &app.root.conversation.entries;
    let start = entries
        .iter()
        .rposition(|e| e.kind == EntryKind::User)
        .map_or(0, |i| i + 1);
    let parts: Vec<&str> = entries[start..]
        .iter()
        .filter(|e| e.kind == EntryKind::Assistant)
        .map(|e| e.text().trim())
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Ctrl+Y: the last reply to the clipboard (capped), with a notice.
pub fn copy(app: &mut App) -> Vec<Effect> {
    let Some(reply) = last_reply(app) else {
        app.notice(NoticeKind::Info, "No reply to copy yet.");
        return Vec::new();
    };
    let mut text = crate::text::clean(&reply).into_owned();
    let cut = text.len() > COPY_CAP;
    if cut {
        let mut end = COPY_CAP;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    let lines = text.lines().count();
    let s = if lines == 1 { "" } else { "s" };
    let more = if cut { " (cut at 100 KB)" } else { "" };
    app.notice(
        NoticeKind::Info,
        format!(
            "Copied {lines} line{s} of the last reply{more} (OSC 52: the terminal must allow it)."
        ),
    );
    vec![Effect::Copy(text)]
}

/// F2: mouse capture off lets the terminal select text; on, the wheel
/// scrolls the panes.
pub fn toggle_mouse(app: &mut App) -> Vec<Effect> {
    let off = !app.status.ui.toggle_mouse();
    let text = if off {
        "Mouse capture off: the terminal selects text; the wheel scrolls no pane. F2 turns it back on."
    } else {
        "Mouse capture on: the wheel scrolls the focused pane. F2 turns it off to select text."
    };
    app.notice(NoticeKind::Info, text);
    vec![Effect::MouseCapture(!off)]
}
