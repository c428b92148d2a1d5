//! Tool registry: JSON schemas the model sees and the dispatcher that runs a
//! call. Invariant: dispatch never panics; every failure is an `Error: …`
//! tool result and the agent loop goes on.

pub mod bash;
pub mod fs;
pub mod glob;
#[cfg(test)]
pub(crate) mod test_support;
pub mod todo;
pub mod workspace;

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use crate::json::json_type;
pub use workspace::Workspace;

/// Limits applied to tool execution.
#[derive(Clone, Debug)]
pub struct ToolConfig {
    /// Timeout used when `bash` is called without `timeout_secs`.
    pub bash_default_timeout: Duration,
    /// Upper bound for `timeout_secs`.
    pub bash_max_timeout: Duration,
    /// Maximum bytes of tool output returned to the model (head and tail kept).
    pub output_cap: usize,
    /// Maximum number of paths `glob` returns.
    pub glob_cap: usize,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            output_cap: 30_000,
            glob_cap: 500,
        }
    }
}

/// What a tool returns to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    /// The tool stopped because the user interrupted it (implies `is_error`).
    pub interrupted: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            interrupted: false,
        }
    }
    /// An error result; the text is prefixed with `Error: `.
    pub fn error(msg: impl std::fmt::Display) -> Self {
        Self {
            content: format!("Error: {msg}"),
            is_error: true,
            interrupted: false,
        }
    }
    /// The user interrupted the tool; `detail` (e.g. output so far) follows the notice.
    pub fn interrupted(detail: impl std::fmt::Display) -> Self {
        let detail = detail.to_string();
        let sep = if detail.is_empty() { "" } else { "\n" };
        Self {
            content: format!(
                "Error: interrupted by the user before this tool finished.{sep}{detail}"
            ),
            is_error: true,
            interrupted: true,
        }
    }
}

/// Everything a workspace tool may touch while it runs.
pub struct ToolEnv<'a> {
    pub workspace: &'a Workspace,
    pub config: &'a ToolConfig,
    /// Cancelled when the user interrupts: the tool must stop at once
    /// (bash kills its whole process group).
    pub cancel: &'a CancellationToken,
    /// Live output chunks (bash stdout/stderr as they arrive), if wanted.
    pub output: Option<&'a UnboundedSender<String>>,
}

/// A tool as the model sees it (serialises to the Anthropic tool shape).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
}

pub const TODO_WRITE: &str = "todo_write";
pub const TODO_READ: &str = "todo_read";

/// Runs one of the workspace tools (`bash`, `read_file`, `write_file`,
/// `edit_file`, `glob`). The plan tools are handled by the agent, which owns
/// the plan; any other name is an error result.
pub async fn run_workspace_tool(name: &str, input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    match name {
        "bash" => bash::run(input, env).await,
        "read_file" => fs::read_file(input, env).await,
        "write_file" => fs::write_file(input, env).await,
        "edit_file" => fs::edit_file(input, env).await,
        "glob" => glob::run(input, env).await,
        other => ToolOutput::error(format!(
            "unknown tool `{other}`. Available tools: {}",
            definitions()
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Reads a required string argument, or explains what is wrong.
pub fn str_arg<'v>(input: &'v Value, key: &str) -> Result<&'v str, String> {
    match input.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "`{key}` must be a string, got {}",
            json_type(other)
        )),
        None => Err(format!("missing required argument `{key}`")),
    }
}

/// Reads an optional non-negative integer argument.
pub fn opt_u64_arg(input: &Value, key: &str) -> Result<Option<u64>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            format!(
                "`{key}` must be a non-negative integer, got {}",
                json_type(v)
            )
        }),
    }
}

/// Reads an optional boolean argument.
pub fn opt_bool_arg(input: &Value, key: &str) -> Result<Option<bool>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(format!(
            "`{key}` must be true or false, got {}",
            json_type(v)
        )),
    }
}

/// Caps `text` at `cap` bytes, keeping head and tail around a clear marker.
pub fn cap_output(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let keep = cap / 2;
    let head_end = text.floor_char_boundary(keep);
    let tail_start = text.ceil_char_boundary(text.len().saturating_sub(keep).max(head_end));
    let dropped = tail_start - head_end;
    format!(
        "{}\n[… {dropped} bytes truncated …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// A one-line summary of a call's arguments, for traces.
pub fn summarize(name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or("");
    let text = match name {
        "bash" => field("command").lines().next().unwrap_or("").to_string(),
        "read_file" | "write_file" | "edit_file" => field("path").to_string(),
        "glob" => field("pattern").to_string(),
        "todo_write" => match input.get("todos") {
            Some(Value::Array(items)) => format!("{} items", items.len()),
            _ => String::new(),
        },
        _ => String::new(),
    };
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(79).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The tools offered to the model, in a stable order.
pub fn definitions() -> Vec<ToolDef> {
    use serde_json::json;
    vec![
        ToolDef {
            name: TODO_WRITE,
            description: "Replace the whole plan (a checklist the user watches live). Send every item each time. \
Rules: at most 20 items; each needs non-empty `content` (imperative, e.g. \"Run tests\") and `activeForm` \
(present tense, e.g. \"Running tests\"); status is pending, in_progress or completed; at most ONE item \
in_progress; no duplicate content. Mark an item in_progress before starting it and completed as soon as it \
is done. A list that breaks a rule is refused and the old plan stays. Returns the rendered plan.",
            input_schema: json!({
                "type": "object",
                "properties": {"todos": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {"type": "string"},
                        "id": {"type": "string"}
                    },
                    "required": ["content", "status", "activeForm"]
                }}},
                "required": ["todos"]
            }),
        },
        ToolDef {
            name: TODO_READ,
            description: "Return the current plan.",
            input_schema: json!({"type": "object", "properties": {}}),
        },
        ToolDef {
            name: "bash",
            description: "Run a shell command in the workspace (bash -c). Returns stdout+stderr and the exit code; \
long output keeps head and tail. Default timeout 120 s, max 600.",
            input_schema: json!({
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout_secs": {"type": "integer"}},
                "required": ["command"]
            }),
        },
        ToolDef {
            name: "read_file",
            description: "Read a text file with numbered lines. `offset` is the first line (1-based), `limit` the line count.",
            input_schema: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
                "required": ["path"]
            }),
        },
        ToolDef {
            name: "write_file",
            description: "Create or overwrite a file (parent folders are created).",
            input_schema: json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"]
            }),
        },
        ToolDef {
            name: "edit_file",
            description: "Replace exact text in a file. `old_text` must occur exactly once unless `replace_all` is true.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"}, "old_text": {"type": "string"},
                    "new_text": {"type": "string"}, "replace_all": {"type": "boolean"}
                },
                "required": ["path", "old_text", "new_text"]
            }),
        },
        ToolDef {
            name: "glob",
            description: "List workspace files matching a glob (e.g. `src/**/*.rs`), honouring .gitignore, sorted.",
            input_schema: json!({
                "type": "object",
                "properties": {"pattern": {"type": "string"}},
                "required": ["pattern"]
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_head_and_tail_with_marker() {
        let text = "a".repeat(100) + &"b".repeat(100);
        let out = cap_output(&text, 20);
        assert!(out.starts_with("aaaaaaaaaa\n[… 180 bytes truncated …]\n"));
        assert!(out.ends_with("bbbbbbbbbb"));
        assert_eq!(cap_output("short", 20), "short");
    }

    #[test]
    fn cap_never_splits_a_char() {
        let text = "é".repeat(50);
        let out = cap_output(&text, 11);
        assert!(out.contains("bytes truncated"));
    }

    #[test]
    fn argument_helpers_explain_type_errors() {
        let v = serde_json::json!({"path": 3, "limit": "x", "flag": 1});
        assert_eq!(
            str_arg(&v, "path").unwrap_err(),
            "`path` must be a string, got a number"
        );
        assert_eq!(
            str_arg(&v, "nope").unwrap_err(),
            "missing required argument `nope`"
        );
        assert!(opt_u64_arg(&v, "limit").is_err());
        assert!(opt_bool_arg(&v, "flag").is_err());
        assert_eq!(opt_u64_arg(&v, "absent").unwrap(), None);
    }
}
