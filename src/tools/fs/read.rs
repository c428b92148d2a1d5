//! `read_file`: numbered lines, streamed. Invariant: reads stop after the
//! requested lines, so memory never grows with the file. With an editor,
//! a file the disk read accepts is shown as the editor's buffer has it
//! ([`super::through`]).

use std::io::{self, BufRead, Read};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::through::{Buffer, buffer};
use super::{BINARY_SNIFF, open_file, plural};
use crate::tools::args::{TypedTool, held, parse};
use crate::tools::{
    Access, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, cap_output,
    summary_line,
};

/// Lines returned when `limit` is not given.
const DEFAULT_LIMIT: usize = 2000;
/// Characters kept of a single line.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes past the last shown line scanned to count the remaining lines; past
/// it the footer only says that more lines follow.
const COUNT_BUDGET: usize = 1 << 20;
/// Read buffer of `read_file`.
const READ_CHUNK: usize = 64 * 1024;
/// The largest file whose text is asked of the editor (it comes whole).
const EDITOR_READ_BYTES: u64 = 10 * 1024 * 1024;

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
            Failure::Interrupted => ToolOutput::interrupted("", ""),
        }
    }
}

/// The `read_file` tool.
pub struct ReadFile;

/// A `read_file` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    // The file, relative to the workspace.
    #[serde(alias = "file_path", alias = "filePath")]
    pub path: String,
    // The first line to read (1-based).
    pub offset: Option<u64>,
    // How many lines to read.
    pub limit: Option<u64>,
}

impl TypedTool for ReadFile {
    type Args = ReadArgs;
    const PARALLEL: bool = true;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "read_file",
            "Read a text file with numbered lines. `offset` is the first line (1-based), `limit` the line count. An image (PNG, JPEG, GIF, WebP) is shown to you as the picture.",
            schema,
            Access::Read,
        )
    }
    fn target_of<'v>(&self, args: &ReadArgs, input: &'v Value) -> Target<'v> {
        Target::Read(held(input, &args.path))
    }
    fn summary_of(&self, args: Option<&ReadArgs>) -> ToolSummary {
        ToolSummary {
            line: summary_line(args.map_or("", |a| a.path.as_str())),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: ReadArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if let Some(image) = super::image::image(&args.path, &ctx.env, &ctx.host).await {
                return image;
            }
            read(&args, &ctx.env).await
        })
    }
}

/// `read_file {path, offset?, limit?}`: numbered lines.
pub async fn read_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<ReadArgs>(input) {
        Ok(args) => read(&args, env).await,
        Err(why) => why.into_output(),
    }
}

/// The output of `read_file` {path} when it names an image (`None`:
/// read it as text).
pub async fn read_image(
    input: &Value,
    env: &ToolEnv<'_>,
    host: &crate::tools::ToolHost<'_>,
) -> Option<ToolOutput> {
    let args = parse::<ReadArgs>(input).ok()?;
    super::image::image(&args.path, env, host).await
}

/// Reads the lines `args` ask for.
async fn read(args: &ReadArgs, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("", "");
    }
    match read_file_inner(args, env).await {
        Ok(text) => ToolOutput::ok(cap_output(&text, env.config.output_cap)),
        Err(e) => e.into_output(),
    }
}

async fn read_file_inner(args: &ReadArgs, env: &ToolEnv<'_>) -> Result<String, Failure> {
    let raw = args.path.as_str();
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = match args.limit {
        Some(0) => return Err(Failure::Msg("`limit` must be at least 1".to_string())),
        Some(n) => n,
        None => DEFAULT_LIMIT as u64,
    };
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    let first = usize::try_from(offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let cancel = env.cancel.clone();
    let files = env.workspace.files().clone();
    let rel = env.workspace.relative(&path).to_path_buf();
    let shown_task = shown.clone();
    let task = tokio::task::spawn_blocking(move || {
        let (file, len) = open_file(&files, &rel, &shown_task)?;
        Ok::<_, String>((len, page_lines(file, first, limit, &cancel)))
    });
    let (len, page) = tokio::select! {
        r = task => r.map_err(|e| format!("reading `{shown}` was aborted: {e}"))??,
        // The blocking read sees the same token and stops at its next chunk.
        _ = env.cancel.cancelled() => return Err(Failure::Interrupted),
    };
    // The disk's file passed every check: the editor's buffer, if it has
    // one (a file too large to hold in memory is read from disk alone).
    let (len, page, note) = match page {
        Ok(_) if len <= EDITOR_READ_BYTES => match buffer(env, &path).await {
            Buffer::Editor(text) => {
                let page = page_lines(text.as_bytes(), first, limit, env.cancel);
                (text.len() as u64, page, None)
            }
            Buffer::Disk(note) => (len, page, note),
            Buffer::Interrupted => return Err(Failure::Interrupted),
        },
        _ => (len, page, None),
    };
    let text = rendered(page, offset, &shown, len)?;
    Ok(match note {
        Some(note) => format!("{note}\n{text}"),
        None => text,
    })
}

/// What the model reads of `page`, lines `offset..` of `shown` (`len`
/// bytes).
fn rendered(
    page: Result<Page, PageError>,
    offset: u64,
    shown: &str,
    len: u64,
) -> Result<String, Failure> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::fs::fixture;
    use serde_json::json;

    #[tokio::test]
    async fn read_numbers_lines() {
        let f = fixture();
        f.put("a.txt", "one\ntwo\nthree\n");
        let out = f.read(json!({"path": "a.txt"})).await;
        assert!(!out.is_error());
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
            assert!(out.is_error(), "{input}");
            assert_eq!(out.content, want, "{input}");
        }
        let out = f.read(json!({"path": "short", "offset": "second"})).await;
        assert!(
            out.content
                .contains("`offset` must be a non-negative integer")
        );
        let out = f.read(json!({"path": "../etc/passwd"})).await;
        assert!(out.content.contains("escapes the workspace"));
        let out = f.read(json!({"path": "empty"})).await;
        assert!(!out.is_error());
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
        assert!(!out.is_error(), "{}", out.content);
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
        assert!(!out.is_error(), "{}", out.content);
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
        assert!(!out.is_error(), "{}", out.content);
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
}
