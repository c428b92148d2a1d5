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
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{TypedTool, held, parse};
use super::{
    Access, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, summary_line,
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

/// A `grep` call's arguments (Claude Code's `Grep`'s names).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// the regular expression
    pattern: String,
    /// a file or folder in the workspace (default: all of it)
    path: Option<String>,
    // Only files whose path matches this glob (e.g. "*.rs").
    glob: Option<String>,
    // Only files of this type (e.g. rust, py, js).
    #[serde(rename = "type")]
    file_type: Option<String>,
    // What to show (default: files_with_matches).
    #[schemars(extend("enum" = ["files_with_matches", "content", "count"]))]
    output_mode: Option<String>,
    // Ignore case.
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    // Number the lines (content mode).
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    // Lines of context after each match (content mode).
    #[serde(rename = "-A")]
    after: Option<u64>,
    // Lines of context before each match (content mode).
    #[serde(rename = "-B")]
    before: Option<u64>,
    // Lines of context on both sides (content mode).
    #[serde(rename = "-C")]
    around: Option<u64>,
    // Entries shown at most (default 250).
    head_limit: Option<u64>,
    // Entries skipped first, to page on.
    offset: Option<u64>,
    // Let a match span lines.
    multiline: Option<bool>,
}

impl Query {
    /// Reads a call's arguments; an error names the bad field.
    pub fn from_args(args: GrepArgs) -> Result<Self, String> {
        if args.pattern.is_empty() {
            return Err("`pattern` is empty".into());
        }
        // A blank text is no text.
        let text = |field: Option<String>| {
            field
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let number = |n: Option<u64>| n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let mode = match text(args.output_mode).as_deref() {
            None | Some("files_with_matches") => Mode::Files,
            Some("content") => Mode::Content,
            Some("count") => Mode::Count,
            Some(other) => {
                return Err(format!(
                    "`output_mode` is `{other}`; it is one of files_with_matches, content, count"
                ));
            }
        };
        let around = number(args.around).unwrap_or(0);
        let context = (
            number(args.before).unwrap_or(around).min(MAX_CONTEXT),
            number(args.after).unwrap_or(around).min(MAX_CONTEXT),
        );
        Ok(Self {
            pattern: args.pattern,
            path: text(args.path),
            glob: text(args.glob),
            file_type: text(args.file_type),
            mode,
            case_insensitive: args.case_insensitive.unwrap_or(false),
            line_numbers: args.line_numbers.unwrap_or(false),
            context,
            limit: number(args.head_limit)
                .filter(|n| *n > 0)
                .unwrap_or(DEFAULT_LIMIT),
            offset: number(args.offset).unwrap_or(0),
            multiline: args.multiline.unwrap_or(false),
        })
    }
}

/// The `grep` tool.
pub struct Grep;

impl TypedTool for Grep {
    type Args = GrepArgs;
    const PARALLEL: bool = true;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "grep",
            "Search file contents with a regular expression (ripgrep's syntax), honouring .gitignore. \
output_mode: files_with_matches (default; newest first), content (matching lines; -n adds line numbers, \
-A/-B/-C context) or count. Narrow with path (a folder or file), glob (e.g. \"*.rs\", \"src/**/*.{ts,tsx}\") \
or type (e.g. rust, py, js). -i ignores case; multiline lets a match span lines. head_limit (default 250) \
and offset page through long results. Binary and huge files are skipped and listed.",
            schema,
            Access::Read,
        )
    }
    fn target_of<'v>(&self, args: &GrepArgs, input: &'v Value) -> Target<'v> {
        match args.path.as_deref() {
            Some(path) if !path.is_empty() => Target::Read(held(input, path)),
            _ => Target::Read("."),
        }
    }
    fn summary_of(&self, args: Option<&GrepArgs>) -> ToolSummary {
        let line = match args {
            Some(GrepArgs {
                pattern,
                path: Some(path),
                ..
            }) if !path.is_empty() => format!("{pattern} in {path}"),
            Some(args) => args.pattern.clone(),
            None => String::new(),
        };
        ToolSummary {
            line: summary_line(&line),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: GrepArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { search(args, &ctx.env).await })
    }
}

/// Runs a `grep` tool call.
pub async fn run(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<GrepArgs>(input) {
        Ok(args) => search(args, env).await,
        Err(why) => why.into_output(),
    }
}

/// The search `args` ask for.
async fn search(args: GrepArgs, env: &ToolEnv<'_>) -> ToolOutput {
    let query = match Query::from_args(args) {
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
