//! The tools: one [`Tool`] per file, and the [`ToolRegistry`] that offers
//! them to the model and finds the one a call names. Invariant: running a
//! call never panics; every failure is an `Error: …` tool result and the
//! agent loop goes on. The agent knows no tool by name: what a call did to
//! the plan comes back in [`ToolOutput::plan`].

pub mod args;
pub mod bash;
pub mod editor;
pub mod fs;
pub mod glob;
pub mod grep;
pub mod hook_run;
mod host;
pub mod image_budget;
pub mod jobs;
pub mod procs;
mod registry;
pub mod shell;
pub mod skill;
pub mod spawn;
pub mod task;
#[cfg(test)]
pub(crate) mod test_support;
pub mod todo;
pub mod web_fetch;
pub mod workspace;

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use crate::events::{Failure, INTERRUPTED, Refuser, ToolDetail, ToolOutcome, ToolSummary};
pub use crate::json::json_type;
use crate::todo::{PlanDiff, SharedPlan, TodoItem};
pub use host::{HostRequest, ToolHost};
pub use registry::{ToolRegistry, ToolRegistryBuilder, definitions, run_workspace_tool};
pub use workspace::Workspace;

/// How long a `bash` call may run, and whether anyone can approve one.
#[derive(Clone, Debug)]
pub struct BashLimits {
    /// Timeout used when `bash` is called without `timeout_secs`.
    pub default_timeout: Duration,
    /// Upper bound for `timeout_secs`.
    pub max_timeout: Duration,
    /// A command still running after this long becomes a background job
    /// (its output so far returned) instead of running on to its timeout;
    /// `None`: off (`auto_background_after = 0`).
    pub auto_background: Option<Duration>,
    /// Nobody answers approvals (headless): plan mode refuses, saying
    /// why, the commands it would ask about.
    pub unattended: bool,
    /// The editor's terminals (an ACP client offering them, with
    /// `acp_terminal = "editor"`): a command that does not run in the
    /// sandbox runs in one of them instead of Waypoint's own runner.
    /// `None`: every command runs in Waypoint's runner.
    pub editor: Option<std::sync::Arc<dyn editor::EditorTerminal>>,
}

impl Default for BashLimits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(crate::config::defaults::BASH_TIMEOUT),
            max_timeout: Duration::from_secs(600),
            auto_background: None,
            unattended: false,
            editor: None,
        }
    }
}

/// Limits applied to tool execution.
#[derive(Clone, Debug)]
pub struct ToolConfig {
    /// `bash`'s timeouts, and when a long command moves to the background.
    pub bash: BashLimits,
    /// Maximum bytes of tool output returned to the model (head and tail kept).
    pub output_cap: usize,
    /// What the file tools return and work through.
    pub files: FileTools,
    /// The config's `allow`/`deny` rules for `bash` (a deny rule always wins).
    pub rules: crate::safety::Rules,
    /// The sandbox `bash` runs a command in; `None` where there is none
    /// (no Landlock).
    pub sandbox: Option<crate::safety::Sandbox>,
    /// The recorded session's id: `bash` marks its commands with it
    /// ([`procs::SESSION_VAR`]), so a resume after a crash finds and ends
    /// what they left running.
    pub session: Option<String>,
    /// The MCP servers to start (`[mcp_servers.NAME]`, a project's
    /// `.mcp.json`), in the background when the engine starts; their tools
    /// join the registry when ready.
    pub mcp: crate::config::McpSettings,
    /// `[task]`: subagents' places and limits.
    pub task: crate::config::TaskLimits,
    /// The hooks that run at the session's moments (around calls, and
    /// the engine's own).
    pub hooks: std::sync::Arc<crate::hooks::HookSet>,
    /// The session's skills and custom commands.
    pub catalog: std::sync::Arc<crate::skills::Catalog>,
    /// Hosts `web_fetch` may reach even at a private or loopback address
    /// (`web_allow`).
    pub web_allow: Vec<String>,
    /// Whether the model takes images, as the settings say (`None`: by
    /// its name, [`crate::models::takes_images`]).
    pub images: Option<bool>,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            bash: BashLimits::default(),
            output_cap: crate::config::defaults::OUTPUT_CAP,
            files: FileTools::default(),
            rules: crate::safety::Rules::default(),
            sandbox: None,
            session: None,
            mcp: crate::config::McpSettings::default(),
            task: crate::config::TaskLimits::default(),
            hooks: std::sync::Arc::default(),
            catalog: std::sync::Arc::default(),
            web_allow: Vec::new(),
            images: None,
        }
    }
}

/// The file tools' settings.
#[derive(Clone, Debug)]
pub struct FileTools {
    /// Maximum number of paths `glob` returns.
    pub glob_cap: usize,
    /// The editor holding the workspace's files (an ACP client offering
    /// `fs/read_text_file` and `fs/write_text_file`): `read_file`,
    /// `write_file` and `edit_file` read its buffers and write through it,
    /// after their own checks. `None`: they use the disk alone.
    pub editor: Option<std::sync::Arc<dyn editor::EditorFiles>>,
}

impl Default for FileTools {
    fn default() -> Self {
        Self {
            glob_cap: 500,
            editor: None,
        }
    }
}

/// What a tool returns to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: String,
    /// How the call ended, typed.
    pub outcome: ToolOutcome,
    /// The plan was written (accepted), and how it changed.
    pub plan: Option<PlanChange>,
    /// A command's exit code, when it exited (bash).
    pub exit_code: Option<i32>,
    /// Images the model sees after the result (`read_file` of an image,
    /// an MCP tool's image), for a model that takes them.
    pub images: Vec<crate::chat::ImageSource>,
    /// The skill the call loaded (its name): the engine lets its `## Plan`
    /// seed an empty plan. The pipeline names no tool: the output says.
    pub skill: Option<String>,
}

/// What an accepted plan write did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanChange {
    pub diff: PlanDiff,
    /// The plan after the write, its rendering and its revision number,
    /// taken together under the plan's lock.
    pub items: Vec<TodoItem>,
    pub rendered: String,
    pub revision: u32,
    /// The items differ from before (re-sending the same plan still counts
    /// as tending it, but is not announced).
    pub changed: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        Self::ended(content, ToolOutcome::Ok)
    }

    /// `content` with `outcome`.
    pub fn ended(content: impl Into<String>, outcome: ToolOutcome) -> Self {
        Self {
            content: content.into(),
            outcome,
            plan: None,
            exit_code: None,
            images: Vec::new(),
            skill: None,
        }
    }

    /// A call not run because `by` refused it; the text says so itself
    /// (`Blocked by a deny rule: …`) and is also the reason shown.
    pub fn refused(by: Refuser, text: impl Into<String>) -> Self {
        let text = text.into();
        Self::ended(text.clone(), ToolOutcome::Refused { by, reason: text })
    }

    /// An error result of `failure`; the text is prefixed with `Error: `.
    pub fn failed(failure: Failure, msg: impl std::fmt::Display) -> Self {
        Self::ended(format!("Error: {msg}"), ToolOutcome::Failed { failure })
    }

    /// The tool's own error (a missing file, a bad argument); the text is
    /// prefixed with `Error: `.
    pub fn error(msg: impl std::fmt::Display) -> Self {
        Self::failed(Failure::Tool, msg)
    }

    /// The user interrupted the tool. `note` says what became of it (may
    /// be empty); `so_far` is the output it had made by then, which the
    /// model reads after the notice (`partial` says there was some).
    pub fn interrupted(note: &str, so_far: &str) -> Self {
        let mut text = INTERRUPTED.to_string();
        for (head, part) in [("\n", note), ("\nOutput so far:\n", so_far)] {
            if !part.is_empty() {
                text.push_str(head);
                text.push_str(part);
            }
        }
        Self::ended(
            text,
            ToolOutcome::Interrupted {
                partial: !so_far.is_empty(),
            },
        )
    }

    /// The model reads it as an error.
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// The user interrupted it (or it never started).
    pub fn was_interrupted(&self) -> bool {
        matches!(
            self.outcome,
            ToolOutcome::Interrupted { .. } | ToolOutcome::NotRun
        )
    }
}

/// Everything a tool may touch while it runs: what a workspace tool uses,
/// the session's plan (only the plan tools touch it), and its host (to
/// report progress and ask the user).
pub struct ToolCtx<'a> {
    pub env: ToolEnv<'a>,
    pub plan: &'a SharedPlan,
    pub host: ToolHost<'a>,
}

/// What a tool's calls may do, which decides whether they ask first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads only (files, the plan).
    Read,
    /// Changes the plan, nothing else.
    Plan,
    /// Writes files in the workspace.
    Write,
    /// Runs commands.
    Exec,
    /// Does what another program decides (an MCP server's tool that does
    /// not say it only reads): asked in `ask` and `auto-edit`.
    External,
    /// Reaches the network (`web_fetch`): asked in `ask` and `auto-edit`
    /// like a command, refused in `read-only` and where the sandbox has
    /// no network.
    Network,
}

/// Where a tool comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// One of Waypoint's own.
    Builtin,
    /// Offered by the MCP server named so.
    Mcp { server: String },
    /// Starts or talks to another agent (a subagent).
    Agent,
}

/// What the model and the approval gate know of a tool: owned, so a tool
/// found at run time (an MCP server's) is as good as a built-in one.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    /// What the model reads about the tool.
    pub description: String,
    /// The JSON schema of its input.
    pub schema: Value,
    /// What a call may do, for the approval policy.
    pub access: Access,
    pub origin: Origin,
}

impl ToolSpec {
    /// A spec of one of Waypoint's own tools.
    pub fn builtin(name: &str, description: &str, schema: Value, access: Access) -> Self {
        Self {
            name: name.to_string(),
            description: description.to_string(),
            schema,
            access,
            origin: Origin::Builtin,
        }
    }

    /// How requests offer it.
    pub fn definition(&self) -> ToolDef {
        ToolDef {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.schema.clone(),
        }
    }
}

/// What a call acts on, as the approval gate and the user's "always"
/// answers see it; the tool says, the gate never guesses from input keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'v> {
    /// A shell command line (checked against the rules).
    Command(&'v str),
    /// A file, as the call names it (resolved in the workspace).
    File(&'v str),
    /// A file or folder read, as the call names it.
    Read(&'v str),
    /// An address fetched.
    Url(&'v str),
    /// Nothing the gate looks at.
    Nothing,
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Its name, description, schema, access and origin (read once, when
    /// it is registered).
    fn spec(&self) -> ToolSpec;
    /// What a call acts on, for the approval gate.
    fn target<'v>(&self, _input: &'v Value) -> Target<'v> {
        Target::Nothing
    }
    /// How a call is shown in traces.
    fn summarize(&self, input: &Value) -> ToolSummary;
    /// Whether this call may run at the same time as the reply's other
    /// calls that may (it only reads, or it is a subagent's task).
    fn parallel(&self, _input: &Value) -> bool {
        false
    }
    /// Runs a call; `input` is a JSON object. Errors are `ToolOutput::error`.
    fn run<'a>(&'a self, input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput>;
}

pub use crate::chat::ToolDef;

/// The shared part of a tool's context: what a workspace tool may touch.
#[derive(Clone, Copy)]
pub struct ToolEnv<'a> {
    pub workspace: &'a Workspace,
    pub config: &'a ToolConfig,
    /// Cancelled when the user interrupts: the tool must stop at once
    /// (bash kills its whole process group).
    pub cancel: &'a CancellationToken,
    /// Live output chunks (bash stdout/stderr as they arrive), if wanted.
    pub output: Option<&'a UnboundedSender<String>>,
    /// Every byte a tool prints, as it comes and in order, past the live
    /// output's limit too: kept on disk while the call runs, so a crash's
    /// repair tells the model the true end of it.
    pub kept: Option<&'a (dyn Fn(&str) + Sync)>,
    /// `bash` runs this call in the sandbox (`config.sandbox`).
    pub sandboxed: bool,
    /// Plan mode: the sandbox lets the command write nothing of the
    /// user's ([`crate::safety::Sandbox::read_only`]).
    pub read_only: bool,
    /// An approved plan item's scope narrows what the sandbox lets this
    /// command write ([`crate::safety::Sandbox::narrowed`]).
    pub narrowed: Option<&'a crate::safety::Narrowing>,
    /// The call being run, as the engine's events name it (its thread and
    /// id), for whatever shows it elsewhere (the editor's terminal).
    pub call: Option<(u32, &'a str)>,
}

impl<'a> ToolEnv<'a> {
    /// An environment outside a turn: no live output, not sandboxed.
    pub fn new(
        workspace: &'a Workspace,
        config: &'a ToolConfig,
        cancel: &'a CancellationToken,
    ) -> Self {
        Self {
            workspace,
            config,
            cancel,
            output: None,
            kept: None,
            sandboxed: false,
            read_only: false,
            narrowed: None,
            call: None,
        }
    }
}

/// `text`, cut to 80 characters with an ellipsis: a summary line.
pub fn summary_line(text: &str) -> String {
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(79).collect();
        format!("{cut}…")
    } else {
        text.to_string()
    }
}

/// Caps `text` at `cap` bytes, keeping head and tail around a clear marker.
pub fn cap_output(text: &str, cap: usize) -> String {
    cap_with(text, cap, |_, dropped| {
        format!("[… {dropped} bytes truncated …]")
    })
}

/// Caps `text` at `cap` bytes, keeping head and tail (never splitting a
/// character) around the line `marker(total bytes, bytes left out)` writes.
pub fn cap_with(text: &str, cap: usize, marker: impl FnOnce(usize, usize) -> String) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let keep = cap / 2;
    let head_end = text.floor_char_boundary(keep);
    let tail_start = text.ceil_char_boundary(text.len().saturating_sub(keep).max(head_end));
    format!(
        "{}\n{}\n{}",
        &text[..head_end],
        marker(text.len(), tail_start - head_end),
        &text[tail_start..]
    )
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
}
