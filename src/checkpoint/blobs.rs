//! The pre-image store: file contents Waypoint's own tools replaced (and
//! what they wrote), kept content-addressed (SHA-256) in a folder beside
//! the session's transcript. Invariant: a blob's name is the hash of its
//! bytes, and it appears under that name only once it is whole (written to
//! a temporary name, synced, renamed), so a blob read back is the bytes put.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::StoreError;

/// A file content of the pre-image store, by hash.
#[derive(Clone, Debug)]
pub struct BlobStore {
    dir: PathBuf,
}

/// The prefix of a pre-image store blob's reference (`sha256:HEX`); a
/// shadow repository's are `git:HEX`.
pub const OWN: &str = "sha256:";

impl BlobStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores `bytes` (once: the same content is one file) and returns
    /// their reference, `sha256:HEX`.
    pub fn put(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let hex = hex(&Sha256::digest(bytes));
        let path = self.path_of(&hex);
        if path.exists() {
            return Ok(format!("{OWN}{hex}"));
        }
        let context = StoreError::Keep;
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(context)?;
        let mut tmp = tempfile::NamedTempFile::new_in(parent).map_err(context)?;
        tmp.write_all(bytes).map_err(context)?;
        tmp.as_file().sync_all().map_err(context)?;
        tmp.persist(&path).map_err(|e| context(e.error))?;
        Ok(format!("{OWN}{hex}"))
    }

    /// The bytes of `reference` (`sha256:HEX`), checked against their hash.
    pub fn get(&self, reference: &str) -> Result<Vec<u8>, StoreError> {
        let hex = reference
            .strip_prefix(OWN)
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| StoreError::NotAPreImage(reference.to_string()))?;
        let id = || hex[..12].to_string();
        let bytes = std::fs::read(self.path_of(hex))
            .map_err(|source| StoreError::ReadKept { id: id(), source })?;
        if self::hex(&Sha256::digest(&bytes)) != hex {
            return Err(StoreError::Damaged(id()));
        }
        Ok(bytes)
    }

    /// Its size on disk, in bytes.
    pub fn disk_bytes(&self) -> u64 {
        dir_bytes(&self.dir)
    }

    fn path_of(&self, hex: &str) -> PathBuf {
        self.dir.join(&hex[..2]).join(&hex[2..])
    }
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The bytes of the files under `dir`, recursively (0 if it is missing).
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn put_is_content_addressed_and_get_checks_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path().join("blobs"));
        let a = store.put(b"hello\n").unwrap();
        assert_eq!(store.put(b"hello\n").unwrap(), a);
        assert!(a.starts_with(OWN));
        assert_eq!(store.get(&a).unwrap(), b"hello\n");
        let hex = a.strip_prefix(OWN).unwrap();
        std::fs::write(store.path_of(hex), b"tampered").unwrap();
        assert!(store.get(&a).unwrap_err().to_string().contains("damaged"));
        assert!(store.get("sha256:zz").is_err());
        assert!(store.disk_bytes() > 0);
    }
}
