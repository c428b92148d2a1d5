//! The editor that may hold the workspace's files: under the Agent Client
//! Protocol an editor (Zed, …) offers `fs/read_text_file` and
//! `fs/write_text_file`, and the file tools then read its buffers (unsaved
//! changes included) and write through it. Invariant: this is only the
//! text's way in and out; every check a file tool makes (the workspace's
//! bounds, the path's kind, size and binary limits) runs before the editor
//! is asked, so a path a tool refuses never reaches it.

use std::path::Path;

use futures_util::future::BoxFuture;

/// An editor that holds the workspace's files (an ACP client): the file tools read its buffers and write through it.
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// The file's text as the editor has it (unsaved changes included). `Ok(None)`: the editor cannot tell; read the disk.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>>;
    /// Writes `text` to the file through the editor (which saves it).
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
}
