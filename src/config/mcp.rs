//! A server's settings, in the shape users already have from Codex
//! (`[mcp_servers.NAME]` in the TOML config): a stdio server's `command`,
//! `args`, `env` and `cwd`, or a Streamable HTTP server's `url`, `headers`
//! and `bearer_token_env_var`; `enabled`, `enabled_tools` /
//! `disabled_tools`, `startup_timeout_sec` and `tool_timeout_sec`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::approvals::{Approvals, Fingerprint};

/// Share of the context window the MCP tools' definitions may take before
/// only `mcp_search` is sent (`mcp_tool_share`).
pub const BUDGET_SHARE: f64 = 0.10;

/// The MCP part of a session's settings.
#[derive(Clone, Debug)]
pub struct McpSettings {
    /// The servers: the user's (`[mcp_servers.NAME]`) and the project's
    /// (`.mcp.json`).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// The project's servers, each with its entry as written (its
    /// fingerprint, which the user's approval must match, and how it is
    /// shown when asked).
    pub project: BTreeMap<String, ProjectEntry>,
    /// Where approvals of project servers are remembered; without it none
    /// is approved (they wait).
    pub approvals: Option<Approvals>,
    /// Share of the context window MCP tool definitions may take.
    pub budget_share: f64,
    /// What could not be read of the project's servers: told as failed
    /// servers (by name, or by the file's).
    pub problems: Vec<(String, String)>,
    /// The first turn is a task given at start (`-p`, `waypoint "TASK"`):
    /// before its first request it waits for the servers still starting
    /// (each at most its startup timeout).
    pub wait_at_start: bool,
}

impl McpSettings {
    /// Whether the server `name` may run in `workspace`: a user's server
    /// may; a project's once approved as its entry is written now.
    pub fn approved(&self, workspace: &Path, name: &str) -> bool {
        match self.project.get(name) {
            None => true,
            Some(entry) => self
                .approvals
                .as_ref()
                .is_some_and(|a| a.approved(workspace, name, &entry.print)),
        }
    }

    /// The project's servers that wait for approval, with their
    /// fingerprints.
    pub fn waiting(&self, workspace: &Path) -> BTreeMap<&String, &Fingerprint> {
        self.project
            .iter()
            .filter(|(name, _)| !self.approved(workspace, name))
            .map(|(name, entry)| (name, &entry.print))
            .collect()
    }

    /// How the server `name` is shown where the user is asked about it or
    /// sees it listed: a project's entry as written (env and headers
    /// included, nothing expanded), a user's server by its command or URL.
    pub fn shown(&self, name: &str, config: &McpServerConfig) -> String {
        match self.project.get(name) {
            Some(entry) => entry.shown.clone(),
            None => match (&config.command, &config.url) {
                (None, Some(url)) => format!("{url} (Streamable HTTP)"),
                (None, None) => "(no command)".to_string(),
                (Some(command), _) => std::iter::once(command.as_str())
                    .chain(config.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
            },
        }
    }
}

/// A project's server as its `.mcp.json` entry is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectEntry {
    /// The SHA-256 of the entry's canonical form, which an approval keeps.
    pub print: Fingerprint,
    /// The entry in one line, nothing expanded: command and args (or URL),
    /// cwd, env and headers as written.
    pub shown: String,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            servers: BTreeMap::new(),
            project: BTreeMap::new(),
            approvals: None,
            budget_share: BUDGET_SHARE,
            problems: Vec::new(),
            wait_at_start: false,
        }
    }
}

/// How long a server has to answer `initialize` and `tools/list` before it
/// is shown as slow (it keeps starting).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one tool call may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// A local server: the program started (resolved outside the
    /// workspace).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it (`${VAR}` expanded; shown at approval).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The folder it starts in (default: outside the workspace).
    pub cwd: Option<PathBuf>,
    /// A remote server: its streamable HTTP address.
    pub url: Option<String>,
    /// Headers sent to it (`${VAR}` expanded; shown at approval).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The variable holding a bearer token sent as `Authorization`.
    pub bearer_token_env_var: Option<String>,
    /// `false`: configured but not started.
    pub enabled: Option<bool>,
    /// Only these of its tools are offered.
    pub enabled_tools: Option<Vec<String>>,
    /// These of its tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Seconds it may take to start.
    pub startup_timeout_sec: Option<f64>,
    /// Seconds a call of its tools may take.
    pub tool_timeout_sec: Option<f64>,
}

impl McpServerConfig {
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// Whether the server's tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    pub fn startup_timeout(&self) -> Duration {
        seconds(self.startup_timeout_sec).unwrap_or(STARTUP_TIMEOUT)
    }

    pub fn tool_timeout(&self) -> Duration {
        seconds(self.tool_timeout_sec).unwrap_or(TOOL_TIMEOUT)
    }
}

/// A positive, finite number of seconds.
fn seconds(s: Option<f64>) -> Option<Duration> {
    s.filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_secs_f64(s.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codex_shape_reads_and_unknown_keys_are_refused() {
        let servers: BTreeMap<String, McpServerConfig> = toml::from_str(
            r#"
            [everything]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-everything"]
            env = { DEBUG = "1" }
            enabled_tools = ["echo", "get-sum"]
            tool_timeout_sec = 5

            [docs]
            url = "https://example.com/mcp"
            bearer_token_env_var = "DOCS_TOKEN"
            enabled = false
            "#,
        )
        .unwrap();
        let e = &servers["everything"];
        assert!(e.is_enabled() && e.offers("echo") && !e.offers("printEnv"));
        assert_eq!(e.tool_timeout(), Duration::from_secs(5));
        assert_eq!(e.startup_timeout(), STARTUP_TIMEOUT);
        assert!(!servers["docs"].is_enabled());
        let bad = toml::from_str::<BTreeMap<String, McpServerConfig>>("[x]\ncomand = \"a\"\n");
        assert!(bad.unwrap_err().to_string().contains("comand"));
    }
}
