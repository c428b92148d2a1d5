//! Applying a restore: a journal of every action reaches the disk
//! first, then each file is written atomically (or removed), so a
//! restore cut off by kill -9 is finished when the session is next opened
//! and the work tree never stays half restored. Invariant: a file whose
//! content is no longer the one the preview saw is left alone.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::restore::{Action, Conflict, Preview, Store, sha256};
use crate::fsx::WriteOptions;

/// A restore in progress, on disk until it is done.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    actions: Vec<Action>,
    done: usize,
}

/// What applying did: the files written, the ones refused and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub files: Vec<String>,
    pub conflicts: Vec<Conflict>,
}

impl Store {
    fn journal_path(&self) -> PathBuf {
        self.blobs.dir().join("restore.json")
    }

    /// Applies `preview`'s actions: the journal first, then each file
    /// atomically. A file whose content is no longer the one the preview
    /// saw is left alone (a conflict).
    pub fn apply(&self, preview: &Preview) -> Result<Applied, String> {
        let mut journal = Journal {
            actions: preview.actions.clone(),
            done: 0,
        };
        self.write_journal(&journal)?;
        let mut applied = Applied {
            conflicts: preview.conflicts.clone(),
            ..Applied::default()
        };
        for at in 0..journal.actions.len() {
            let action = &journal.actions[at];
            let now = self.current(&action.path)?;
            if now.as_deref().map(sha256) != action.expect {
                applied.conflicts.push(Conflict {
                    path: action.path.clone(),
                    why: "changed after the preview; left as it is".into(),
                });
            } else {
                self.write(action)?;
                applied.files.push(action.path.clone());
            }
            journal.done = at + 1;
            self.write_journal(&journal)?;
        }
        let _ = std::fs::remove_file(self.journal_path());
        Ok(applied)
    }

    /// Finishes a restore a crash cut off (its journal is still there):
    /// the files it had not reached are written now. The files it did
    /// reach are written again (the same bytes).
    pub fn recover(&self) -> Result<Option<Applied>, String> {
        let path = self.journal_path();
        let Ok(text) = std::fs::read(&path) else {
            return Ok(None);
        };
        let Ok(journal) = serde_json::from_slice::<Journal>(&text) else {
            // Cut off while the journal itself was written: nothing ran yet.
            let _ = std::fs::remove_file(&path);
            return Ok(None);
        };
        let mut applied = Applied::default();
        for action in &journal.actions {
            self.write(action)?;
            applied.files.push(action.path.clone());
        }
        let _ = std::fs::remove_file(&path);
        Ok(Some(applied))
    }

    fn write_journal(&self, journal: &Journal) -> Result<(), String> {
        let context = |e: std::io::Error| format!("writing the restore's journal: {e}");
        std::fs::create_dir_all(self.blobs.dir()).map_err(context)?;
        let bytes = serde_json::to_vec(journal).map_err(|e| format!("restore journal: {e}"))?;
        let mut tmp = tempfile::NamedTempFile::new_in(self.blobs.dir()).map_err(context)?;
        tmp.write_all(&bytes).map_err(context)?;
        tmp.as_file().sync_all().map_err(context)?;
        tmp.persist(self.journal_path())
            .map_err(|e| context(e.error))?;
        Ok(())
    }

    /// Writes one action's file (atomically) or removes it.
    fn write(&self, action: &Action) -> Result<(), String> {
        let rel = Path::new(&action.path);
        let Some(to) = &action.to else {
            return self
                .root
                .remove(rel)
                .map(|_| ())
                .map_err(|e| format!("removing {}: {e}", action.path));
        };
        if !to.is_file() {
            return Err(format!(
                "{} was a symlink or a submodule then: not restored",
                action.path
            ));
        }
        let bytes = self.read(to)?;
        let options = WriteOptions {
            create_parents: true,
            temp_prefix: ".waypoint-restore-",
            mode: Some(to.mode & 0o777),
        };
        // A symlink now at the path is replaced, not written through.
        let _ = self.symlink_gone(rel);
        self.root
            .replace(rel, &bytes, &options)
            .map(|_| ())
            .map_err(|e| format!("restoring {}: {e}", action.path))
    }

    /// Removes a symlink at `rel` (a restore writes a file in its place).
    fn symlink_gone(&self, rel: &Path) -> std::io::Result<()> {
        let full = self.root.path().join(rel);
        if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
            self.root.remove(rel)?;
        }
        Ok(())
    }
}
