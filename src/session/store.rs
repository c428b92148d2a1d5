//! The sessions folder: one `ID.jsonl` transcript per session and beside it
//! its card, `ID.card.json`, a small summary rewritten at each turn end so
//! a listing reads cards (or a transcript's first lines), never whole
//! transcripts. Invariant: the transcript is the truth; a card is only a
//! cache of it, and a missing or broken card costs detail, not the session.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::card::prompt_line;
use super::record::{Header, Record};
use super::transcript::Transcript;
use super::{SessionError, now_ms};

pub use super::card::{Card, card_path};

/// A session as listed: its card and its transcript's path and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub card: Card,
    pub path: PathBuf,
    /// The transcript's size now, in bytes.
    pub size: u64,
}

/// What `prune` did.
#[derive(Debug, Default)]
pub struct Pruned {
    pub removed: Vec<SessionInfo>,
    /// Old enough, but open in another Waypoint process: kept.
    pub in_use: Vec<SessionInfo>,
}

/// The folder sessions live in.
#[derive(Clone, Debug)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// `$WAYPOINT_HOME/sessions`, else the platform data folder's
    /// (`~/.local/share/waypoint/sessions` on Linux).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Self, SessionError> {
        if let Some(home) = env("WAYPOINT_HOME").filter(|h| !h.trim().is_empty()) {
            return Ok(Self::new(PathBuf::from(home).join("sessions")));
        }
        directories::ProjectDirs::from("", "", "waypoint")
            .map(|d| Self::new(d.data_dir().join("sessions")))
            .ok_or(SessionError::NoHome)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new, empty session's transcript (the file appears with its first record).
    pub fn create(&self, header: Header) -> Transcript {
        Transcript::create(&self.dir, header)
    }

    /// Every session, the most recently active first. Files that are not
    /// readable transcripts are left out.
    pub fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(SessionError::io(&self.dir, e)),
        };
        let mut sessions: Vec<SessionInfo> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let path = entry.path();
                let name = path.file_name()?.to_str()?;
                name.strip_suffix(".jsonl")?;
                let size = entry.metadata().ok()?.len();
                let card = read_card(&path).or_else(|| card_from_transcript(&path))?;
                Some(SessionInfo { card, path, size })
            })
            .collect();
        sessions.sort_by(|a, b| {
            b.card
                .updated_ms
                .cmp(&a.card.updated_ms)
                .then_with(|| a.card.id.cmp(&b.card.id))
        });
        Ok(sessions)
    }

    /// The one session whose id starts with `prefix`.
    pub fn find(&self, prefix: &str) -> Result<SessionInfo, SessionError> {
        let prefix = prefix.trim();
        if prefix.is_empty() {
            return Err(SessionError::NotFound(prefix.to_string()));
        }
        let mut found: Vec<SessionInfo> = self
            .list()?
            .into_iter()
            .filter(|s| s.card.id.starts_with(prefix))
            .collect();
        match found.len() {
            0 => Err(SessionError::NotFound(prefix.to_string())),
            1 => Ok(found.remove(0)),
            _ => Err(SessionError::Ambiguous {
                prefix: prefix.to_string(),
                ids: found.into_iter().map(|s| s.card.id).collect(),
            }),
        }
    }

    /// The most recently active session of `workspace`.
    pub fn latest_in(&self, workspace: &str) -> Result<SessionInfo, SessionError> {
        self.list()?
            .into_iter()
            .find(|s| s.card.workspace == workspace)
            .ok_or_else(|| SessionError::NoneHere(workspace.to_string()))
    }

    /// Deletes a session (its transcript, its card and its checkpoints), holding the
    /// transcript's lock while it does: a session another Waypoint has open
    /// is refused (`InUse`), never deleted under it.
    pub fn remove(&self, info: &SessionInfo) -> Result<(), SessionError> {
        let file = std::fs::File::open(&info.path).map_err(|e| SessionError::io(&info.path, e))?;
        match super::transcript::try_lock(&file) {
            Ok(true) => {}
            Ok(false) => return Err(SessionError::InUse(info.card.id.clone())),
            Err(e) => return Err(SessionError::io(&info.path, e)),
        }
        std::fs::remove_file(&info.path).map_err(|e| SessionError::io(&info.path, e))?;
        // Its checkpoints go with it: the kept pre-images, its snapshots.
        let _ = std::fs::remove_dir_all(info.path.with_extension("blobs"));
        super::live::forget(&info.path);
        crate::checkpoint::Shadow::forget(&self.dir.join("shadow"), &info.card.id);
        let card = card_path(&info.path);
        match std::fs::remove_file(&card) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SessionError::io(&card, e)),
            _ => Ok(()),
        }
    }

    /// Deletes the sessions not active for `age`; returns them, and those
    /// left because another Waypoint has them open.
    pub fn prune(&self, age: Duration) -> Result<Pruned, SessionError> {
        let cutoff = now_ms().saturating_sub(u64::try_from(age.as_millis()).unwrap_or(u64::MAX));
        let mut pruned = Pruned::default();
        for s in self.list()? {
            if s.card.updated_ms >= cutoff {
                continue;
            }
            match self.remove(&s) {
                Ok(()) => pruned.removed.push(s),
                Err(SessionError::InUse(_)) => pruned.in_use.push(s),
                Err(e) => return Err(e),
            }
        }
        Ok(pruned)
    }
}

fn read_card(transcript: &Path) -> Option<Card> {
    let text = std::fs::read(card_path(transcript)).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Without a card: the header, and the first prompt if it is among the
/// first lines. Reads at most 64 KiB.
fn card_from_transcript(path: &Path) -> Option<Card> {
    let file = std::fs::File::open(path).ok()?;
    let mut lines = BufReader::new(file.take(64 * 1024)).lines();
    let header: Header = serde_json::from_str(&lines.next()?.ok()?).ok()?;
    if header.kind != "header" {
        return None;
    }
    let mut card = Card::from_header(&header);
    for line in lines.take(16).map_while(Result::ok) {
        if let Ok(Record::User {
            text, prompt: true, ..
        }) = Record::from_line(line.as_bytes())
        {
            card.first_prompt = Some(prompt_line(&text));
            break;
        }
    }
    if let Ok(meta) = std::fs::metadata(path)
        && let Ok(modified) = meta.modified()
        && let Ok(since) = modified.duration_since(std::time::UNIX_EPOCH)
    {
        card.updated_ms = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
    }
    Some(card)
}

/// Reads a duration such as `30d`, `12h`, `90m`, `2w` or `45s`.
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not an age such as 30d, 12h or 2w"))?;
    let secs = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3_600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(format!("`{text}`: the unit must be s, m, h, d or w")),
    };
    Ok(Duration::from_secs(n.saturating_mul(secs)))
}
