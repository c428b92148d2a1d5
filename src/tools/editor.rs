//! The editor that may hold the workspace's files: under the Agent Client
//! Protocol an editor (Zed, …) offers `fs/read_text_file` and
//! `fs/write_text_file`, and the file tools then read its buffers (unsaved
//! changes included) and write through it. Invariant: this is only the
//! text's way in and out; every check a file tool makes (the workspace's
//! bounds, the path's kind, size and binary limits) runs before the editor
//! is asked, so a path a tool refuses never reaches it.
//!
//! It may also offer terminals (`terminal/*`): `bash` then runs a command
//! that would not run in the sandbox in one of them ([`EditorTerminal`]).

use std::path::Path;

use futures_util::future::BoxFuture;

/// An editor that holds the workspace's files (an ACP client): the file tools read its buffers and write through it.
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// The file's text as the editor has it (unsaved changes included). `Ok(None)`: the editor cannot tell; read the disk.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>>;
    /// Writes `text` to the file through the editor (which saves it).
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// A command for the editor's terminal: `bash -c command` in `cwd`.
#[derive(Debug)]
pub struct TerminalRun<'a> {
    /// The command line, run with `bash -c`.
    pub command: &'a str,
    pub cwd: &'a Path,
    /// Variables set for the command, over the editor's environment.
    pub env: Vec<(String, String)>,
    /// Bytes of output the editor keeps (it drops the beginning past them).
    pub output_limit: usize,
    /// The tool call that runs it, as the engine's events name it (its
    /// thread and id): the editor shows the terminal in that call.
    pub call: Option<(u32, &'a str)>,
}

/// What an editor's terminal printed so far, and how it ended if it did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    pub output: String,
    /// The editor dropped the output's beginning (past `output_limit`).
    pub truncated: bool,
    pub exit: Option<TerminalExit>,
}

/// How a terminal's command ended: its exit code, or the signal that killed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalExit {
    pub code: Option<u32>,
    pub signal: Option<String>,
}

/// An editor that runs commands in terminals of its own (an ACP client
/// offering `terminal/*`), where the user watches them. Invariant: `bash`
/// only runs a command there that would not run in the sandbox (one the
/// user approved, or any in yolo mode), after every check of its own, and
/// always releases the terminal it created.
pub trait EditorTerminal: Send + Sync + std::fmt::Debug {
    /// Starts the command in a new terminal; its id.
    fn create<'a>(&'a self, run: TerminalRun<'a>) -> BoxFuture<'a, Result<String, String>>;
    /// What the terminal printed so far (the whole of what it kept).
    fn output<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>>;
    /// Resolves when the command ended.
    fn wait<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>>;
    /// Kills the command (the terminal stays, with its output).
    fn kill<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// Kills the command if it still runs and lets the terminal go.
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>>;
}
