//! The file tools `read_file`, `write_file` and `edit_file`. Invariant: every
//! path goes through `Workspace::resolve`, and writes are atomic (temp file in
//! the same directory, synced, renamed over the target), so a failed write
//! never leaves a half-written file.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ToolEnv, ToolOutput, cap_output, opt_bool_arg, opt_u64_arg, str_arg};

/// Lines returned when `limit` is not given.
const DEFAULT_LIMIT: usize = 2000;
/// Characters kept of a single line.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes inspected for NUL when deciding whether a file is binary.
const BINARY_SNIFF: usize = 8192;
/// Lines of the change summary `edit_file` shows.
const SUMMARY_LINES: usize = 20;

/// `read_file {path, offset?, limit?}`: numbered lines.
pub async fn read_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match read_file_inner(input, env).await {
        Ok(text) => ToolOutput::ok(cap_output(&text, env.config.output_cap)),
        Err(e) => ToolOutput::error(e),
    }
}

async fn read_file_inner(input: &Value, env: &ToolEnv<'_>) -> Result<String, String> {
    let raw = str_arg(input, "path")?;
    let offset = opt_u64_arg(input, "offset")?.unwrap_or(1).max(1);
    let limit = match opt_u64_arg(input, "limit")? {
        Some(0) => return Err("`limit` must be at least 1".to_string()),
        Some(n) => n,
        None => DEFAULT_LIMIT as u64,
    };
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    let text = read_text(&path, &shown).await?;
    if text.is_empty() {
        return Ok(format!("(`{shown}` is empty)"));
    }
    let total = text.lines().count();
    let first = usize::try_from(offset).unwrap_or(usize::MAX);
    if first > total {
        return Err(format!(
            "offset {offset} is past the end of `{shown}`, which has {total} line{}",
            plural(total)
        ));
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out = String::new();
    let mut last = first - 1;
    for (i, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        out.push_str(&format!("{:>6}\t{}\n", i + 1, truncate_line(line)));
        last = i + 1;
    }
    if last < total {
        let more = total - last;
        out.push_str(&format!(
            "… {more} more line{}; use offset={} to continue\n",
            plural(more),
            last + 1
        ));
    }
    Ok(out)
}

fn truncate_line(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => {
            let total = line.chars().count();
            format!("{}… [line truncated: {total} chars]", &line[..cut])
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Reads an existing text file, with messages for the usual failures.
async fn read_text(path: &Path, shown: &str) -> Result<String, String> {
    let meta = match tokio::fs::metadata(path).await {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("`{shown}` does not exist"));
        }
        Err(e) => return Err(format!("cannot access `{shown}`: {e}")),
    };
    if meta.is_dir() {
        return Err(format!("`{shown}` is a directory; use glob to list files"));
    }
    if !meta.is_file() {
        return Err(format!("`{shown}` is not a regular file"));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let len = bytes.len();
    if bytes[..len.min(BINARY_SNIFF)].contains(&0) {
        return Err(format!("`{shown}` is a binary file ({len} bytes)"));
    }
    String::from_utf8(bytes).map_err(|_| format!("`{shown}` is a binary file ({len} bytes)"))
}

/// `write_file {path, content}`: creates or atomically replaces a file.
pub async fn write_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match write_file_inner(input, env).await {
        Ok(msg) => ToolOutput::ok(msg),
        Err(e) => ToolOutput::error(e),
    }
}

async fn write_file_inner(input: &Value, env: &ToolEnv<'_>) -> Result<String, String> {
    let raw = str_arg(input, "path")?;
    let content = str_arg(input, "content")?;
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    if path == env.workspace.root() {
        return Err(format!("`{shown}` is the workspace root, a directory"));
    }
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| {
            format!(
                "cannot create the folder `{}` for `{shown}`: {e}",
                env.workspace.display(parent)
            )
        })?;
    }
    let existed = atomic_write(path, content.as_bytes().to_vec(), &shown).await?;
    let lines = content.lines().count();
    Ok(format!(
        "Wrote {} byte{} ({lines} line{}) to {shown} ({})",
        content.len(),
        plural(content.len()),
        plural(lines),
        if existed {
            "overwrote the existing file"
        } else {
            "created"
        }
    ))
}

/// Replaces `path` with `bytes` atomically, keeping the permissions of an
/// existing file. Returns whether the file existed. Blocking work runs on the
/// blocking pool.
async fn atomic_write(path: PathBuf, bytes: Vec<u8>, shown: &str) -> Result<bool, String> {
    let shown_owned = shown.to_string();
    tokio::task::spawn_blocking(move || atomic_write_blocking(&path, &bytes, &shown_owned))
        .await
        .map_err(|e| format!("writing `{shown}` was aborted: {e}"))?
}

fn atomic_write_blocking(path: &Path, bytes: &[u8], shown: &str) -> Result<bool, String> {
    use std::os::unix::fs::PermissionsExt;

    // Write through a symlink (resolve checked it stays inside) rather than
    // replacing the link itself.
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or(path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let existing = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(format!(
                "`{shown}` is a directory; cannot write a file there"
            ));
        }
        Ok(m) if !m.is_file() => return Err(format!("`{shown}` is not a regular file")),
        Ok(m) => Some(m.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot access `{shown}`: {e}")),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let context = |what: &str, e: io::Error| format!("cannot write `{shown}` ({what}): {e}");
    let mut tmp = tempfile::Builder::new()
        .prefix(".waypoint-")
        .suffix(".tmp")
        // New files get the usual 0666 minus umask instead of 0600.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| context("creating a temporary file", e))?;
    tmp.write_all(bytes).map_err(|e| context("writing", e))?;
    tmp.flush().map_err(|e| context("flushing", e))?;
    if let Some(perms) = &existing {
        tmp.as_file()
            .set_permissions(perms.clone())
            .map_err(|e| context("keeping the permissions", e))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| context("syncing", e))?;
    // On failure the temporary file is dropped, which deletes it.
    tmp.persist(&target)
        .map_err(|e| context("renaming into place", e.error))?;
    Ok(existing.is_some())
}

/// `edit_file {path, old_text, new_text, replace_all?}`: exact replacement.
pub async fn edit_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match edit_file_inner(input, env).await {
        Ok(msg) => ToolOutput::ok(msg),
        Err(e) => ToolOutput::error(e),
    }
}

async fn edit_file_inner(input: &Value, env: &ToolEnv<'_>) -> Result<String, String> {
    let raw = str_arg(input, "path")?;
    let old_text = str_arg(input, "old_text")?;
    let new_text = str_arg(input, "new_text")?;
    let replace_all = opt_bool_arg(input, "replace_all")?.unwrap_or(false);
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
    let text = read_text(&path, &shown).await?;
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
    atomic_write(path, updated.as_bytes().to_vec(), &shown).await?;
    let summary = change_summary(&text, &updated, old_text, new_text);
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
    use crate::tools::{ToolConfig, Workspace};
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: Workspace,
        config: ToolConfig,
        cancel: CancellationToken,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        Fixture {
            _dir: dir,
            ws,
            config: ToolConfig::default(),
            cancel: CancellationToken::new(),
        }
    }

    impl Fixture {
        fn env(&self) -> ToolEnv<'_> {
            ToolEnv {
                workspace: &self.ws,
                config: &self.config,
                cancel: &self.cancel,
                output: None,
            }
        }
        async fn read(&self, input: Value) -> ToolOutput {
            read_file(&input, &self.env()).await
        }
        async fn write(&self, input: Value) -> ToolOutput {
            write_file(&input, &self.env()).await
        }
        async fn edit(&self, input: Value) -> ToolOutput {
            edit_file(&input, &self.env()).await
        }
        fn put(&self, rel: &str, content: &str) {
            let p = self.ws.root().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        fn get(&self, rel: &str) -> String {
            std::fs::read_to_string(self.ws.root().join(rel)).unwrap()
        }
        fn entries(&self, rel: &str) -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(self.ws.root().join(rel))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }
    }

    // ---- read_file ----

    #[tokio::test]
    async fn read_numbers_lines() {
        let f = fixture();
        f.put("a.txt", "one\ntwo\nthree\n");
        let out = f.read(json!({"path": "a.txt"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "     1\tone\n     2\ttwo\n     3\tthree\n");
    }

    #[tokio::test]
    async fn read_offset_and_limit_with_footer() {
        let f = fixture();
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        f.put("a.txt", &text);
        let out = f
            .read(json!({"path": "a.txt", "offset": 3, "limit": 2}))
            .await;
        assert_eq!(
            out.content,
            "     3\tl3\n     4\tl4\n… 6 more lines; use offset=5 to continue\n"
        );
        let out = f.read(json!({"path": "a.txt", "offset": 9})).await;
        assert_eq!(out.content, "     9\tl9\n    10\tl10\n");
        let out = f
            .read(json!({"path": "a.txt", "offset": 0, "limit": 1}))
            .await;
        assert!(
            out.content
                .starts_with("     1\tl1\n… 9 more lines; use offset=2")
        );
    }

    #[tokio::test]
    async fn read_default_limit_and_long_lines() {
        let f = fixture();
        let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        f.put("many.txt", &text);
        let out = f.read(json!({"path": "many.txt"})).await;
        assert!(out.content.contains("  2000\t2000\n"));
        assert!(!out.content.contains("\t2001\n"));
        assert!(
            out.content
                .ends_with("… 500 more lines; use offset=2001 to continue\n")
        );

        f.put("long.txt", &"x".repeat(5000));
        let out = f.read(json!({"path": "long.txt"})).await;
        assert!(out.content.contains("… [line truncated: 5000 chars]"));
        assert!(out.content.len() < 2100);
    }

    #[tokio::test]
    async fn read_output_is_capped() {
        let mut f = fixture();
        f.config.output_cap = 200;
        let text: String = (1..=500).map(|i| format!("{i}\n")).collect();
        f.put("a.txt", &text);
        let out = f.read(json!({"path": "a.txt"})).await;
        assert!(out.content.contains("bytes truncated"));
    }

    #[tokio::test]
    async fn read_errors() {
        let f = fixture();
        f.put("dir/x.txt", "x");
        f.put("bin", "abc\0def");
        std::fs::write(f.ws.root().join("latin1"), [b'c', b'a', b'f', 0xe9]).unwrap();
        f.put("empty", "");
        f.put("short", "a\nb\n");
        let cases = [
            (
                json!({"path": "dir"}),
                "Error: `dir` is a directory; use glob to list files",
            ),
            (
                json!({"path": "bin"}),
                "Error: `bin` is a binary file (7 bytes)",
            ),
            (
                json!({"path": "latin1"}),
                "Error: `latin1` is a binary file (4 bytes)",
            ),
            (
                json!({"path": "nope.txt"}),
                "Error: `nope.txt` does not exist",
            ),
            (
                json!({"path": "short", "offset": 3}),
                "Error: offset 3 is past the end of `short`, which has 2 lines",
            ),
            (json!({}), "Error: missing required argument `path`"),
            (
                json!({"path": true}),
                "Error: `path` must be a string, got a boolean",
            ),
            (
                json!({"path": "short", "limit": 0}),
                "Error: `limit` must be at least 1",
            ),
        ];
        for (input, want) in cases {
            let out = f.read(input.clone()).await;
            assert!(out.is_error, "{input}");
            assert_eq!(out.content, want, "{input}");
        }
        let out = f.read(json!({"path": "short", "offset": "2"})).await;
        assert!(
            out.content
                .contains("`offset` must be a non-negative integer")
        );
        let out = f.read(json!({"path": "../etc/passwd"})).await;
        assert!(out.content.contains("escapes the workspace"));
        let out = f.read(json!({"path": "empty"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "(`empty` is empty)");
    }

    // ---- write_file ----

    #[tokio::test]
    async fn write_creates_parents_and_reports() {
        let f = fixture();
        let out = f
            .write(json!({"path": "a/b/c.txt", "content": "hi\nthere\n"}))
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "Wrote 9 bytes (2 lines) to a/b/c.txt (created)"
        );
        assert_eq!(f.get("a/b/c.txt"), "hi\nthere\n");
        assert_eq!(f.entries("a/b"), ["c.txt"]);
    }

    #[tokio::test]
    async fn write_overwrites_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        f.put("run.sh", "old");
        let p = f.ws.root().join("run.sh");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o750)).unwrap();
        let out = f.write(json!({"path": "run.sh", "content": "new"})).await;
        assert_eq!(
            out.content,
            "Wrote 3 bytes (1 line) to run.sh (overwrote the existing file)"
        );
        assert_eq!(f.get("run.sh"), "new");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o750
        );
        assert_eq!(f.entries("."), ["run.sh"], "no temporary files left behind");
    }

    #[tokio::test]
    async fn write_new_file_is_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        f.write(json!({"path": "n.txt", "content": ""})).await;
        let mode = std::fs::metadata(f.ws.root().join("n.txt"))
            .unwrap()
            .permissions()
            .mode();
        // 0666 minus a usual umask: at least owner read/write, more than 0600
        // unless the umask is 077.
        assert_eq!(mode & 0o600, 0o600);
    }

    #[tokio::test]
    async fn write_into_a_directory_is_refused() {
        let f = fixture();
        f.put("d/x", "x");
        let out = f.write(json!({"path": "d", "content": "x"})).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Error: `d` is a directory; cannot write a file there"
        );
        assert_eq!(f.entries("."), ["d"]);
        let out = f.write(json!({"path": ".", "content": "x"})).await;
        assert!(out.is_error);
    }

    #[tokio::test]
    async fn write_errors_leave_no_partial_file() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        f.put("ro/keep.txt", "original");
        let ro = f.ws.root().join("ro");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = f
            .write(json!({"path": "ro/keep.txt", "content": "changed"}))
            .await;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Root ignores directory permissions; only check when they applied.
        if out.is_error {
            assert!(
                out.content.contains("cannot write `ro/keep.txt`"),
                "{}",
                out.content
            );
            assert_eq!(f.get("ro/keep.txt"), "original");
            assert_eq!(f.entries("ro"), ["keep.txt"]);
        }
        // A file where a parent folder should be.
        f.put("file", "x");
        let out = f
            .write(json!({"path": "file/child.txt", "content": "x"}))
            .await;
        assert!(out.is_error);
        assert!(
            out.content.contains("cannot create the folder `file`"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn write_bad_arguments() {
        let f = fixture();
        let out = f.write(json!({"path": "a"})).await;
        assert_eq!(out.content, "Error: missing required argument `content`");
        let out = f.write(json!({"path": "a", "content": ["x"]})).await;
        assert_eq!(
            out.content,
            "Error: `content` must be a string, got an array"
        );
        let out = f.write(json!({"path": "/etc/evil", "content": "x"})).await;
        assert!(out.content.contains("outside the workspace"));
    }

    #[tokio::test]
    async fn write_through_symlink_out_is_refused() {
        let f = fixture();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), f.ws.root().join("out")).unwrap();
        let out = f.write(json!({"path": "out/x.txt", "content": "x"})).await;
        assert!(out.is_error);
        assert!(!outside.path().join("x.txt").exists());
    }

    #[tokio::test]
    async fn write_through_symlink_inside_keeps_the_link() {
        let f = fixture();
        f.put("real.txt", "old");
        std::os::unix::fs::symlink("real.txt", f.ws.root().join("alias.txt")).unwrap();
        let out = f
            .write(json!({"path": "alias.txt", "content": "new"}))
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(f.get("real.txt"), "new");
        let meta = std::fs::symlink_metadata(f.ws.root().join("alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink());
    }

    // ---- edit_file ----

    #[tokio::test]
    async fn edit_replaces_once_with_summary() {
        let f = fixture();
        f.put("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
        let out = f
            .edit(json!({"path": "a.rs", "old_text": "fn b() {}", "new_text": "fn bee() {}"}))
            .await;
        assert!(!out.is_error, "{}", out.content);
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
        assert!(!out.is_error);
        assert_eq!(f.get("a.txt"), "keep\nkeep\n");
    }

    #[tokio::test]
    async fn edit_not_found_and_ambiguous() {
        let f = fixture();
        f.put("a.txt", "dup\ndup\nsolo\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "absent", "new_text": "x"}))
            .await;
        assert!(out.is_error);
        assert!(
            out.content
                .starts_with("Error: `old_text` was not found in `a.txt`")
        );
        assert!(out.content.contains("Read the file first"));
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "dup", "new_text": "x"}))
            .await;
        assert!(out.is_error);
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
        assert!(!out.is_error, "{}", out.content);
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
    async fn edit_bad_arguments() {
        let f = fixture();
        f.put("a.txt", "text\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "", "new_text": "x"}))
            .await;
        assert!(out.is_error);
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
