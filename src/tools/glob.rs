//! The `glob` tool: lists workspace files matching a pattern. Invariant: only
//! files inside the workspace are listed (relative, `/`-separated, sorted,
//! capped), honouring .gitignore/.ignore whether or not it is a git repo,
//! each checked through the workspace's root fd (a regular file, or a
//! symlink to one inside); the walk keeps at most `WALK_FACTOR` × `glob_cap`
//! + 1 paths and stops as soon as the user interrupts.

use std::path::Path;

use futures_util::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::args::{TypedTool, parse};
use super::{
    Access, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, Workspace,
    summary_line,
};

/// The walk stops collecting past this many times `glob_cap` matches.
const WALK_FACTOR: usize = 4;

/// The `glob` tool.
pub struct Glob;

/// A `glob` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobArgs {
    // The glob, relative to the workspace (e.g. `src/**/*.rs`).
    pub pattern: String,
}

impl TypedTool for Glob {
    type Args = GlobArgs;
    const PARALLEL: bool = true;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "glob",
            "List workspace files matching a glob (e.g. `src/**/*.rs`), honouring .gitignore, sorted.",
            schema,
            Access::Read,
        )
    }
    fn summary_of(&self, args: Option<&GlobArgs>) -> ToolSummary {
        ToolSummary {
            line: summary_line(args.map_or("", |a| a.pattern.as_str())),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: GlobArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { list(&args.pattern, &ctx.env).await })
    }
}

/// Runs a `glob` tool call.
pub async fn run(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<GlobArgs>(input) {
        Ok(args) => list(&args.pattern, env).await,
        Err(why) => why.into_output(),
    }
}

/// The files `pattern` matches.
async fn list(pattern: &str, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("", "");
    }
    match run_inner(pattern, env).await {
        Ok(Some(text)) => ToolOutput::ok(text),
        Ok(None) => ToolOutput::interrupted("", ""),
        Err(e) => ToolOutput::error(e),
    }
}

/// The listing, or `None` if the user interrupted the walk.
async fn run_inner(pattern: &str, env: &ToolEnv<'_>) -> Result<Option<String>, String> {
    let root = env.workspace.root();
    let relative = relative_pattern(pattern, root)?;
    let matcher = GlobBuilder::new(&relative)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("invalid glob pattern `{pattern}`: {e}"))?
        .compile_matcher();

    // Only descend into folders on the literal prefix (`src/` of
    // `src/**/*.rs`); walking from the root keeps every ignore rule in force.
    let prefix = literal_dir_prefix(&relative);
    let show_hidden = relative.split('/').any(|c| c.starts_with('.') && c != ".");
    let workspace = env.workspace.clone();
    let cap = env.config.files.glob_cap;
    let bound = cap.saturating_mul(WALK_FACTOR);
    let cancel = env.cancel.clone();
    let task = tokio::task::spawn_blocking(move || {
        walk(&workspace, &prefix, &matcher, show_hidden, bound, &cancel)
    });
    let walked = tokio::select! {
        r = task => r.map_err(|e| format!("listing files for `{pattern}` was aborted: {e}"))?,
        // The walk sees the same token and quits at its next entry.
        _ = env.cancel.cancelled() => None,
    };
    let Some(mut files) = walked else {
        return Ok(None);
    };
    // Files a rule keeps from reading (Claude Code's `Read(…)`) are not listed.
    let read_rules = env.config.rules.access.read.compile();
    files.retain(|f| {
        use crate::safety::access::Says;
        !matches!(read_rules.says(&root.join(f)), Says::Deny(_) | Says::Ask(_))
    });

    if files.is_empty() {
        return Ok(Some(format!("No files match `{pattern}`.")));
    }
    let overflow = files.len() > bound;
    files.sort();
    let more = files.len().saturating_sub(cap);
    files.truncate(cap);
    let mut out = files.join("\n");
    if more > 0 {
        if !out.is_empty() {
            out.push('\n');
        }
        if overflow {
            out.push_str(&format!(
                "… more than {bound} files match; these are {} of them (narrow the pattern)",
                files.len()
            ));
        } else {
            out.push_str(&format!("… {more} more (narrow the pattern)"));
        }
    }
    Ok(Some(out))
}

/// The pattern relative to the root: `./` dropped, an absolute pattern inside
/// the root made relative; `..` and absolute patterns outside are refused.
fn relative_pattern(pattern: &str, root: &Path) -> Result<String, String> {
    let trimmed = pattern.trim();
    if trimmed.is_empty() {
        return Err("`pattern` is empty".to_string());
    }
    let mut rel = trimmed;
    if rel.starts_with('/') {
        let root_str = root.to_string_lossy();
        match rel
            .strip_prefix(root_str.as_ref())
            .and_then(|r| r.strip_prefix('/'))
        {
            Some(inner) => rel = inner,
            None => {
                return Err(format!(
                    "pattern `{pattern}` is outside the workspace {}; use a pattern relative to it",
                    root.display()
                ));
            }
        }
    }
    while let Some(inner) = rel.strip_prefix("./") {
        rel = inner.trim_start_matches('/');
    }
    if rel.is_empty() {
        return Err(format!("pattern `{pattern}` names no files; try `**/*`"));
    }
    if rel.split('/').any(|c| c == "..") {
        return Err(format!(
            "pattern `{pattern}` may not contain `..`; patterns are relative to the workspace {}",
            root.display()
        ));
    }
    Ok(rel.to_string())
}

/// Leading directory components without glob syntax, joined with `/`.
fn literal_dir_prefix(pattern: &str) -> String {
    let parts: Vec<&str> = pattern.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    dirs.iter()
        .take_while(|c| {
            !c.is_empty() && *c != &"." && !c.contains(['*', '?', '[', ']', '{', '}', '\\'])
        })
        .copied()
        .collect::<Vec<_>>()
        .join("/")
}

/// Blocking walk: matching files (and symlinks to files inside the
/// workspace) as root-relative paths, in walk order. Folders off the literal
/// `prefix` are pruned. Stops once it holds `bound + 1` paths (so more than
/// `bound` means "and more"); `None` as soon as `cancel` fires.
fn walk(
    workspace: &Workspace,
    prefix: &str,
    matcher: &GlobMatcher,
    show_hidden: bool,
    bound: usize,
    cancel: &CancellationToken,
) -> Option<Vec<String>> {
    let root = workspace.root().to_path_buf();
    let prefix: Vec<String> = prefix
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    let filter_root = root.clone();
    let mut builder = WalkBuilder::new(&root);
    builder
        .require_git(false)
        .hidden(!show_hidden)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.file_name() == ".git" {
                return false;
            }
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            let Ok(rel) = e.path().strip_prefix(&filter_root) else {
                return true;
            };
            rel.components()
                .zip(prefix.iter())
                .all(|(c, p)| c.as_os_str() == p.as_str())
        });
    let mut files = Vec::new();
    for entry in builder.build() {
        if cancel.is_cancelled() {
            return None;
        }
        let Ok(entry) = entry else {
            continue;
        };
        let Some(ft) = entry.file_type() else {
            continue;
        };
        if ft.is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&root) else {
            continue;
        };
        if !matcher.is_match(rel) {
            continue;
        }
        let Some(rel_str) = rel.to_str() else {
            continue;
        };
        // Checked again through the root fd: a folder swapped for a link
        // out during the walk could have listed names from outside; those
        // are not files of the workspace, and neither are links leading out.
        let is_file = (ft.is_file() || ft.is_symlink())
            && workspace.files().metadata(rel).is_ok_and(|m| m.is_file());
        if is_file {
            files.push(rel_str.to_string());
            if files.len() > bound {
                break;
            }
        }
    }
    Some(files)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::test_support::Fixture;
    use serde_json::json;

    fn fixture(files: &[&str]) -> Fixture {
        Fixture::with_files(files)
    }

    impl Fixture {
        async fn glob(&self, pattern: Value) -> ToolOutput {
            run(&json!({"pattern": pattern}), &self.env()).await
        }
    }

    const TREE: &[&str] = &[
        "main.rs",
        "b.rs",
        "README.md",
        "src/lib.rs",
        "src/a/deep.rs",
        "src/a/notes.txt",
    ];

    #[tokio::test]
    async fn star_is_top_level_and_double_star_recursive() {
        let f = fixture(TREE);
        let out = f.glob(json!("*.rs")).await;
        assert_eq!(out.content, "b.rs\nmain.rs");
        let out = f.glob(json!("**/*.rs")).await;
        assert_eq!(out.content, "b.rs\nmain.rs\nsrc/a/deep.rs\nsrc/lib.rs");
        let out = f.glob(json!("src/**/*.rs")).await;
        assert_eq!(out.content, "src/a/deep.rs\nsrc/lib.rs");
        let out = f.glob(json!("./src/*")).await;
        assert_eq!(out.content, "src/lib.rs", "files only, no directories");
        let out = f.glob(json!("src/a/*.{txt,md}")).await;
        assert_eq!(out.content, "src/a/notes.txt");
    }

    #[tokio::test]
    async fn gitignore_is_honoured_without_git() {
        let f = fixture(&[
            "keep.rs",
            "target/out.rs",
            "gen/x.rs",
            "logs/a.log",
            "src/z.log",
            ".hidden/h.rs",
        ]);
        std::fs::write(f.ws.root().join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(f.ws.root().join(".ignore"), "gen/\n").unwrap();
        let out = f.glob(json!("**/*")).await;
        assert_eq!(out.content, "keep.rs");
        // The root .gitignore also applies when only a sub-folder is walked.
        let out = f.glob(json!("src/*")).await;
        assert_eq!(out.content, "No files match `src/*`.");
        assert!(!out.is_error());
        let out = f.glob(json!("target/*.rs")).await;
        assert_eq!(out.content, "No files match `target/*.rs`.");
    }

    #[tokio::test]
    async fn hidden_files_only_when_asked_for() {
        let f = fixture(&["a.rs", ".github/ci.yml", ".env"]);
        assert_eq!(f.glob(json!("**/*")).await.content, "a.rs");
        assert_eq!(
            f.glob(json!(".github/*.yml")).await.content,
            ".github/ci.yml"
        );
        assert_eq!(f.glob(json!(".*")).await.content, ".env");
    }

    #[tokio::test]
    async fn results_are_sorted_and_capped() {
        let names: Vec<String> = (0..20).rev().map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut f = fixture(&refs);
        f.config.files.glob_cap = 5;
        let out = f.glob(json!("*.txt")).await;
        assert_eq!(
            out.content,
            "f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\n… 15 more (narrow the pattern)"
        );
    }

    #[tokio::test]
    async fn the_walk_stops_collecting_past_the_bound() {
        let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut f = fixture(&refs);
        f.config.files.glob_cap = 5;
        let out = f.glob(json!("*.txt")).await;
        assert!(!out.is_error());
        let lines: Vec<&str> = out.content.lines().collect();
        assert_eq!(lines.len(), 6, "{}", out.content);
        assert_eq!(
            lines[5],
            "… more than 20 files match; these are 5 of them (narrow the pattern)"
        );
        let mut shown = lines[..5].to_vec();
        shown.sort();
        assert_eq!(shown, lines[..5], "sorted");

        let matcher = GlobBuilder::new("*.txt").build().unwrap().compile_matcher();
        let cancel = CancellationToken::new();
        let found = walk(&f.ws, "", &matcher, false, 7, &cancel).unwrap();
        assert_eq!(found.len(), 8, "bound + 1 tells that more exist");
    }

    #[tokio::test]
    async fn interrupt_stops_the_walk() {
        let f = fixture(TREE);
        let matcher = GlobBuilder::new("**/*").build().unwrap().compile_matcher();
        let cancel = CancellationToken::new();
        assert_eq!(
            walk(&f.ws, "", &matcher, false, 100, &cancel).map(|v| v.len()),
            Some(TREE.len())
        );
        cancel.cancel();
        assert_eq!(walk(&f.ws, "", &matcher, false, 100, &cancel), None);

        f.cancel.cancel();
        let out = f.glob(json!("**/*")).await;
        assert!(out.was_interrupted() && out.is_error(), "{out:?}");
        assert_eq!(
            out.content,
            "Error: interrupted by the user before this tool finished."
        );
    }

    #[tokio::test]
    async fn no_match_is_not_an_error() {
        let f = fixture(TREE);
        let out = f.glob(json!("**/*.py")).await;
        assert!(!out.is_error());
        assert_eq!(out.content, "No files match `**/*.py`.");
        let out = f.glob(json!("nonexistent/**/*.rs")).await;
        assert_eq!(out.content, "No files match `nonexistent/**/*.rs`.");
    }

    #[tokio::test]
    async fn absolute_pattern_inside_is_made_relative() {
        let f = fixture(TREE);
        let pattern = format!("{}/src/*.rs", f.ws.root().display());
        assert_eq!(f.glob(json!(pattern)).await.content, "src/lib.rs");
    }

    #[tokio::test]
    async fn bad_patterns_are_errors() {
        let f = fixture(TREE);
        let out = f.glob(json!("src/[a")).await;
        assert!(out.is_error());
        assert!(
            out.content
                .starts_with("Error: invalid glob pattern `src/[a`"),
            "{}",
            out.content
        );
        let out = f.glob(json!("../**/*.rs")).await;
        assert!(
            out.content.contains("may not contain `..`"),
            "{}",
            out.content
        );
        let out = f.glob(json!("src/../../*")).await;
        assert!(out.is_error());
        let out = f.glob(json!("/etc/*")).await;
        assert!(
            out.content.contains("is outside the workspace"),
            "{}",
            out.content
        );
        let out = f.glob(json!("")).await;
        assert_eq!(out.content, "Error: `pattern` is empty");
        let out = f.glob(json!(3)).await;
        assert_eq!(
            out.content,
            "Error: `pattern` must be a string, got a number"
        );
        let out = run(&json!({}), &f.env()).await;
        assert_eq!(out.content, "Error: missing required argument `pattern`");
    }

    #[tokio::test]
    async fn symlinks_leading_out_are_not_followed() {
        let f = fixture(&["in.rs"]);
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), f.ws.root().join("out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.rs"),
            f.ws.root().join("link.rs"),
        )
        .unwrap();
        std::os::unix::fs::symlink("in.rs", f.ws.root().join("alias.rs")).unwrap();
        assert_eq!(f.glob(json!("**/*.rs")).await.content, "alias.rs\nin.rs");
        assert_eq!(
            f.glob(json!("out/*.rs")).await.content,
            "No files match `out/*.rs`."
        );
    }

    #[test]
    fn literal_prefix_stops_at_glob_syntax() {
        assert_eq!(literal_dir_prefix("src/a/**/*.rs"), "src/a");
        assert_eq!(literal_dir_prefix("*.rs"), "");
        assert_eq!(literal_dir_prefix("src/*.rs"), "src");
        assert_eq!(literal_dir_prefix("s{a,b}/x.rs"), "");
        assert_eq!(literal_dir_prefix("src/lib.rs"), "src");
    }
}
