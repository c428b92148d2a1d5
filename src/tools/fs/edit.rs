//! `edit_file`: exact text replacement. Invariant: files above
//! `MAX_EDIT_BYTES` are refused, and the result is written atomically; with
//! an editor, its buffer is what is edited and written back through it,
//! after the disk's checks ([`super::through`]).

use std::path::Path;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::through::{Buffer, buffer, store};
use super::{BINARY_SNIFF, open_file, plural};
use crate::tools::args::{TypedTool, held, parse};
use crate::tools::{
    Access, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, summary_line,
};

/// Largest file `edit_file` loads into memory.
const MAX_EDIT_BYTES: u64 = 10 * 1024 * 1024;
/// Lines of the change summary `edit_file` shows.
const SUMMARY_LINES: usize = 20;

/// Reads a whole text file of at most `MAX_EDIT_BYTES` for `edit_file`,
/// through the workspace's root fd, on the blocking pool.
async fn read_text(
    workspace: &crate::tools::Workspace,
    resolved: &Path,
    shown: &str,
) -> Result<String, String> {
    let files = workspace.files().clone();
    let rel = workspace.relative(resolved).to_path_buf();
    let owned = shown.to_string();
    tokio::task::spawn_blocking(move || read_text_blocking(&files, &rel, &owned))
        .await
        .map_err(|e| format!("reading `{shown}` was aborted: {e}"))?
}

fn read_text_blocking(files: &crate::fsx::Root, rel: &Path, shown: &str) -> Result<String, String> {
    let (mut file, len) = open_file(files, rel, shown)?;
    if len > MAX_EDIT_BYTES {
        return Err(too_large(shown, len));
    }
    // Past the limit: a file that grew since it was opened.
    let (bytes, cut) = crate::fsx::read_capped(&mut file, MAX_EDIT_BYTES as usize)
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if cut {
        return Err(too_large(shown, MAX_EDIT_BYTES + 1));
    }
    text_of(bytes, shown)
}

/// `bytes` as text to edit, unless they are too many or binary.
fn text_of(bytes: Vec<u8>, shown: &str) -> Result<String, String> {
    let len = bytes.len();
    if len as u64 > MAX_EDIT_BYTES {
        return Err(too_large(shown, len as u64));
    }
    if bytes[..len.min(BINARY_SNIFF)].contains(&0) {
        return Err(format!("`{shown}` is a binary file ({len} bytes)"));
    }
    String::from_utf8(bytes).map_err(|_| format!("`{shown}` is a binary file ({len} bytes)"))
}

fn too_large(shown: &str, len: u64) -> String {
    format!(
        "`{shown}` is too large to edit ({len} bytes; edit_file handles up to {} MiB). \
Use bash (e.g. sed) for files this large",
        MAX_EDIT_BYTES >> 20
    )
}

/// The text `edit_file` changes: the disk's, checked, then the editor's
/// buffer when it gives one (held to the same limits), and the note of an
/// editor that failed to.
async fn text_to_edit(
    env: &ToolEnv<'_>,
    resolved: &Path,
    shown: &str,
) -> Result<(String, Option<String>), String> {
    let text = read_text(env.workspace, resolved, shown).await?;
    match buffer(env, resolved).await {
        Buffer::Editor(text) => Ok((text_of(text.into_bytes(), shown)?, None)),
        Buffer::Disk(note) => Ok((text, note)),
        Buffer::Interrupted => Err(format!("reading `{shown}` was interrupted")),
    }
}

/// The `edit_file` tool.
pub struct EditFile;

/// An `edit_file` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    // The file, relative to the workspace.
    #[serde(alias = "file_path", alias = "filePath")]
    pub path: String,
    // The exact text to replace.
    #[serde(alias = "old_string", alias = "oldString")]
    pub old_text: String,
    // The text to put in its place.
    #[serde(alias = "new_string", alias = "newString")]
    pub new_text: String,
    // Replace every occurrence (default: exactly one must exist).
    pub replace_all: Option<bool>,
}

impl TypedTool for EditFile {
    type Args = EditArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "edit_file",
            "Replace exact text in a file. `old_text` must occur exactly once unless `replace_all` is true.",
            schema,
            Access::Write,
        )
    }
    fn target_of<'v>(&self, args: &EditArgs, input: &'v Value) -> Target<'v> {
        Target::File(held(input, &args.path))
    }
    fn summary_of(&self, args: Option<&EditArgs>) -> ToolSummary {
        let (path, old, new) = args.map_or(("", "", ""), |a| {
            (a.path.as_str(), a.old_text.as_str(), a.new_text.as_str())
        });
        ToolSummary {
            line: summary_line(path),
            detail: ToolDetail::Diff {
                path: path.to_string(),
                old: old.to_string(),
                new: new.to_string(),
                first: 0,
            },
        }
    }
    fn call<'a>(&'a self, args: EditArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { edit(&args, &ctx.env).await })
    }
}

/// `edit_file {path, old_text, new_text, replace_all?}`: exact replacement.
pub async fn edit_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<EditArgs>(input) {
        Ok(args) => edit(&args, env).await,
        Err(why) => why.into_output(),
    }
}

/// Makes the replacement `args` ask for.
async fn edit(args: &EditArgs, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("", "");
    }
    match edit_file_inner(args, env).await {
        Ok(msg) => ToolOutput::ok(msg),
        // The editor was being asked when the user interrupted.
        Err(_) if env.cancel.is_cancelled() => ToolOutput::interrupted("", ""),
        Err(e) => ToolOutput::error(e),
    }
}

async fn edit_file_inner(args: &EditArgs, env: &ToolEnv<'_>) -> Result<String, String> {
    let (raw, old_text, new_text) = (
        args.path.as_str(),
        args.old_text.as_str(),
        args.new_text.as_str(),
    );
    if old_text.is_empty() {
        return Err(
            "`old_text` is empty; give the exact text to replace (use write_file to create a file)"
                .to_string(),
        );
    }
    if old_text == new_text {
        return Err("`old_text` and `new_text` are identical; nothing to change".to_string());
    }
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    let (text, note) = text_to_edit(env, &path, &shown).await?;
    let done = replace_in(env, &path, &shown, &text, args).await;
    // An editor that could not give its buffer: the disk's text was edited.
    match note {
        None => done,
        Some(note) => done
            .map(|msg| format!("{note}\n{msg}"))
            .map_err(|e| format!("{e}\n{note}")),
    }
}

/// Replaces `args.old_text` in `text`, the file at `path`, and stores the
/// result; what the model reads.
async fn replace_in(
    env: &ToolEnv<'_>,
    path: &Path,
    shown: &str,
    text: &str,
    args: &EditArgs,
) -> Result<String, String> {
    let (old_text, new_text) = (args.old_text.as_str(), args.new_text.as_str());
    let replace_all = args.replace_all.unwrap_or(false);
    let count = text.matches(old_text).count();
    if count == 0 {
        let mut msg = format!(
            "`old_text` was not found in `{shown}`. Read the file first; the text, including \
whitespace and indentation, must match exactly"
        );
        if text.contains("\r\n") && !old_text.contains("\r\n") && old_text.contains('\n') {
            msg.push_str(" (this file uses CRLF line endings)");
        }
        return Err(msg);
    }
    if count > 1 && !replace_all {
        return Err(format!(
            "`old_text` appears {count} times in `{shown}`; add surrounding context to make it \
unique, or set replace_all to true"
        ));
    }
    let updated = if replace_all {
        text.replace(old_text, new_text)
    } else {
        text.replacen(old_text, new_text, 1)
    };
    store(env, path, &updated, shown, false).await?;
    let summary = change_summary(text, &updated, old_text, new_text);
    Ok(format!(
        "Edited {shown}: replaced {count} occurrence{}\n{summary}",
        plural(count)
    ))
}

/// A small unified-style view of the lines touched by replacing every match
/// of `old` in `before` (giving `after`), capped at `SUMMARY_LINES` lines.
fn change_summary(before: &str, after: &str, old: &str, new: &str) -> String {
    let delta = new.len() as isize - old.len() as isize;
    // Groups of matches whose lines overlap: (line start, line end, shift
    // before the group, shift after the group) in `before` coordinates.
    let mut groups: Vec<(usize, usize, isize, isize)> = Vec::new();
    let mut shift: isize = 0;
    for (pos, _) in before.match_indices(old) {
        let start = before[..pos].rfind('\n').map_or(0, |i| i + 1);
        let end_match = pos + old.len();
        let end = before[end_match..]
            .find('\n')
            .map_or(before.len(), |i| end_match + i);
        match groups.last_mut() {
            Some(g) if start <= g.1 => {
                g.1 = g.1.max(end);
                g.3 = shift + delta;
            }
            _ => groups.push((start, end, shift, shift + delta)),
        }
        shift += delta;
    }
    let mut lines: Vec<String> = Vec::new();
    for (start, end, shift_before, shift_after) in groups {
        let line_no = before[..start].matches('\n').count() + 1;
        let new_start = start.saturating_add_signed(shift_before);
        let new_end = end.saturating_add_signed(shift_after);
        lines.push(format!("@@ line {line_no} @@"));
        lines.extend(before[start..end].split('\n').map(|l| format!("-{l}")));
        if let Some(region) = after.get(new_start..new_end) {
            lines.extend(region.split('\n').map(|l| format!("+{l}")));
        }
    }
    let total = lines.len();
    let mut out: Vec<String> = lines.into_iter().take(SUMMARY_LINES).collect();
    if total > SUMMARY_LINES {
        out.push(format!(
            "… {} more line{}",
            total - SUMMARY_LINES,
            plural(total - SUMMARY_LINES)
        ));
    }
    out.join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::fs::fixture;
    use serde_json::json;

    // ---- edit_file ----

    #[tokio::test]
    async fn edit_replaces_once_with_summary() {
        let f = fixture();
        f.put("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
        let out = f
            .edit(json!({"path": "a.rs", "old_text": "fn b() {}", "new_text": "fn bee() {}"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(
            out.content,
            "Edited a.rs: replaced 1 occurrence\n@@ line 2 @@\n-fn b() {}\n+fn bee() {}"
        );
        assert_eq!(f.get("a.rs"), "fn a() {}\nfn bee() {}\nfn c() {}\n");
        assert_eq!(f.entries("."), ["a.rs"], "no temporary files left behind");
    }

    #[tokio::test]
    async fn edit_multiline_and_deletion() {
        let f = fixture();
        f.put("a.txt", "keep\nx = 1\ny = 2\nkeep\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "x = 1\ny = 2", "new_text": "z = 3"}))
            .await;
        assert_eq!(
            out.content,
            "Edited a.txt: replaced 1 occurrence\n@@ line 2 @@\n-x = 1\n-y = 2\n+z = 3"
        );
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "z = 3\n", "new_text": ""}))
            .await;
        assert!(!out.is_error());
        assert_eq!(f.get("a.txt"), "keep\nkeep\n");
    }

    #[tokio::test]
    async fn edit_not_found_and_ambiguous() {
        let f = fixture();
        f.put("a.txt", "dup\ndup\nsolo\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "absent", "new_text": "x"}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content
                .starts_with("Error: `old_text` was not found in `a.txt`")
        );
        assert!(out.content.contains("Read the file first"));
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "dup", "new_text": "x"}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content.contains("appears 2 times in `a.txt`"),
            "{}",
            out.content
        );
        assert!(out.content.contains("replace_all"));
        assert_eq!(f.get("a.txt"), "dup\ndup\nsolo\n");
    }

    #[tokio::test]
    async fn edit_replace_all() {
        let f = fixture();
        f.put("a.txt", "dup dup\nmid\ndup\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "dup", "new_text": "d", "replace_all": true}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(
            out.content,
            "Edited a.txt: replaced 3 occurrences\n@@ line 1 @@\n-dup dup\n+d d\n@@ line 3 @@\n-dup\n+d"
        );
        assert_eq!(f.get("a.txt"), "d d\nmid\nd\n");
    }

    #[tokio::test]
    async fn edit_summary_is_capped() {
        let f = fixture();
        let text: String = (0..50).map(|i| format!("v{i}\n")).collect();
        f.put("a.txt", &text);
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "v", "new_text": "w", "replace_all": true}))
            .await;
        assert!(
            out.content
                .starts_with("Edited a.txt: replaced 50 occurrences\n")
        );
        assert!(out.content.ends_with("… 130 more lines"), "{}", out.content);
        assert_eq!(out.content.lines().count(), 22);
    }

    #[tokio::test]
    async fn edit_refuses_files_above_the_size_limit() {
        let f = fixture();
        f.sparse("big.txt", "needle\n", MAX_EDIT_BYTES + 1);
        let out = f
            .edit(json!({"path": "big.txt", "old_text": "needle", "new_text": "pin"}))
            .await;
        assert!(out.is_error());
        assert_eq!(
            out.content,
            "Error: `big.txt` is too large to edit (10485761 bytes; edit_file handles up to \
10 MiB). Use bash (e.g. sed) for files this large"
        );
        assert_eq!(
            std::fs::metadata(f.ws.root().join("big.txt"))
                .unwrap()
                .len(),
            MAX_EDIT_BYTES + 1
        );
        // At the limit the size passes (the hole then makes it binary).
        f.sparse("edge.txt", "needle\n", MAX_EDIT_BYTES);
        let out = f
            .edit(json!({"path": "edge.txt", "old_text": "needle", "new_text": "pin"}))
            .await;
        assert_eq!(
            out.content,
            "Error: `edge.txt` is a binary file (10485760 bytes)"
        );
    }

    #[tokio::test]
    async fn edit_bad_arguments() {
        let f = fixture();
        f.put("a.txt", "text\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "", "new_text": "x"}))
            .await;
        assert!(out.is_error());
        assert!(out.content.starts_with("Error: `old_text` is empty"));
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "t", "new_text": "t"}))
            .await;
        assert!(out.content.contains("identical"));
        let out = f.edit(json!({"path": "a.txt", "old_text": "t"})).await;
        assert_eq!(out.content, "Error: missing required argument `new_text`");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "t", "new_text": "x", "replace_all": "yes"}))
            .await;
        assert!(out.content.contains("`replace_all` must be true or false"));
        let out = f
            .edit(json!({"path": "missing.txt", "old_text": "t", "new_text": "x"}))
            .await;
        assert_eq!(out.content, "Error: `missing.txt` does not exist");
        let out = f
            .edit(json!({"path": "../a.txt", "old_text": "t", "new_text": "x"}))
            .await;
        assert!(out.content.contains("escapes the workspace"));
        assert_eq!(f.get("a.txt"), "text\n");
    }
}
