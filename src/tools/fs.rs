//! The file tools `read_file`, `write_file` and `edit_file`. Invariant: every
//! path goes through `Workspace::resolve`; reads stream and stop after the
//! requested lines, so memory never grows with the file; `edit_file` refuses
//! files above `MAX_EDIT_BYTES`; writes go to the path's real target (a
//! symlink, dangling or not, is written through, never replaced) and are
//! atomic (temp file in the same directory, synced, renamed over the target),
//! so a failed write never leaves a half-written file.

use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{ToolEnv, ToolOutput, cap_output, opt_bool_arg, opt_u64_arg, str_arg};

/// Lines returned when `limit` is not given.
const DEFAULT_LIMIT: usize = 2000;
/// Characters kept of a single line.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes inspected for NUL when deciding whether a file is binary.
const BINARY_SNIFF: usize = 8192;
/// Bytes past the last shown line scanned to count the remaining lines; past
/// it the footer only says that more lines follow.
const COUNT_BUDGET: usize = 1 << 20;
/// Read buffer of `read_file`.
const READ_CHUNK: usize = 64 * 1024;
/// Largest file `edit_file` loads into memory.
const MAX_EDIT_BYTES: u64 = 10 * 1024 * 1024;
/// Lines of the change summary `edit_file` shows.
const SUMMARY_LINES: usize = 20;

/// Why a file tool stopped without a result.
enum Failure {
    /// Shown to the model as `Error: …`.
    Msg(String),
    /// The user interrupted the call.
    Interrupted,
}

impl From<String> for Failure {
    fn from(msg: String) -> Self {
        Failure::Msg(msg)
    }
}

impl Failure {
    fn into_output(self) -> ToolOutput {
        match self {
            Failure::Msg(msg) => ToolOutput::error(msg),
            Failure::Interrupted => ToolOutput::interrupted(""),
        }
    }
}

/// `read_file {path, offset?, limit?}`: numbered lines.
pub async fn read_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("");
    }
    match read_file_inner(input, env).await {
        Ok(text) => ToolOutput::ok(cap_output(&text, env.config.output_cap)),
        Err(e) => e.into_output(),
    }
}

async fn read_file_inner(input: &Value, env: &ToolEnv<'_>) -> Result<String, Failure> {
    let raw = str_arg(input, "path")?;
    let offset = opt_u64_arg(input, "offset")?.unwrap_or(1).max(1);
    let limit = match opt_u64_arg(input, "limit")? {
        Some(0) => return Err(Failure::Msg("`limit` must be at least 1".to_string())),
        Some(n) => n,
        None => DEFAULT_LIMIT as u64,
    };
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    let len = regular_file_len(&path, &shown).await?;
    let first = usize::try_from(offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let cancel = env.cancel.clone();
    let task = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&path)?;
        page_lines(file, first, limit, &cancel)
    });
    let page = tokio::select! {
        r = task => r.map_err(|e| format!("reading `{shown}` was aborted: {e}"))?,
        // The blocking read sees the same token and stops at its next chunk.
        _ = env.cancel.cancelled() => return Err(Failure::Interrupted),
    };
    match page {
        Ok(Page::Empty) => Ok(format!("(`{shown}` is empty)")),
        Ok(Page::PastEnd { total }) => Err(Failure::Msg(format!(
            "offset {offset} is past the end of `{shown}`, which has {total} line{}",
            plural(total)
        ))),
        Ok(Page::Lines {
            mut text,
            next,
            more,
        }) => {
            match more {
                More::Exactly(0) => {}
                More::Exactly(n) => text.push_str(&format!(
                    "… {n} more line{}; use offset={next} to continue\n",
                    plural(n)
                )),
                More::Unknown => text.push_str(&format!(
                    "… more lines follow; use offset={next} to continue\n"
                )),
            }
            Ok(text)
        }
        Err(PageError::Binary) => Err(Failure::Msg(format!(
            "`{shown}` is a binary file ({len} bytes)"
        ))),
        Err(PageError::Cancelled) => Err(Failure::Interrupted),
        Err(PageError::Io(e)) => Err(Failure::Msg(format!("cannot read `{shown}`: {e}"))),
    }
}

/// What `page_lines` found.
#[derive(Debug, PartialEq, Eq)]
enum Page {
    /// The file has no bytes at all.
    Empty,
    /// The first requested line lies past the last one.
    PastEnd { total: usize },
    /// Numbered lines; `next` is the line after the last one shown.
    Lines {
        text: String,
        next: usize,
        more: More,
    },
}

/// How many lines follow the page.
#[derive(Debug, PartialEq, Eq)]
enum More {
    Exactly(usize),
    /// More than `COUNT_BUDGET` bytes follow; not counted.
    Unknown,
}

#[derive(Debug)]
enum PageError {
    /// A NUL in the first `BINARY_SNIFF` bytes, or a read line is not UTF-8.
    Binary,
    Cancelled,
    Io(io::Error),
}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

/// Streams `src` and renders lines `first..first + limit` (1-based) with
/// numbers. Memory is bounded by the page itself: at most `MAX_LINE_CHARS`
/// characters are kept of any line, reading stops after the page, and the
/// remaining lines are only counted within `COUNT_BUDGET` bytes. `cancel` is
/// checked before every chunk.
fn page_lines<R: Read>(
    mut src: R,
    first: usize,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Page, PageError> {
    let mut head = Vec::with_capacity(BINARY_SNIFF);
    (&mut src)
        .take(BINARY_SNIFF as u64)
        .read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(Page::Empty);
    }
    if head.contains(&0) {
        return Err(PageError::Binary);
    }
    let mut reader = io::BufReader::with_capacity(READ_CHUNK, io::Cursor::new(head).chain(src));
    let first = first.max(1);
    // The last line wanted.
    let stop = (first - 1).saturating_add(limit);
    let mut text = String::new();
    let mut done = 0usize;
    let mut line = LineBuf::default();
    let mut utf8 = Utf8Check::default();
    let mut partial = false;
    let mut at_eof = false;
    while done < stop {
        if cancel.is_cancelled() {
            return Err(PageError::Cancelled);
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            at_eof = true;
            if partial {
                if !utf8.finish() {
                    return Err(PageError::Binary);
                }
                done += 1;
                if done >= first {
                    text.push_str(&numbered(done, line.render(false)?));
                }
            }
            break;
        }
        let (segment, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        if !utf8.feed(segment) {
            return Err(PageError::Binary);
        }
        let showing = done + 1 >= first;
        if showing {
            line.push(segment);
        }
        let used = segment.len() + usize::from(ended);
        reader.consume(used);
        partial = !ended;
        if ended {
            if !utf8.finish() {
                return Err(PageError::Binary);
            }
            done += 1;
            if showing {
                text.push_str(&numbered(done, line.render(true)?));
            }
        }
    }
    if done < first {
        return Ok(Page::PastEnd { total: done });
    }
    let more = if at_eof {
        More::Exactly(0)
    } else {
        count_remaining(&mut reader, cancel)?
    };
    Ok(Page::Lines {
        text,
        next: done + 1,
        more,
    })
}

/// Counts the lines left in `reader`, giving up past `COUNT_BUDGET` bytes.
fn count_remaining<R: BufRead>(
    reader: &mut R,
    cancel: &CancellationToken,
) -> Result<More, PageError> {
    let mut newlines = 0usize;
    let mut scanned = 0usize;
    let mut last = b'\n';
    loop {
        if cancel.is_cancelled() {
            return Err(PageError::Cancelled);
        }
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else {
            let unterminated = usize::from(last != b'\n');
            return Ok(More::Exactly(newlines + unterminated));
        };
        if scanned >= COUNT_BUDGET {
            return Ok(More::Unknown);
        }
        newlines += buf.iter().filter(|&&b| b == b'\n').count();
        last = end;
        let n = buf.len();
        scanned += n;
        reader.consume(n);
    }
}

fn numbered(n: usize, line: String) -> String {
    format!("{n:>6}\t{line}\n")
}

/// One line as it streams in: its first `MAX_LINE_CHARS` characters and its
/// length.
#[derive(Default)]
struct LineBuf {
    kept: Vec<u8>,
    chars: usize,
    bytes: usize,
    last: u8,
}

impl LineBuf {
    fn push(&mut self, segment: &[u8]) {
        for &b in segment {
            // Every byte but a UTF-8 continuation byte starts a character.
            if b & 0xC0 != 0x80 {
                self.chars += 1;
            }
            if self.chars <= MAX_LINE_CHARS {
                self.kept.push(b);
            }
        }
        self.bytes += segment.len();
        if let Some(&b) = segment.last() {
            self.last = b;
        }
    }

    /// The line for display (a `\r` before the `\n` dropped, overlong lines
    /// cut with a marker); resets for the next line.
    fn render(&mut self, ended_by_newline: bool) -> Result<String, PageError> {
        let LineBuf {
            mut kept,
            mut chars,
            bytes,
            last,
        } = std::mem::take(self);
        if ended_by_newline && bytes > 0 && last == b'\r' {
            chars -= 1;
            if kept.len() == bytes {
                kept.pop();
            }
        }
        let text = String::from_utf8(kept).map_err(|_| PageError::Binary)?;
        Ok(if chars > MAX_LINE_CHARS {
            format!("{text}… [line truncated: {chars} chars]")
        } else {
            text
        })
    }
}

/// Checks that a byte stream fed in pieces is UTF-8; a character may be split
/// between pieces.
#[derive(Default)]
struct Utf8Check {
    pending: [u8; 4],
    len: usize,
}

impl Utf8Check {
    /// False once the bytes so far cannot be UTF-8.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while self.len > 0 {
            let Some((&b, rest)) = bytes.split_first() else {
                return true;
            };
            if self.len == self.pending.len() {
                return false;
            }
            self.pending[self.len] = b;
            self.len += 1;
            bytes = rest;
            match std::str::from_utf8(&self.pending[..self.len]) {
                Ok(_) => self.len = 0,
                Err(e) if e.error_len().is_some() => return false,
                Err(_) => {}
            }
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(e) if e.error_len().is_some() => false,
            Err(e) => {
                let tail = &bytes[e.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.len = tail.len();
                true
            }
        }
    }

    /// False if a character was left unfinished; resets.
    fn finish(&mut self) -> bool {
        let complete = self.len == 0;
        self.len = 0;
        complete
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The size of an existing regular file, with messages for the usual
/// failures.
async fn regular_file_len(path: &Path, shown: &str) -> Result<u64, String> {
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
    Ok(meta.len())
}

/// Reads a whole text file of at most `MAX_EDIT_BYTES` for `edit_file`.
async fn read_text(path: &Path, shown: &str) -> Result<String, String> {
    use tokio::io::AsyncReadExt;

    let too_large = |len: u64| {
        format!(
            "`{shown}` is too large to edit ({len} bytes; edit_file handles up to {} MiB). \
Use bash (e.g. sed) for files this large",
            MAX_EDIT_BYTES >> 20
        )
    };
    let len = regular_file_len(path, shown).await?;
    if len > MAX_EDIT_BYTES {
        return Err(too_large(len));
    }
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let mut bytes = Vec::new();
    // One byte over the limit tells a file that grew since `metadata`.
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let len = bytes.len();
    if len as u64 > MAX_EDIT_BYTES {
        return Err(too_large(len as u64));
    }
    if bytes[..len.min(BINARY_SNIFF)].contains(&0) {
        return Err(format!("`{shown}` is a binary file ({len} bytes)"));
    }
    String::from_utf8(bytes).map_err(|_| format!("`{shown}` is a binary file ({len} bytes)"))
}

/// `write_file {path, content}`: creates or atomically replaces a file.
pub async fn write_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("");
    }
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
    // Through every symlink, dangling ones included: the link stays a link.
    let target = env.workspace.real_target(&path)?;
    if let Some(parent) = target.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| {
            format!(
                "cannot create the folder `{}` for `{shown}`: {e}",
                env.workspace.display(parent)
            )
        })?;
    }
    let existed = atomic_write(target, content.as_bytes().to_vec(), &shown).await?;
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

/// Replaces `target` (a real path, symlinks already followed) with `bytes`
/// atomically, keeping the permissions of an existing file. Returns whether
/// the file existed. Blocking work runs on the blocking pool.
async fn atomic_write(target: PathBuf, bytes: Vec<u8>, shown: &str) -> Result<bool, String> {
    let shown_owned = shown.to_string();
    tokio::task::spawn_blocking(move || atomic_write_blocking(&target, &bytes, &shown_owned))
        .await
        .map_err(|e| format!("writing `{shown}` was aborted: {e}"))?
}

fn atomic_write_blocking(target: &Path, bytes: &[u8], shown: &str) -> Result<bool, String> {
    let existing = match std::fs::metadata(target) {
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
    replace_with(target, bytes, existing.as_ref(), shown)?;
    Ok(existing.is_some())
}

/// Writes `bytes` to a temporary file beside `target`, syncs it and renames
/// it over `target`. On any failure the temporary file is removed and
/// `target` is left as it was.
fn replace_with(
    target: &Path,
    bytes: &[u8],
    perms: Option<&std::fs::Permissions>,
    shown: &str,
) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;

    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let context = |what: &str, e: io::Error| format!("cannot write `{shown}` ({what}): {e}");
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(".tmp")
        // New files get the usual 0666 minus umask instead of 0600.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| context("creating a temporary file", e))?;
    tmp.write_all(bytes).map_err(|e| context("writing", e))?;
    tmp.flush().map_err(|e| context("flushing", e))?;
    if let Some(perms) = perms {
        tmp.as_file()
            .set_permissions(perms.clone())
            .map_err(|e| context("keeping the permissions", e))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| context("syncing", e))?;
    // On failure the temporary file is dropped, which deletes it.
    tmp.persist(target)
        .map_err(|e| context("renaming into place", e.error))?;
    Ok(())
}

/// Name prefix of the temporary files `replace_with` creates.
const TEMP_PREFIX: &str = ".waypoint-";

/// `edit_file {path, old_text, new_text, replace_all?}`: exact replacement.
pub async fn edit_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("");
    }
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
    let target = env.workspace.real_target(&path)?;
    atomic_write(target, updated.as_bytes().to_vec(), &shown).await?;
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
    use crate::tools::test_support::Fixture;
    use serde_json::json;

    fn fixture() -> Fixture {
        Fixture::new()
    }

    impl Fixture {
        async fn read(&self, input: Value) -> ToolOutput {
            read_file(&input, &self.env()).await
        }
        async fn write(&self, input: Value) -> ToolOutput {
            write_file(&input, &self.env()).await
        }
        async fn edit(&self, input: Value) -> ToolOutput {
            edit_file(&input, &self.env()).await
        }
        /// `rel` grown to `len` bytes with a hole of NULs (no disk used).
        fn sparse(&self, rel: &str, head: &str, len: u64) {
            self.put(rel, head);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(self.ws.root().join(rel))
                .unwrap();
            file.set_len(len).unwrap();
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

    #[tokio::test]
    async fn read_stops_after_the_requested_lines() {
        let f = fixture();
        // Not UTF-8 after the page: never decoded, only counted.
        let mut bytes = b"l1\nl2\nl3\n".to_vec();
        bytes.extend_from_slice(&[0xff, 0xfe, b'\n', 0xff]);
        std::fs::write(f.ws.root().join("mixed"), &bytes).unwrap();
        let out = f.read(json!({"path": "mixed", "limit": 2})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "     1\tl1\n     2\tl2\n… 3 more lines; use offset=3 to continue\n"
        );
        let out = f.read(json!({"path": "mixed", "offset": 4})).await;
        assert_eq!(out.content, "Error: `mixed` is a binary file (13 bytes)");
    }

    #[tokio::test]
    async fn read_of_a_huge_file_streams() {
        let f = fixture();
        // 1 TiB, nearly all of it a hole: reading it whole would fail or
        // exhaust memory.
        let head: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
        f.sparse("huge.log", &head, 1 << 40);
        let out = f.read(json!({"path": "huge.log", "limit": 3})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "     1\tline 1\n     2\tline 2\n     3\tline 3\n\
… more lines follow; use offset=4 to continue\n"
        );
        let out = f
            .read(json!({"path": "huge.log", "offset": 2999, "limit": 1}))
            .await;
        assert_eq!(
            out.content,
            "  2999\tline 2999\n… more lines follow; use offset=3000 to continue\n"
        );
    }

    #[tokio::test]
    async fn read_handles_crlf_split_characters_and_a_last_line_without_newline() {
        let f = fixture();
        f.put("crlf", "a\r\nb\r\nc");
        let out = f.read(json!({"path": "crlf"})).await;
        assert_eq!(out.content, "     1\ta\n     2\tb\n     3\tc\n");
        // The 8 KiB sniff and the read buffer both end inside a character.
        let long = format!("x{}", "é".repeat(100_000));
        f.put("long", &format!("{long}\nnext\n"));
        let out = f.read(json!({"path": "long"})).await;
        assert!(!out.is_error, "{}", out.content);
        let want = format!(
            "     1\tx{}… [line truncated: 100001 chars]\n     2\tnext\n",
            "é".repeat(MAX_LINE_CHARS - 1)
        );
        assert_eq!(out.content, want);
        let exact = "é".repeat(MAX_LINE_CHARS);
        f.put("exact", &format!("{exact}\r\n"));
        let out = f.read(json!({"path": "exact"})).await;
        assert_eq!(out.content, format!("     1\t{exact}\n"));
        f.put("blank", "\n");
        let out = f.read(json!({"path": "blank"})).await;
        assert_eq!(out.content, "     1\t\n");
    }

    #[test]
    fn page_lines_stops_when_cancelled() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let text = "a\n".repeat(100);
        let got = page_lines(text.as_bytes(), 1, 10, &cancel);
        assert!(matches!(got, Err(PageError::Cancelled)), "{got:?}");
    }

    #[test]
    fn utf8_check_accepts_split_characters_only() {
        let bytes = "é€😀".as_bytes();
        for cut in 0..=bytes.len() {
            let mut c = Utf8Check::default();
            assert!(c.feed(&bytes[..cut]) && c.feed(&bytes[cut..]), "cut {cut}");
            assert!(c.finish());
        }
        let mut c = Utf8Check::default();
        assert!(c.feed(&[0xe2, 0x82]));
        assert!(!c.finish(), "an unfinished character");
        assert!(!c.feed(&[0xe2, b'x']));
        let mut c = Utf8Check::default();
        assert!(c.feed(&[0xf0]));
        assert!(!c.feed(b"a"));
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
            assert!(out.interrupted && out.is_error, "{out:?}");
            assert_eq!(
                out.content,
                "Error: interrupted by the user before this tool finished."
            );
        }
        assert_eq!(f.entries("."), ["a.txt"]);
        assert_eq!(f.get("a.txt"), "old\n");
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
        let out = f.write(json!({"path": "n.txt", "content": ""})).await;
        assert!(!out.is_error, "{}", out.content);
        let mode = |rel: &str| {
            std::fs::metadata(f.ws.root().join(rel))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        // The same mode any program gets from create(2): 0666 minus umask.
        std::fs::File::create(f.ws.root().join("plain.txt")).unwrap();
        assert_eq!(mode("n.txt"), mode("plain.txt"));
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
        let f = fixture();
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
        assert_eq!(f.get("file"), "x");
        assert_eq!(f.entries("."), ["file"]);
    }

    #[test]
    fn failed_rename_keeps_the_target_and_removes_the_temp_file() {
        // rename(2) of a file over a non-empty directory fails for every
        // user, root included; the temporary file exists by then.
        let f = fixture();
        f.put("d/keep.txt", "original");
        let target = f.ws.root().join("d");
        let err = replace_with(&target, b"changed", None, "d").unwrap_err();
        assert!(
            err.starts_with("cannot write `d` (renaming into place): "),
            "{err}"
        );
        assert_eq!(f.get("d/keep.txt"), "original");
        assert_eq!(f.entries("d"), ["keep.txt"]);
        assert_eq!(f.entries("."), ["d"], "no {TEMP_PREFIX}* file left behind");
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
        let out = f
            .edit(json!({"path": "alias.txt", "old_text": "new", "new_text": "newer"}))
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(f.get("real.txt"), "newer");
        let meta = std::fs::symlink_metadata(f.ws.root().join("alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink(), "edit replaced the link");
        assert_eq!(f.entries("."), ["alias.txt", "real.txt"]);
    }

    #[tokio::test]
    async fn write_through_a_dangling_symlink_creates_its_target() {
        let f = fixture();
        std::os::unix::fs::symlink("sub/new.txt", f.ws.root().join("alias.txt")).unwrap();
        let out = f
            .write(json!({"path": "alias.txt", "content": "new"}))
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "Wrote 3 bytes (1 line) to alias.txt (created)");
        assert_eq!(f.get("sub/new.txt"), "new");
        let meta = std::fs::symlink_metadata(f.ws.root().join("alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink(), "the link was replaced");
        // A chain of links, the last one dangling.
        std::os::unix::fs::symlink("alias2.txt", f.ws.root().join("chain.txt")).unwrap();
        std::os::unix::fs::symlink("later.txt", f.ws.root().join("alias2.txt")).unwrap();
        let out = f.write(json!({"path": "chain.txt", "content": "x"})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(f.get("later.txt"), "x");
        assert_eq!(
            f.entries("."),
            ["alias.txt", "alias2.txt", "chain.txt", "later.txt", "sub"]
        );
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
    async fn edit_refuses_files_above_the_size_limit() {
        let f = fixture();
        f.sparse("big.txt", "needle\n", MAX_EDIT_BYTES + 1);
        let out = f
            .edit(json!({"path": "big.txt", "old_text": "needle", "new_text": "pin"}))
            .await;
        assert!(out.is_error);
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
