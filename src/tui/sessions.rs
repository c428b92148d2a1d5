//! The file work behind `/resume` and `/export`, carried out by the app
//! loop from `Effect::OpenPicker` and `Effect::Export`: reading the
//! sessions folder once for the picker, and writing a session as Markdown.
//! Invariant: every failure ends as a notice on screen, never a panic.

use std::path::{Path, PathBuf};

use super::state::{App, NoticeKind, PROMPTS_CAP, Picker, Prompt};
use crate::cli::ExportFormat;
use crate::session::{SessionError, SessionStore, short_id};

/// What is said when the app keeps no sessions.
const NOT_KEPT: &str = "Sessions are not kept (no home folder to keep them in: set WAYPOINT_HOME).";

/// Opens the picker over the stored sessions, read now (`now_ms`: the
/// time "5 min ago" counts from).
pub fn open_picker(app: &mut App, store: Option<&SessionStore>, now_ms: u64) {
    let Some(store) = store else {
        app.notice(NoticeKind::Error, NOT_KEPT);
        return;
    };
    let mut picker = Picker::new(Vec::new(), app.status.place.workspace().to_string(), now_ms);
    match store.list() {
        Ok(sessions) => picker.sessions = sessions,
        Err(e) => picker.error = Some(format!("The sessions cannot be read: {e}")),
    }
    picker.current = app.status.place.session().map(|(id, _)| id.clone());
    app.overlays.help = false;
    app.overlays.picker = Some(picker);
}

/// Reads the stored sessions' prompts once for the open Ctrl+R search:
/// this workspace's first, newest first, at most [`PROMPTS_CAP`].
pub fn load_prompts(app: &mut App, store: Option<&SessionStore>) {
    let workspace = app.status.place.workspace().to_string();
    let prompts = match store {
        None => Err(NOT_KEPT.to_string()),
        Some(store) => crate::session::prompts::recent(store, &workspace, PROMPTS_CAP)
            .map(|found| {
                found
                    .into_iter()
                    .map(|(text, here)| Prompt { text, here })
                    .collect()
            })
            .map_err(|e| format!("The sessions cannot be read: {e}")),
    };
    super::update::prompts_loaded(app, prompts);
}

/// The mean time of a plan item in this workspace's earlier sessions
/// (their cards: no transcript is read), for the forecast until this
/// session completes an item of its own. Nothing when none completed one
/// or the sessions cannot be read.
pub fn item_history(app: &mut App, store: Option<&SessionStore>) {
    let Some(sessions) = store.and_then(|s| s.list().ok()) else {
        return;
    };
    let workspace = app.status.place.workspace().to_string();
    let current = app.status.place.session().map(|(id, _)| id.clone());
    let (done, ms) = sessions
        .iter()
        .map(|s| &s.card)
        .filter(|c| c.workspace == workspace && Some(&c.id) != current.as_ref())
        .fold((0u64, 0u64), |(d, m), c| {
            (d + u64::from(c.items.done), m.saturating_add(c.items.ms))
        });
    if let Some(mean) = ms.checked_div(done) {
        app.root.plan.stats.set_prior(mean);
    }
}

/// Where `/export` writes: `path` (relative to the workspace), else
/// `waypoint-session-SHORTID.md` in the data folder's `exports` (next to
/// `sessions`), never into the workspace unasked.
pub fn export_path(store: &SessionStore, workspace: &str, id: &str, path: Option<&str>) -> PathBuf {
    let Some(path) = path else {
        return exports_dir(store).join(format!("waypoint-session-{}.md", short_id(id)));
    };
    let path = PathBuf::from(path);
    if path.is_absolute() {
        path
    } else {
        Path::new(workspace).join(path)
    }
}

/// The data folder's `exports` (beside the sessions folder).
fn exports_dir(store: &SessionStore) -> PathBuf {
    let sessions = store.dir();
    sessions.parent().unwrap_or(sessions).join("exports")
}

/// Writes session `id` as Markdown and says where, or why not.
pub fn export(app: &mut App, store: Option<&SessionStore>, id: &str, path: Option<&str>) {
    let Some(store) = store else {
        app.notice(NoticeKind::Error, NOT_KEPT);
        return;
    };
    let bytes = match crate::resume::export(
        store,
        id,
        ExportFormat::Markdown,
        app.status.accounts.prices(),
        false,
    ) {
        Ok(bytes) => bytes,
        Err(SessionError::NotFound(_)) => {
            app.notice(
                NoticeKind::Error,
                format!(
                    "Nothing to export: session {} has no message recorded yet.",
                    short_id(id)
                ),
            );
            return;
        }
        Err(e) => {
            app.notice(NoticeKind::Error, format!("Export failed: {e}"));
            return;
        }
    };
    let target = export_path(store, app.status.place.workspace(), id, path);
    let folder = if path.is_none() {
        std::fs::create_dir_all(exports_dir(store))
    } else {
        Ok(())
    };
    match folder.and_then(|()| std::fs::write(&target, bytes)) {
        Ok(()) => app.notice(
            NoticeKind::Info,
            format!("Exported session {} to {}.", short_id(id), target.display()),
        ),
        Err(e) => app.notice(
            NoticeKind::Error,
            format!("Export failed: cannot write {}: {e}", target.display()),
        ),
    }
}
