//! Sessions from the command line: choosing the one to continue (`-c`,
//! `-r ID`), listing them (`waypoint sessions`, headless `-r`), deleting
//! them and exporting one. A driver: it prints; the engine does not.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{ExportFormat, SessionsAction};
use crate::pricing::Price;
use crate::session::{
    Restored, SessionError, SessionInfo, SessionStore, ago, export, load, now_ms, parse_age,
    replay, short_id, size, utc,
};
use crate::text::clean_line;

/// Which stored session to continue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The most recent one of the workspace (`-c`).
    Latest,
    /// The one whose id starts with this (`-r ID`).
    Id(String),
}

/// The session `-c` (`continue_last`) or `-r ID` asks to resume; `-r`
/// without an id is the picker, not a choice.
pub fn choice(continue_last: bool, resume: Option<&str>) -> Option<Choice> {
    match (continue_last, resume) {
        (true, _) => Some(Choice::Latest),
        (false, Some(id)) if !id.trim().is_empty() => Some(Choice::Id(id.to_string())),
        _ => None,
    }
}

/// A session chosen to continue, read back, and the folder it runs in.
pub struct Opened {
    pub restored: Restored,
    pub workspace: PathBuf,
}

/// Finds and reads the chosen session. `here` is the workspace asked for
/// (`--workspace`, else the current folder, canonical); with `-r ID` the
/// session's own workspace is used unless `--workspace` was given.
pub fn open(
    store: &SessionStore,
    choice: &Choice,
    here: &Path,
    workspace_flag: Option<&Path>,
) -> Result<Opened, SessionError> {
    let info = match choice {
        Choice::Latest => store.latest_in(&here.display().to_string())?,
        Choice::Id(prefix) => store.find(prefix)?,
    };
    let restored = replay(load(&info.path)?)?;
    let id = short_id(&restored.file.header.id).to_string();
    let named = PathBuf::from(&restored.file.header.workspace);
    // The header's folder, if Waypoint will work there: an existing,
    // absolute folder other than the filesystem's root.
    let usable = named.is_absolute() && named.parent().is_some() && named.is_dir();
    let workspace = match (choice, workspace_flag) {
        // `-c` found the session by this folder: that is its workspace.
        (Choice::Latest, _) if here.is_dir() => here.to_path_buf(),
        (Choice::Latest, _) => {
            return Err(SessionError::WorkspaceGone {
                id,
                workspace: here.display().to_string(),
            });
        }
        (Choice::Id(_), None) if usable => named,
        (Choice::Id(_), None) if named.is_absolute() && !named.is_dir() => {
            return Err(SessionError::WorkspaceGone {
                id,
                workspace: restored.file.header.workspace,
            });
        }
        (Choice::Id(_), None) => {
            return Err(SessionError::UnusableWorkspace {
                id,
                workspace: restored.file.header.workspace,
            });
        }
        // Another folder than the session's own, which still exists: said
        // plainly rather than silently moving the session.
        (Choice::Id(_), Some(flag)) if usable && !same_folder(&named, flag) => {
            return Err(SessionError::OtherWorkspace {
                id,
                workspace: restored.file.header.workspace,
                asked: flag.display().to_string(),
            });
        }
        (Choice::Id(_), Some(flag)) => flag.to_path_buf(),
    };
    Ok(Opened {
        restored,
        workspace,
    })
}

/// Whether two paths name one folder (after following links).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The sessions as a table: id, start time (UTC), last active, plan,
/// size, model, workspace, first prompt.
pub fn table(sessions: &[SessionInfo], now: u64) -> String {
    if sessions.is_empty() {
        return "No sessions yet.\n".into();
    }
    let mut out = format!(
        "{:<8}  {:<20}  {:<11}  {:<5}  {:<7}  {:<24}  {:<28}  {}\n",
        "ID", "STARTED", "ACTIVE", "PLAN", "SIZE", "MODEL", "WORKSPACE", "FIRST PROMPT"
    );
    for s in sessions {
        let c = &s.card;
        let plan = if c.plan_total == 0 {
            "–".to_string()
        } else {
            format!("{}/{}", c.plan_done, c.plan_total)
        };
        out.push_str(&format!(
            "{:<8}  {:<20}  {:<11}  {:<5}  {:<7}  {:<24}  {:<28}  {}\n",
            short_id(&c.id),
            utc(c.started_ms),
            ago(c.updated_ms, now),
            plan,
            size(s.size),
            fit(&clean_line(&c.model), 24),
            fit_tail(&clean_line(&c.workspace), 28),
            fit(
                &clean_line(c.first_prompt.as_deref().unwrap_or("(no prompt)")),
                60
            ),
        ));
    }
    out
}

/// `text` cut to `width` characters, with `…` when cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text`'s end, cut to `width` characters (paths: the last folders matter).
pub fn fit_tail(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    let mut out = String::from("…");
    out.extend(text.chars().skip(n + 1 - width));
    out
}

/// `waypoint sessions [rm ID | prune --older-than AGE]`.
pub fn sessions(
    store: &SessionStore,
    action: Option<&SessionsAction>,
    out: &mut impl Write,
) -> color_eyre::Result<i32> {
    match action {
        None => {
            let all = store.list()?;
            out.write_all(table(&all, now_ms()).as_bytes())?;
            if !all.is_empty() {
                writeln!(
                    out,
                    "\n{} session(s) in {}. Continue one with `waypoint -r ID`.",
                    all.len(),
                    store.dir().display()
                )?;
            }
        }
        Some(SessionsAction::Rm { id }) => {
            let info = store.find(id)?;
            store.remove(&info)?;
            writeln!(out, "Deleted session {}.", info.card.id)?;
        }
        Some(SessionsAction::Prune { older_than }) => {
            let age = parse_age(older_than).map_err(|e| color_eyre::eyre::eyre!("{e}"))?;
            let pruned = store.prune(age)?;
            writeln!(
                out,
                "Deleted {} session(s) not active for {older_than}.",
                pruned.removed.len()
            )?;
            for s in &pruned.in_use {
                writeln!(
                    out,
                    "Kept session {}: it is open in another Waypoint process.",
                    s.card.id
                )?;
            }
        }
    }
    Ok(0)
}

/// `waypoint export ID [--output PATH] [--format markdown|jsonl]`; also `/export`.
pub fn export(
    store: &SessionStore,
    id: &str,
    format: ExportFormat,
    prices: &BTreeMap<String, Price>,
    to_terminal: bool,
) -> Result<Vec<u8>, SessionError> {
    let info = store.find(id)?;
    let loaded = load(&info.path)?;
    Ok(match format {
        // The model's escape sequences never act: removed whole on a
        // terminal, as everywhere Waypoint prints; written visibly to a file.
        ExportFormat::Markdown => {
            let text = export::markdown(&loaded, prices);
            let safe = if to_terminal {
                crate::text::clean(&text)
            } else {
                crate::text::escape_controls(&text)
            };
            safe.into_owned().into_bytes()
        }
        ExportFormat::Jsonl => {
            // The raw records, whole lines only; the controls JSON leaves
            // raw are escaped (the same values).
            let mut bytes =
                std::fs::read(&info.path).map_err(|e| SessionError::io(&info.path, e))?;
            bytes.truncate(usize::try_from(loaded.valid_len).unwrap_or(bytes.len()));
            match String::from_utf8(bytes) {
                Ok(text) => crate::text::escape_json_controls(&text)
                    .into_owned()
                    .into_bytes(),
                Err(e) => e.into_bytes(),
            }
        }
    })
}
