//! A server's settings, in the shape users already have from Codex
//! (`[mcp_servers.NAME]` in the TOML config): a stdio server's `command`,
//! `args`, `env` and `cwd`, or a Streamable HTTP server's `url`, `headers`
//! and `bearer_token_env_var`; `enabled`, `enabled_tools` /
//! `disabled_tools`, `startup_timeout_sec` and `tool_timeout_sec`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// How long a server has to answer `initialize` and `tools/list` before it
/// is shown as slow (it keeps starting).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one tool call may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub bearer_token_env_var: Option<String>,
    pub enabled: Option<bool>,
    pub enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    /// Set for a project's server (`.mcp.json`): the fingerprint of its
    /// entry as written, which the user's approval must match.
    #[serde(skip)]
    pub project: Option<u64>,
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
