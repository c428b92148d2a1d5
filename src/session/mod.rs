//! Sessions that outlive the process: every session writes an append-only
//! JSON-lines transcript ([`transcript`]), which [`load`] reads back (a torn
//! last line skipped with a note) and [`replay`] turns into the
//! conversation, the plan, the totals and the history a driver shows;
//! [`store`] lists, finds and deletes them. Part of the engine: it knows no terminal.

pub mod card;
pub mod export;
mod images;
pub mod live;
pub mod load;
pub mod prompts;
pub mod record;
pub mod replay;
pub mod store;
pub mod transcript;
mod v1;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use card::Card;
pub use load::{Loaded, load};
pub use record::{FORMAT_VERSION, Header, Record, TurnOutcome};
pub use replay::{Restored, replay};
pub use store::{SessionInfo, SessionStore, parse_age};
pub use transcript::{Transcript, unsaved_notes};

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no home folder to keep sessions in: set WAYPOINT_HOME")]
    NoHome,
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no session with an id starting with `{0}` (`waypoint sessions` lists them)")]
    NotFound(String),
    #[error("`{prefix}` matches several sessions: {}; give more of the id", ids.join(", "))]
    Ambiguous { prefix: String, ids: Vec<String> },
    #[error("no session of this workspace ({0}) yet: `waypoint sessions` lists them all")]
    NoneHere(String),
    #[error("{} is empty: it holds no session", path.display())]
    Empty { path: PathBuf },
    #[error("{} is not a Waypoint session (its first line is not a session header)", path.display())]
    NotATranscript { path: PathBuf },
    #[error(
        "{} was written by a newer Waypoint (session format {found}; this one reads up to {FORMAT_VERSION}): update Waypoint to open it",
        path.display()
    )]
    Newer { path: PathBuf, found: u32 },
    #[error(
        "session {id} belongs to {workspace}, which no longer exists; run `waypoint -r {id} --workspace DIR` to resume it in another folder"
    )]
    WorkspaceGone { id: String, workspace: String },
    #[error("session {id} cannot be rebuilt: {why}")]
    Damaged { id: String, why: String },
    #[error(
        "session {id} names {workspace} as its folder, which Waypoint will not work in; run `waypoint -r {id} --workspace DIR` to resume it in a project folder"
    )]
    UnusableWorkspace { id: String, workspace: String },
    #[error(
        "session {id} works in {workspace}, not {asked}; resume it there (`cd {workspace} && waypoint -r {id}`), or start a new session in {asked}"
    )]
    OtherWorkspace {
        id: String,
        workspace: String,
        asked: String,
    },
    #[error("session {0} is the one open here already")]
    AlreadyOpen(String),
    #[error(
        "session {0} is open in another Waypoint process; quit that one first (nothing was deleted)"
    )]
    InUse(String),
    #[error("session {0} is open in another Waypoint process; quit that one first")]
    Locked(String),
}

impl SessionError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A fresh session id: 32 random hex digits, in the dashed UUID form.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The first characters of an id, enough to name it in a listing.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// How long ago `then_ms` was, as a listing says it: `just now`, `5 min ago`,
/// `3 h ago`, `12 d ago`.
pub fn ago(then_ms: u64, now_ms: u64) -> String {
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => "just now".into(),
        60..3_600 => format!("{} min ago", secs / 60),
        3_600..86_400 => format!("{} h ago", secs / 3_600),
        _ => format!("{} d ago", secs / 86_400),
    }
}

/// A size in bytes, short: `812 B`, `14 KB`, `3.2 MB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{} KB", bytes / 1_000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// UTC date and time of a Unix-millisecond instant: `2026-12-03 14:05 UTC`.
/// An instant past the year 9999 (only a damaged transcript has one) shows
/// as that year's last minute.
pub fn utc(ms: u64) -> String {
    /// 9999-12-31 23:59:59, the last second RFC 3339 can write.
    const LAST_SECOND: u64 = 253_402_300_799;
    let secs = (ms / 1000).min(LAST_SECOND);
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    // `2026-12-03T14:05:09Z`: the same width for every year up to 9999.
    let mut stamp = String::new();
    let _ = write!(stamp, "{}", humantime::format_rfc3339_seconds(at));
    match (stamp.get(..10), stamp.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => stamp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_ages_read_well() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_267_100_000), "2026-12-03 03:05 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(ago(0, 30_000), "just now");
        assert_eq!(ago(0, 300_000), "5 min ago");
        assert_eq!(ago(0, 3 * 86_400_000), "3 d ago");
        assert_eq!(size(812), "812 B");
        assert_eq!(size(14_500), "14 KB");
        assert_eq!(short_id("0123456789ab"), "01234567");
    }

    /// The hand-written calendar `utc` used before the crate: the oracle
    /// its output must match byte for byte.
    fn utc_by_hand(ms: u64) -> String {
        let secs = ms / 1000;
        let days = i64::try_from(secs / 86_400).unwrap_or(0);
        let rem = secs % 86_400;
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!(
            "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
            rem / 3_600,
            rem % 3_600 / 60
        )
    }

    #[test]
    fn utc_is_byte_for_byte_what_the_calendar_by_hand_said() {
        // Every 6 h (less 7 ms) from 1970 to 2200: every hour of the day,
        // every day of the month, leap days and century years come up.
        let mut ms = 0;
        while ms < 7_258_118_400_000 {
            assert_eq!(utc(ms), utc_by_hand(ms), "{ms}");
            ms += 21_599_993;
        }
        let edges = [
            59_999,              // the minute is cut, not rounded
            951_868_799_999,     // 2000-02-29 23:59:59.999
            4_107_542_400_000,   // 2100-03-01: not a leap year
            253_402_300_799_999, // 9999-12-31 23:59:59.999
        ];
        for ms in edges {
            assert_eq!(utc(ms), utc_by_hand(ms), "{ms}");
        }
        // Past the year 9999 (a damaged transcript): its last minute.
        assert_eq!(utc(u64::MAX), "9999-12-31 23:59 UTC");
    }
}
