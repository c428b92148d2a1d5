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

/// The restore and the live store still speak in message strings.
impl From<StoreError> for String {
    fn from(e: StoreError) -> String {
        e.to_string()
    }
}
