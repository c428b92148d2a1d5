//! The search itself: the `ignore` walker in parallel over the workspace
//! (or the folder or file asked for), each file opened through the
//! workspace's folder fd and searched by `grep-searcher` with the
//! `grep-regex` matcher, into per-file hits the output orders and cuts.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::{MAX_FILE, Mode, Query};
use crate::tools::Workspace;

/// The most lines kept over all files (a search that finds more says so).
pub const MAX_KEPT: usize = 20_000;

/// The longest line kept, in characters.
const MAX_LINE: usize = 500;

/// One line of a file's hits: a match, a context line, or a break
/// between groups that are not next to each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Match(u64, String),
    Context(u64, String),
    Break,
}

/// A file with matches.
#[derive(Clone, Debug)]
pub struct FileHit {
    pub path: String,
    pub modified: SystemTime,
    /// Matching lines (matches, with `multiline`).
    pub count: u64,
    pub lines: Vec<Line>,
}

/// What a search found, and what it could not search.
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<FileHit>,
    pub binary: Vec<String>,
    pub huge: Vec<(String, u64)>,
    pub unreadable: Vec<(String, String)>,
    /// More lines were found than [`MAX_KEPT`].
    pub capped: bool,
}

/// A search ready to run.
pub struct Plan {
    workspace: Workspace,
    start: PathBuf,
    matcher: RegexMatcher,
    overrides: Option<ignore::overrides::Override>,
    types: Option<ignore::types::Types>,
    mode: Mode,
    context: (usize, usize),
    multiline: bool,
    /// Lines one file needs to keep at most (`offset` + `head_limit`).
    keep: usize,
    /// Rules on reading: files they deny or ask about are not searched.
    hidden: crate::safety::access::Lists,
}

impl Plan {
    /// Checks the pattern, path, glob and type; an error says which.
    pub fn new(query: &Query, workspace: &Workspace) -> Result<Self, String> {
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(query.case_insensitive)
            .multi_line(query.multiline)
            .dot_matches_new_line(query.multiline)
            .build(&query.pattern)
            .map_err(|e| format!("invalid pattern `{}`: {e}", query.pattern))?;
        let start = match &query.path {
            Some(path) => workspace.resolve(path)?,
            None => workspace.root().to_path_buf(),
        };
        if !start.exists() {
            return Err(format!(
                "path `{}` does not exist in the workspace",
                workspace.display(&start)
            ));
        }
        let overrides = match &query.glob {
            Some(glob) => {
                let mut builder = OverrideBuilder::new(workspace.root());
                for part in split_globs(glob) {
                    builder
                        .add(part)
                        .map_err(|e| format!("invalid glob `{glob}`: {e}"))?;
                }
                Some(
                    builder
                        .build()
                        .map_err(|e| format!("invalid glob `{glob}`: {e}"))?,
                )
            }
            None => None,
        };
        let types = match &query.file_type {
            Some(name) => {
                let mut builder = TypesBuilder::new();
                builder.add_defaults().select(name);
                let types = builder
                    .build()
                    .map_err(|e| format!("invalid type `{name}`: {e}"))?;
                Some(types)
            }
            None => None,
        };
        Ok(Self {
            workspace: workspace.clone(),
            start,
            matcher,
            overrides,
            types,
            mode: query.mode,
            context: if query.mode == Mode::Content {
                query.context
            } else {
                (0, 0)
            },
            multiline: query.multiline,
            keep: query.offset.saturating_add(query.limit),
            hidden: crate::safety::access::Lists::default(),
        })
    }

    /// The same search, skipping the files `rules` deny or ask about.
    pub fn hiding(self, rules: crate::safety::access::Lists) -> Self {
        Self {
            hidden: rules,
            ..self
        }
    }

    /// Searches every file; `None` when `cancel` fired.
    pub fn run(&self, cancel: &CancellationToken) -> Option<Found> {
        let found = Mutex::new(Found::default());
        let kept = AtomicUsize::new(0);
        // Files a rule keeps from reading without asking are not searched.
        let hidden = self.hidden.compile();
        let hidden = |path: &Path| {
            use crate::safety::access::Says;
            matches!(hidden.says(path), Says::Deny(_) | Says::Ask(_))
        };
        let mut walk = WalkBuilder::new(&self.start);
        walk.require_git(false)
            .hidden(true)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git");
        if let Some(o) = &self.overrides {
            walk.overrides(o.clone());
        }
        if let Some(t) = &self.types {
            walk.types(t.clone());
        }
        walk.build_parallel().run(|| {
            let mut searcher = self.searcher();
            let found = &found;
            let kept = &kept;
            let hidden = &hidden;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                // Links are not followed (as `rg` without -L).
                if entry.file_type().is_some_and(|t| t.is_file()) && !hidden(entry.path()) {
                    self.search_one(entry.path(), &mut searcher, found, kept);
                }
                WalkState::Continue
            })
        });
        if cancel.is_cancelled() {
            return None;
        }
        let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
        found.capped = kept.load(Ordering::Relaxed) > MAX_KEPT;
        Some(found)
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .multi_line(self.multiline)
            .before_context(self.context.0)
            .after_context(self.context.1)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build()
    }

    /// Searches the file at `path` (found by the walk) into `found`.
    fn search_one(
        &self,
        path: &Path,
        searcher: &mut Searcher,
        found: &Mutex<Found>,
        kept: &AtomicUsize,
    ) {
        let root = self.workspace.root();
        let Ok(rel) = path.strip_prefix(root) else {
            return;
        };
        let shown = rel.to_string_lossy().replace('\\', "/");
        let lock = || found.lock().unwrap_or_else(|e| e.into_inner());
        // Opened beneath the workspace's fd, never through a link.
        let file = match self.workspace.files().open_file(rel) {
            Ok(file) => file,
            Err(e) => {
                lock().unreadable.push((shown, e.to_string()));
                return;
            }
        };
        let meta = file.metadata().ok();
        let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
        if size > MAX_FILE {
            lock().huge.push((shown, size));
            return;
        }
        let mut sink = Collect {
            mode: self.mode,
            keep: self.keep,
            kept,
            lines: Vec::new(),
            count: 0,
            binary: false,
        };
        if let Err(e) = searcher.search_file(&self.matcher, &file, &mut sink) {
            lock().unreadable.push((shown, e.to_string()));
            return;
        }
        if sink.binary {
            lock().binary.push(shown);
            return;
        }
        if sink.count == 0 {
            return;
        }
        let modified = meta
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        lock().files.push(FileHit {
            path: shown,
            modified,
            count: sink.count,
            lines: sink.lines,
        });
    }
}

/// `a,b` or `{a,b}` lists are one glob to `ignore`; a space-separated
/// list (as models sometimes send) is several.
fn split_globs(glob: &str) -> Vec<&str> {
    glob.split_whitespace().collect()
}

/// Collects one file's hits as the searcher reports them.
struct Collect<'a> {
    mode: Mode,
    keep: usize,
    kept: &'a AtomicUsize,
    lines: Vec<Line>,
    count: u64,
    binary: bool,
}

impl Collect<'_> {
    fn room(&self) -> bool {
        self.lines.len() < self.keep && self.kept.load(Ordering::Relaxed) <= MAX_KEPT
    }

    fn push(&mut self, line: Line) {
        self.kept.fetch_add(1, Ordering::Relaxed);
        self.lines.push(line);
    }
}

/// A line's text: lossy UTF-8, without its line ending, cut to
/// [`MAX_LINE`] characters.
fn text_of(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.chars().count() > MAX_LINE {
        let cut: String = text.chars().take(MAX_LINE).collect();
        format!("{cut}…")
    } else {
        text.to_string()
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        match self.mode {
            // One match is enough to list the file.
            Mode::Files => Ok(false),
            Mode::Count => Ok(true),
            Mode::Content => {
                let first = m.line_number().unwrap_or(0);
                for (at, line) in m.lines().enumerate() {
                    if !self.room() {
                        break;
                    }
                    self.push(Line::Match(first + at as u64, text_of(line)));
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.mode == Mode::Content && self.room() {
            let number = c.line_number().unwrap_or(0);
            self.push(Line::Context(number, text_of(c.bytes())));
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.mode == Mode::Content && !self.lines.is_empty() && self.room() {
            self.lines.push(Line::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}
