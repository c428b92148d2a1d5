//! The file tools `read_file`, `write_file` and `edit_file`. Invariant: every
//! path goes through `Workspace::resolve` (for its messages) and every open
//! through `Workspace::files` (the root fd: nothing outside the workspace is
//! opened, whatever is swapped in meanwhile, and only regular files are);
//! reads stream and stop after the requested lines, so memory never grows
//! with the file; `edit_file` refuses files above `MAX_EDIT_BYTES`; writes go
//! to the path's real target (a symlink, dangling or not, is written
//! through, never replaced) and are atomic (temp file in the same
//! directory, synced, renamed over the target), so a failed write never
//! leaves a half-written file. With an editor ([`crate::tools::FileTools`]),
//! a file that passed every one of these checks is read from the editor's
//! buffer and written through it instead (`through.rs`).

mod edit;
mod image;
mod read;
mod through;
mod write;

use std::io;
use std::path::Path;

use crate::fsx::{Root, not_regular, read_capped};

pub use edit::{EditFile, edit_file};
pub use read::{ReadFile, read_file, read_image};
pub use write::{WriteFile, write_file};

/// The largest file whose old text a write's or edit's diff shows (the
/// diff travels in events and the transcript).
const DIFF_CONTEXT_BYTES: u64 = 64 * 1024;

/// Puts a file change's diff in its place: an overwrite of an existing
/// file gets the file's text as `old` (so the user sees what it replaces),
/// an edit gets its whole lines and three unchanged lines on each side in
/// `old` and `new` (the diff's context) and the line where they start. Files that cannot be read,
/// are too big or are not UTF-8 keep the diff as the call gave it.
pub fn locate(
    tool: &str,
    detail: &mut crate::events::ToolDetail,
    workspace: &crate::tools::Workspace,
) {
    let crate::events::ToolDetail::Diff {
        path,
        old,
        new,
        first,
    } = detail
    else {
        return;
    };
    let Ok(resolved) = workspace.resolve(path) else {
        return;
    };
    let rel = workspace.relative(&resolved);
    let Ok((mut file, len)) = open_file(workspace.files(), rel, path) else {
        return;
    };
    if len > DIFF_CONTEXT_BYTES {
        return;
    }
    let Ok((bytes, false)) = read_capped(&mut file, DIFF_CONTEXT_BYTES as usize) else {
        return;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return;
    };
    if tool == "write_file" {
        *old = text;
        *first = 1;
    } else if tool == "edit_file"
        && !old.is_empty()
        && let Some(at) = text.find(old.as_str())
    {
        let (start, end) = with_context(&text, at, at + old.len(), EDIT_CONTEXT_LINES);
        *new = format!("{}{new}{}", &text[start..at], &text[at + old.len()..end]);
        *old = text[start..end].to_string();
        *first = text[..start].matches('\n').count() + 1;
    }
}

/// Unchanged lines an edit's diff carries around its text (the diff shows
/// them as context).
const EDIT_CONTEXT_LINES: usize = 3;

/// The byte range of `text` holding `start..end` widened to whole lines
/// and `lines` more lines on each side (fewer at the file's ends).
fn with_context(text: &str, start: usize, end: usize, lines: usize) -> (usize, usize) {
    let mut from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    for _ in 0..lines {
        if from == 0 {
            break;
        }
        from = text[..from - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    // The end of the line `end` falls in (a text ending in a newline ends
    // its line already).
    let mut to = if end > start && text[..end].ends_with('\n') {
        end
    } else {
        text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
    };
    for _ in 0..lines {
        if to >= text.len() {
            break;
        }
        to = text[to..].find('\n').map_or(text.len(), |i| to + i + 1);
    }
    (from, to)
}

/// Bytes inspected for NUL when deciding whether a file is binary.
const BINARY_SNIFF: usize = 8192;

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Opens the regular file `rel` of the workspace (blocking) and gives its
/// size, with messages for the usual failures.
pub(super) fn open_file(
    files: &Root,
    rel: &Path,
    shown: &str,
) -> Result<(std::fs::File, u64), String> {
    let file = files.open_file(rel).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("`{shown}` does not exist"),
        io::ErrorKind::IsADirectory => format!("`{shown}` is a directory; use glob to list files"),
        _ => match not_regular(&e) {
            Some(kind) => format!("`{shown}` is not a regular file (it is {kind})"),
            None => format!("cannot open `{shown}`: {e}"),
        },
    })?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot access `{shown}`: {e}"))?
        .len();
    Ok((file, len))
}

#[cfg(test)]
pub(super) fn fixture() -> crate::tools::test_support::Fixture {
    crate::tools::test_support::Fixture::new()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::ToolOutput;
    use crate::tools::test_support::Fixture;
    use serde_json::{Value, json};

    impl Fixture {
        pub(crate) async fn read(&self, input: Value) -> ToolOutput {
            read_file(&input, &self.env()).await
        }
        pub(crate) async fn write(&self, input: Value) -> ToolOutput {
            write_file(&input, &self.env()).await
        }
        pub(crate) async fn edit(&self, input: Value) -> ToolOutput {
            edit_file(&input, &self.env()).await
        }
        /// `rel` grown to `len` bytes with a hole of NULs (no disk used).
        pub(crate) fn sparse(&self, rel: &str, head: &str, len: u64) {
            self.put(rel, head);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(self.ws.root().join(rel))
                .unwrap();
            file.set_len(len).unwrap();
        }
    }

    #[tokio::test]
    async fn every_file_tool_stops_when_already_interrupted() {
        let f = fixture();
        f.put("a.txt", "old\n");
        f.cancel.cancel();
        let calls = [
            f.read(json!({"path": "a.txt"})).await,
            f.write(json!({"path": "b.txt", "content": "x"})).await,
            f.edit(json!({"path": "a.txt", "old_text": "old", "new_text": "new"}))
                .await,
        ];
        for out in calls {
            assert!(out.was_interrupted() && out.is_error(), "{out:?}");
            assert_eq!(
                out.content,
                "Error: interrupted by the user before this tool finished."
            );
        }
        assert_eq!(f.entries("."), ["a.txt"]);
        assert_eq!(f.get("a.txt"), "old\n");
    }
}
