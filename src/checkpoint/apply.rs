//! Applying a restore: a journal of every action reaches the disk
//! first, then each file is written atomically (or removed), so a
//! restore cut off by kill -9 is finished when the session is next opened
//! and the work tree never stays half restored. Invariant: a file whose
//! content is no longer the one the preview saw is left alone.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::RestoreError;
use super::restore::{Action, Conflict, Preview, Store};
use super::{Restored, sha256};
use crate::fsx::WriteOptions;

/// A restore in progress, on disk until it is done: its actions (written
/// once, diffs left out), and beside it a log of the actions done.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    actions: Vec<Action>,
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

    fn done_path(&self) -> PathBuf {
        self.blobs.dir().join("restore.done")
    }

    /// Applies `preview`'s actions: the journal first, then each file
    /// atomically, each one logged as done. A file whose content is no
    /// longer the one the preview saw is left alone (a conflict).
    pub fn apply(&self, preview: &Preview) -> Result<Applied, RestoreError> {
        let actions: Vec<Action> = preview
            .actions
            .iter()
            .map(|a| Action {
                diff: String::new(),
                ..a.clone()
            })
            .collect();
        let journal = Journal { actions };
        self.finish_journal();
        self.write_journal(&journal)?;
        let mut applied = Applied {
            conflicts: preview.conflicts.clone(),
            ..Applied::default()
        };
        self.run(&journal, &[], &mut applied)?;
        self.finish_journal();
        Ok(applied)
    }

    /// Finishes a restore a crash cut off (its journal is still there):
    /// the files it had not reached are written now, by the same rules
    /// (one changed meanwhile is left alone).
    pub fn recover(&self) -> Result<Option<Applied>, RestoreError> {
        let Ok(text) = std::fs::read(self.journal_path()) else {
            return Ok(None);
        };
        let Ok(journal) = serde_json::from_slice::<Journal>(&text) else {
            // Cut off while the journal itself was written: nothing ran yet.
            self.finish_journal();
            return Ok(None);
        };
        let done: Vec<usize> = std::fs::read_to_string(self.done_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        let mut applied = Applied::default();
        self.run(&journal, &done, &mut applied)?;
        self.finish_journal();
        Ok(Some(applied))
    }

    /// Runs the journal's actions not in `done`, logging each one.
    fn run(
        &self,
        journal: &Journal,
        done: &[usize],
        applied: &mut Applied,
    ) -> Result<(), RestoreError> {
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.done_path())
            .map_err(RestoreError::Progress)?;
        for (at, action) in journal.actions.iter().enumerate() {
            if done.contains(&at) {
                applied.files.push(action.path.clone());
                continue;
            }
            let now = self.current(&action.path)?;
            let now_hash = now.as_deref().map(sha256);
            if now_hash == action.expect {
                self.write(action)?;
                applied.files.push(action.path.clone());
            } else if self.is_target(action, now.as_deref())? {
                // Written before the crash; its line in the log was not.
                applied.files.push(action.path.clone());
            } else {
                applied.conflicts.push(Conflict {
                    path: action.path.clone(),
                    why: "changed after the preview; left as it is".into(),
                });
            }
            let _ = writeln!(log, "{at}");
        }
        Ok(())
    }

    /// Whether `now` is already what `action` writes.
    fn is_target(&self, action: &Action, now: Option<&[u8]>) -> Result<bool, RestoreError> {
        Ok(match (&action.to, now) {
            (None, None) => true,
            (Some(to), Some(now)) => self.read(to)? == now,
            _ => false,
        })
    }

    fn finish_journal(&self) {
        let _ = std::fs::remove_file(self.journal_path());
        let _ = std::fs::remove_file(self.done_path());
    }

    fn write_journal(&self, journal: &Journal) -> Result<(), RestoreError> {
        let context = RestoreError::Journal;
        std::fs::create_dir_all(self.blobs.dir()).map_err(context)?;
        let bytes = serde_json::to_vec(journal).map_err(RestoreError::JournalEncode)?;
        let mut tmp = tempfile::NamedTempFile::new_in(self.blobs.dir()).map_err(context)?;
        tmp.write_all(&bytes).map_err(context)?;
        tmp.as_file().sync_all().map_err(context)?;
        tmp.persist(self.journal_path())
            .map_err(|e| context(e.error))?;
        Ok(())
    }

    /// Writes one action's file (atomically) or removes it.
    fn write(&self, action: &Action) -> Result<(), RestoreError> {
        let rel = Path::new(&action.path);
        let Some(to) = &action.to else {
            return self
                .root
                .remove(rel)
                .map(|_| ())
                .map_err(|source| RestoreError::Remove {
                    path: action.path.clone(),
                    source,
                });
        };
        let bytes = self.read(to)?;
        if to.is_link() {
            use std::os::unix::ffi::OsStrExt;
            return self
                .root
                .symlink(rel, std::ffi::OsStr::from_bytes(&bytes))
                .map_err(|source| RestoreError::RestoreLink {
                    path: action.path.clone(),
                    source,
                });
        }
        let options = WriteOptions {
            create_parents: true,
            temp_prefix: ".waypoint-restore-",
            mode: Some(to.mode & 0o777),
        };
        // With snapshots, a symlink now at the path is replaced (the
        // snapshot held a file there); without, the own tools' writes went
        // through it and the restore does too.
        if self.shadow().is_some() && self.root.read_link(rel).is_ok_and(|l| l.is_some()) {
            self.root
                .remove(rel)
                .map_err(|source| RestoreError::Restore {
                    path: action.path.clone(),
                    source,
                })?;
        }
        self.root
            .replace(rel, &bytes, &options)
            .map(|_| ())
            .map_err(|source| RestoreError::Restore {
                path: action.path.clone(),
                source,
            })
    }
}

/// What the model is told of an undo (added to the conversation).
pub fn undo_note(target: &str, restored: &Restored, conflicts: &[Conflict]) -> String {
    let mut note = format!("[The user undid {target}.");
    if restored.files.is_empty() {
        note.push_str(" No file was changed.");
    } else {
        note.push_str(&format!(
            " These files were put back as they were: {}.",
            restored.files.join(", ")
        ));
    }
    if !conflicts.is_empty() {
        let left: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
        note.push_str(&format!(
            " Left as they are (changed since): {}.",
            left.join(", ")
        ));
    }
    if restored.messages.is_some() {
        note.push_str(" The conversation was cut back to that point; what came after it is gone.");
    }
    note.push_str(" Read files again before relying on their earlier content.]");
    note
}
