//! "Approve once" for what a repository brings (its `.mcp.json` servers,
//! its `.claude/settings.json` hooks): the user's approvals, each bound to
//! the SHA-256 of the approved entry's canonical form. Invariants: an
//! approval holds only for an entry whose canonical form hashes to the same
//! 64 hex digits (any changed field is asked for again; finding two entries
//! with one fingerprint means finding a SHA-256 collision); approvals live
//! in the user's data folder, never in the repository; a stored approval of
//! another format (the 16 hex digits of the FNV-1a fingerprints before) is
//! read without error and matches nothing, so it is asked for again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// What an approval binds: the SHA-256 of an entry's canonical form
/// ([`canonical`]), as 64 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of `value`: the SHA-256 of [`canonical`]`(value)`.
    pub fn of(value: &Value) -> Self {
        let digest = Sha256::digest(canonical(value).as_bytes());
        Self(digest.iter().fold(String::with_capacity(64), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        }))
    }

    /// The 64 hex digits, as stored.
    pub fn hex(&self) -> &str {
        &self.0
    }

    /// A fingerprint kept as its hex digits (made by [`Self::of`]).
    pub fn from_hex(hex: String) -> Self {
        Self(hex)
    }
}

pub use crate::json::canonical;

/// The user's approvals of a kind of project entry: for each project
/// folder, each approved entry's name and the fingerprint of the entry
/// then.
#[derive(Clone, Debug)]
pub struct Approvals {
    path: PathBuf,
}

/// As stored: project folder → entry name → fingerprint (hex). Values of
/// an older format are kept as read and simply match nothing.
type Approved = BTreeMap<String, BTreeMap<String, String>>;

impl Approvals {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `$WAYPOINT_HOME/mcp-approved.json`, else the platform data
    /// folder's (`~/.local/share/waypoint/mcp-approved.json` on Linux).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Self::from_env_named(env, "mcp-approved.json")
    }

    /// The approvals file `name` in the same folder as [`Self::from_env`]'s.
    pub fn from_env_named(env: impl Fn(&str) -> Option<String>, name: &str) -> Option<Self> {
        if let Some(home) = env("WAYPOINT_HOME").filter(|h| !h.trim().is_empty()) {
            return Some(Self::new(PathBuf::from(home).join(name)));
        }
        directories::ProjectDirs::from("", "", "waypoint")
            .map(|d| Self::new(d.data_dir().join(name)))
    }

    /// What is stored; a missing or unreadable file approves nothing.
    fn load(&self) -> Approved {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn key(workspace: &Path) -> String {
        std::fs::canonicalize(workspace)
            .unwrap_or_else(|_| workspace.to_path_buf())
            .to_string_lossy()
            .into_owned()
    }

    /// Whether the entry `name` of `workspace` was approved as it is now
    /// (`print`).
    pub fn approved(&self, workspace: &Path, name: &str, print: &Fingerprint) -> bool {
        self.load()
            .get(&Self::key(workspace))
            .and_then(|entries| entries.get(name))
            .is_some_and(|p| p == print.hex())
    }

    /// Remembers the entries `entries` (name, fingerprint) as approved for
    /// `workspace` (an older approval of the same name is replaced).
    pub fn approve<'a>(
        &self,
        workspace: &Path,
        entries: impl IntoIterator<Item = (&'a String, &'a Fingerprint)>,
    ) -> std::io::Result<()> {
        let context = |what: &str, e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("{what} {}: {e}", self.path.display()))
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| context("creating the folder of", e))?;
        // Two sessions approving at once: one read-modify-write at a time,
        // so neither approval is lost.
        let lock = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.path.with_extension("json.lock"))
            .map_err(|e| context("locking", e))?;
        // Released when `lock` is closed.
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| context("locking", e.into()))?;
        let mut all = self.load();
        let project = all.entry(Self::key(workspace)).or_default();
        for (name, print) in entries {
            project.insert(name.clone(), print.hex().to_string());
        }
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        let write = || -> std::io::Result<()> {
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            file.persist(&self.path).map_err(|e| e.error)?;
            Ok(())
        };
        write().map_err(|e| context("writing", e))?;
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn print(n: u32) -> Fingerprint {
        Fingerprint::of(&json!({ "n": n }))
    }

    #[test]
    fn the_fingerprint_is_the_sha256_hex_of_the_canonical_form() {
        let entry = json!({"url": "https://h/mcp", "headers": {"b": "2", "a": "1"}, "args": ["x", 1, null, true]});
        let text = canonical(&entry);
        assert_eq!(
            text,
            r#"{"args":["x",1,null,true],"headers":{"a":"1","b":"2"},"url":"https://h/mcp"}"#
        );
        let want: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let got = Fingerprint::of(&entry);
        assert_eq!(got.hex(), want);
        assert_eq!(got.hex().len(), 64);
        // Key order does not matter; any changed value, or a string that
        // holds what a structure would print, does.
        let reordered: Value =
            serde_json::from_str(r#"{"headers": {"a": "1", "b": "2"}, "args": ["x", 1, null, true], "url": "https://h/mcp"}"#)
                .unwrap();
        assert_eq!(Fingerprint::of(&reordered), got);
        let mut changed = entry;
        changed["headers"]["b"] = json!("3");
        assert_ne!(Fingerprint::of(&changed), got);
        assert_ne!(
            Fingerprint::of(&json!({"a": "1,\"b\":\"2"})),
            Fingerprint::of(&json!({"a": "1", "b": "2"}))
        );
    }

    /// The 64-bit FNV-1a the approvals were keyed by before.
    fn fnv1a(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn an_old_fnv_approval_is_read_without_error_and_not_honoured() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let path = home.path().join("mcp-approved.json");
        let entry = json!({"command": "srv"});
        // What the FNV version stored for this entry: its 16 hex digits.
        let key = std::fs::canonicalize(project.path()).unwrap();
        let old = json!({ key.to_string_lossy(): {
            "s": format!("{:016x}", fnv1a(&entry.to_string())),
            "junk": "not hex at all",
        }});
        std::fs::write(&path, old.to_string()).unwrap();
        let approvals = Approvals::new(&path);
        let print = Fingerprint::of(&entry);
        assert!(!approvals.approved(project.path(), "s", &print));
        // Approving again replaces it, and then it holds.
        approvals
            .approve(project.path(), [(&"s".to_string(), &print)])
            .unwrap();
        assert!(approvals.approved(project.path(), "s", &print));
        let saved = std::fs::read_to_string(&path).unwrap();
        assert!(saved.contains(print.hex()), "{saved}");
        // A file that is not JSON at all approves nothing and breaks nothing.
        std::fs::write(&path, "{not json").unwrap();
        assert!(!approvals.approved(project.path(), "s", &print));
    }

    #[test]
    fn an_approval_holds_for_the_entry_as_it_was_approved() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let approvals = Approvals::new(home.path().join("a/mcp-approved.json"));
        let servers = BTreeMap::from([("s".to_string(), print(1))]);
        assert!(!approvals.approved(project.path(), "s", &print(1)));
        approvals.approve(project.path(), &servers).unwrap();
        assert!(approvals.approved(project.path(), "s", &print(1)));
        // Another project, or the same name with another entry: asked again.
        let other = tempfile::tempdir().unwrap();
        assert!(!approvals.approved(other.path(), "s", &print(1)));
        assert!(!approvals.approved(project.path(), "s", &print(2)));
        // Many approving at once (sessions in two terminals): none is lost.
        let names: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
        std::thread::scope(|scope| {
            for name in &names {
                let (approvals, project) = (approvals.clone(), project.path());
                scope.spawn(move || {
                    let one = BTreeMap::from([(name.clone(), print(7))]);
                    approvals.approve(project, &one).unwrap();
                });
            }
        });
        for name in &names {
            assert!(
                approvals.approved(project.path(), name, &print(7)),
                "{name} lost"
            );
        }
        assert!(approvals.approved(project.path(), "s", &print(1)));
    }
}
