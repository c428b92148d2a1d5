//! `write_file`. Invariant: writes go to the path's real target (a symlink
//! is written through, never replaced) inside the workspace, through its
//! root fd, and are atomic, so a failed write never leaves a half-written
//! file; with an editor, through the editor after the same checks
//! ([`super::through`]).

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::plural;
use super::through::store;
use crate::tools::args::{TypedTool, held, parse};
use crate::tools::{
    Access, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, summary_line,
};

/// The `write_file` tool.
pub struct WriteFile;

/// A `write_file` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    // The file, relative to the workspace.
    #[serde(alias = "file_path", alias = "filePath")]
    pub path: String,
    // The whole new content of the file.
    pub content: String,
}

impl TypedTool for WriteFile {
    type Args = WriteArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "write_file",
            "Create or overwrite a file (parent folders are created).",
            schema,
            Access::Write,
        )
    }
    fn target_of<'v>(&self, args: &WriteArgs, input: &'v Value) -> Target<'v> {
        Target::File(held(input, &args.path))
    }
    fn summary_of(&self, args: Option<&WriteArgs>) -> ToolSummary {
        let (path, content) = args.map_or(("", ""), |a| (a.path.as_str(), a.content.as_str()));
        // A written file shows as all added lines.
        ToolSummary {
            line: summary_line(path),
            detail: ToolDetail::Diff {
                path: path.to_string(),
                old: String::new(),
                new: content.to_string(),
                first: 0,
            },
        }
    }
    fn call<'a>(&'a self, args: WriteArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { write(&args, &ctx.env).await })
    }
}

/// `write_file {path, content}`: creates or atomically replaces a file.
pub async fn write_file(input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match parse::<WriteArgs>(input) {
        Ok(args) => write(&args, env).await,
        Err(why) => why.into_output(),
    }
}

/// Writes the file `args` name.
async fn write(args: &WriteArgs, env: &ToolEnv<'_>) -> ToolOutput {
    if env.cancel.is_cancelled() {
        return ToolOutput::interrupted("", "");
    }
    match write_file_inner(args, env).await {
        Ok(msg) => ToolOutput::ok(msg),
        Err(e) => ToolOutput::error(e),
    }
}

async fn write_file_inner(args: &WriteArgs, env: &ToolEnv<'_>) -> Result<String, String> {
    let (raw, content) = (args.path.as_str(), args.content.as_str());
    let path = env.workspace.resolve(raw)?;
    let shown = env.workspace.display(&path);
    if path == env.workspace.root() {
        return Err(format!("`{shown}` is the workspace root, a directory"));
    }
    // Through every symlink, dangling ones included: the link stays a link.
    let existed = store(env, &path, content, &shown, true).await?;
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::tools::fs::fixture;
    use serde_json::json;

    // ---- write_file ----

    #[tokio::test]
    async fn write_creates_parents_and_reports() {
        let f = fixture();
        let out = f
            .write(json!({"path": "a/b/c.txt", "content": "hi\nthere\n"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
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
        assert!(!out.is_error(), "{}", out.content);
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
        assert!(out.is_error());
        assert_eq!(
            out.content,
            "Error: `d` is a directory; cannot write a file there"
        );
        assert_eq!(f.entries("."), ["d"]);
        let out = f.write(json!({"path": ".", "content": "x"})).await;
        assert!(out.is_error());
    }

    #[tokio::test]
    async fn write_errors_leave_no_partial_file() {
        let f = fixture();
        // A file where a parent folder should be.
        f.put("file", "x");
        let out = f
            .write(json!({"path": "file/child.txt", "content": "x"}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content.contains("cannot create the folder `file`"),
            "{}",
            out.content
        );
        assert_eq!(f.get("file"), "x");
        assert_eq!(f.entries("."), ["file"]);
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
        assert!(out.is_error());
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
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(f.get("real.txt"), "new");
        let meta = std::fs::symlink_metadata(f.ws.root().join("alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink());
        let out = f
            .edit(json!({"path": "alias.txt", "old_text": "new", "new_text": "newer"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
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
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(out.content, "Wrote 3 bytes (1 line) to alias.txt (created)");
        assert_eq!(f.get("sub/new.txt"), "new");
        let meta = std::fs::symlink_metadata(f.ws.root().join("alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink(), "the link was replaced");
        // A chain of links, the last one dangling.
        std::os::unix::fs::symlink("alias2.txt", f.ws.root().join("chain.txt")).unwrap();
        std::os::unix::fs::symlink("later.txt", f.ws.root().join("alias2.txt")).unwrap();
        let out = f.write(json!({"path": "chain.txt", "content": "x"})).await;
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(f.get("later.txt"), "x");
        assert_eq!(
            f.entries("."),
            ["alias.txt", "alias2.txt", "chain.txt", "later.txt", "sub"]
        );
    }
}
