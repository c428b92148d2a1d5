//! What the engine says of the MCP servers, and what the user asks of
//! them: plain data, like every event and op.

use serde::{Deserialize, Serialize};

/// Where an MCP server is.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpStatus {
    /// It is starting.
    Starting,
    /// Past its startup timeout and still starting: it attaches when ready.
    Slow {
        /// How long it had been starting then, in milliseconds.
        after_ms: u64,
    },
    /// Initialized, with this many tools offered, whose definitions cost
    /// about this many tokens in every request.
    Ready {
        /// How many tools it offers.
        tools: usize,
        /// About how many tokens their definitions cost in every request.
        schema_tokens: u64,
    },
    /// It did not start (or stopped): why, and the tail of its stderr.
    Failed {
        /// Why, in words.
        error: String,
        /// The tail of its stderr (may be empty).
        stderr: String,
    },
    /// Turned off for this session (`/mcp disable`), or `enabled = false`.
    Disabled,
    /// A project's server (`.mcp.json`) that is not started until the user
    /// approves it for this project (`/mcp approve`, `waypoint mcp
    /// approve`): its entry as written, in one line (command and args or
    /// URL, cwd, env and headers, nothing expanded), which the user
    /// approves.
    NeedsApproval {
        /// Its entry in one line, as the user approves it.
        command: String,
    },
}

/// A task given at start waits, before its first request, for the MCP
/// servers still starting (each at most its startup timeout; the user may
/// skip the wait, `McpAction::SkipWait`), then starts.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpWait {
    /// Waiting for these servers.
    Waiting {
        /// The servers still starting.
        names: Vec<String>,
    },
    /// The wait is over (`skipped` by the user): the task starts without
    /// those that `failed` and those still `starting` (their tools join
    /// when they are ready).
    Over {
        /// The user skipped the wait.
        skipped: bool,
        /// The servers that did not start.
        failed: Vec<String>,
        /// The servers still starting (their tools join when ready).
        starting: Vec<String>,
    },
}

/// What the user asks of the MCP servers.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum McpAction {
    /// Approve this project's `.mcp.json` servers (remembered for the
    /// project, as they are now) and start them.
    Approve,
    /// Stop the server `name` and start it again.
    Reconnect {
        /// The server's name, as the settings name it.
        name: String,
    },
    /// Start the server `name` (turned off, or failed).
    Enable {
        /// The server's name, as the settings name it.
        name: String,
    },
    /// Stop the server `name`; its tools go at the next turn.
    Disable {
        /// The server's name, as the settings name it.
        name: String,
    },
    /// Stop waiting for the servers still starting (`McpWait`): the task
    /// given at start begins without them; their tools join when ready.
    SkipWait,
}
