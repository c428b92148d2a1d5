//! The `grep` tool: searches file contents in-process with ripgrep's own
//! crates (`grep-regex` for the pattern, `grep-searcher` for the files,
//! over the `ignore` walker), so no `rg` binary is needed. Its parameters
//! are the ones models are trained on (Claude Code's `Grep`): `pattern`,
//! `path`, `glob`, `type`, `output_mode` (`files_with_matches`, the
//! default, `content` or `count`), `-i`, `-n`, `-A`/`-B`/`-C`,
//! `head_limit`, `offset` and `multiline`.
//!
//! Invariants: only files inside the workspace are read, each opened
//! through the workspace's folder fd without following links; what
//! `.gitignore` (and `.ignore`) excludes and hidden files are skipped, as
//! `rg` does; binary files and files over [`MAX_FILE`] are skipped and
//! *said*; the order is deterministic (newest modification first, then
//! path); and a cut result says what it left out and how to narrow it.

mod output;
mod search;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{
    Access, Target, Tool, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, str_arg,
    str_or_empty, summary_line,
};

/// Files larger than this are skipped (and listed).
pub const MAX_FILE: u64 = 20 * 1024 * 1024;

/// Entries (files, or lines in `content` mode) shown when `head_limit`
/// is not given.
pub const DEFAULT_LIMIT: usize = 250;

/// The most context lines asked for on one side.
const MAX_CONTEXT: usize = 50;

/// What to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Files,
    Content,
    Count,
}

/// A search as the model asked for it.
#[derive(Clone, Debug)]
pub struct Query {
    pub pattern: String,
    pub path: Option<String>,
    pub glob: Option<String>,
    pub file_type: Option<String>,
    pub mode: Mode,
    pub case_insensitive: bool,
    pub line_numbers: bool,
    pub context: (usize, usize),
    pub limit: usize,
    pub offset: usize,
    pub multiline: bool,
}

impl Query {
    /// Reads a call's input; an error names the bad field.
    pub fn from_input(input: &Value) -> Result<Self, String> {
        let pattern = str_arg(input, "pattern")?.to_string();
        if pattern.is_empty() {
            return Err("`pattern` is empty".into());
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match input.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
                Some(_) => Err(format!("`{key}` must be a string")),
            }
        };
        let number = |key: &str| -> Result<Option<usize>, String> {
            match input.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| format!("`{key}` must be a whole number, 0 or more")),
            }
        };
        let flag = |key: &str| input.get(key).and_then(Value::as_bool).unwrap_or(false);
        let mode = match text("output_mode")?.as_deref() {
            None | Some("files_with_matches") => Mode::Files,
            Some("content") => Mode::Content,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(format!(
                    "`output_mode` is `{other}`; it is one of files_with_matches, content, count"
                ));
            }
        };
        let around = number("-C")?.unwrap_or(0);
        let context = (
            number("-B")?.unwrap_or(around).min(MAX_CONTEXT),
            number("-A")?.unwrap_or(around).min(MAX_CONTEXT),
        );
        Ok(Self {
            pattern,
            path: text("path")?,
            glob: text("glob")?,
            file_type: text("type")?,
            mode,
            case_insensitive: flag("-i"),
            line_numbers: flag("-n"),
            context,
            limit: number("head_limit")?
                .filter(|n| *n > 0)
                .unwrap_or(DEFAULT_LIMIT),
            offset: number("offset")?.unwrap_or(0),
            multiline: flag("multiline"),
        })
    }
}

/// The `grep` tool.
pub struct Grep;

impl Tool for Grep {
    fn spec(&self) -> ToolSpec {
        ToolSpec::builtin(
            "grep",
            "Search file contents with a regular expression (ripgrep's syntax), honouring .gitignore. \
output_mode: files_with_matches (default; newest first), content (matching lines; -n adds line numbers, \
-A/-B/-C context) or count. Narrow with path (a folder or file), glob (e.g. \"*.rs\", \"src/**/*.{ts,tsx}\") \
or type (e.g. rust, py, js). -i ignores case; multiline lets a match span lines. head_limit (default 250) \
and offset page through long results. Binary and huge files are skipped and listed.",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "the regular expression"},
                    "path": {"type": "string", "description": "a file or folder in the workspace (default: all of it)"},
                    "glob": {"type": "string"},
                    "type": {"type": "string"},
                    "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
                    "-i": {"type": "boolean"},
                    "-n": {"type": "boolean"},
                    "-A": {"type": "integer"},
                    "-B": {"type": "integer"},
                    "-C": {"type": "integer"},
                    "head_limit": {"type": "integer"},
                    "offset": {"type": "integer"},
                    "multiline": {"type": "boolean"}
                },
                "required": ["pattern"]
            }),
            Access::Read,
        )
    }
    fn target<'v>(&self, input: &'v Value) -> Target<'v> {
        match input.get("path").and_then(Value::as_str) {
            Some(path) if !path.is_empty() => Target::Read(path),
            _ => Target::Read("."),
        }
    }
    fn summarize(&self, input: &Value) -> ToolSummary {
        let pattern = str_or_empty(input, "pattern");
        let line = match input.get("path").and_then(Value::as_str) {
            Some(path) if !path.is_empty() => format!("{pattern} in {path}"),
            _ => pattern.to_string(),
        };
        ToolSummary {
            line: summary_line(&line),
            detail: ToolDetail::Output,
        }
    }
    fn parallel(&self, _input: &Value) -> bool {
        true
    }
    fn run<'a>(&'a self, input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { run(input, &ctx.env).await })
    }
}

/// Runs a `grep` tool call.
pub async fn run(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    let query = match Query::from_input(input) {
        Ok(q) => q,
        Err(e) => return ToolOutput::error(e),
    };
    let plan = match search::Plan::new(&query, env.workspace) {
        // Files a rule keeps from reading (Claude Code's `Read(…)`) are
        // not searched either.
        Ok(p) => p.hiding(env.config.rules.access.read.clone()),
        Err(e) => return ToolOutput::error(e),
    };
    let cancel = env.cancel.clone();
    let task = tokio::task::spawn_blocking(move || plan.run(&cancel));
    let found = tokio::select! {
        r = task => match r {
            Ok(found) => found,
            Err(e) => return ToolOutput::error(format!("the search was aborted: {e}")),
        },
        // The walk sees the same token and stops at its next file.
        () = env.cancel.cancelled() => None,
    };
    match found {
        Some(found) => ToolOutput::ok(output::render(&query, found)),
        None => ToolOutput::interrupted("The search was stopped.", ""),
    }
}

#[cfg(test)]
mod tests;
