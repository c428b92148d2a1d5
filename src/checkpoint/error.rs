//! What can fail in the checkpoint stores: the shadow git repository (its
//! snapshots and diffs) and the pre-image blobs. Each variant's message is
//! what the user is shown.

use std::io;
use std::path::PathBuf;

/// Why the shadow repository or the blob store could not do its part.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("preparing the shadow repository {}: {source}", .dir.display())]
    Prepare { dir: PathBuf, source: io::Error },
    /// No usable git (the message says why).
    #[error("{0}")]
    NoGit(String),
    /// Git could not be run at all (`what`: its subcommand's words).
    #[error("running git {what}: {source}")]
    Run { what: String, source: io::Error },
    #[error("git init failed: {0}")]
    InitFailed(String),
    #[error("git {what} failed in the shadow repository: {line}")]
    GitFailed { what: String, line: String },
    #[error("writing the shadow repository's excludes: {0}")]
    Excludes(io::Error),
    #[error("git write-tree gave no tree")]
    NoTree,
    #[error("`{0}` is not a snapshot reference")]
    NotASnapshot(String),
    #[error("git diff-tree gave a change with no path")]
    NoPath,
    #[error("git diff-tree gave an unreadable line `{0}`")]
    Unreadable(String),
    #[error("keeping a file's earlier content: {0}")]
    Keep(io::Error),
    #[error("`{0}` is not a pre-image reference")]
    NotAPreImage(String),
    /// `id`: the first 12 digits of the content's hash.
    #[error("reading the kept content {id}: {source}")]
    ReadKept { id: String, source: io::Error },
    #[error("the kept content {0} is damaged (its hash differs)")]
    Damaged(String),
}

/// Why an undo (its plan, its merge, its writing) or a checkpoint diff
/// could not be done. Each variant's message is what the user is shown.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Preparing, writing or running a three-way merge.
    #[error("merging: {0}")]
    Merge(io::Error),
    #[error("merging: {}: {source}", .path.display())]
    MergeInput { path: PathBuf, source: io::Error },
    #[error("merging needs git: {0}")]
    MergeNoGit(String),
    /// A blob reference neither layer can read.
    #[error("`{0}` cannot be read here")]
    CannotRead(String),
    #[error("reading {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("no checkpoint was taken in this session")]
    NoCheckpoint,
    #[error("there is no turn to undo")]
    NoTurn,
    #[error("there is no checkpoint #{0}")]
    NoSuchPoint(u32),
    #[error("item {0} was never in progress in this session")]
    NeverInProgress(String),
    #[error("checkpoint #{0} has no snapshot")]
    NoSnapshot(u32),
    #[error("writing the restore's progress: {0}")]
    Progress(io::Error),
    #[error("writing the restore's journal: {0}")]
    Journal(io::Error),
    #[error("restore journal: {0}")]
    JournalEncode(serde_json::Error),
    #[error("removing {path}: {source}")]
    Remove { path: String, source: io::Error },
    #[error("restoring the link {path}: {source}")]
    RestoreLink { path: String, source: io::Error },
    #[error("restoring {path}: {source}")]
    Restore { path: String, source: io::Error },
    #[error("checkpoints are off: this session is not recorded")]
    Off,
    #[error("no checkpoint was taken in this session yet")]
    NoCheckpointYet,
    #[error("the checkpoint work stopped: {0}")]
    Stopped(tokio::task::JoinError),
}

/// Callers outside the checkpoint modules still speak in message strings.
impl From<RestoreError> for String {
    fn from(e: RestoreError) -> String {
        e.to_string()
    }
}
