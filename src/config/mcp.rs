//! A server's settings, in the shape users already have from Codex
//! (`[mcp_servers.NAME]` in the TOML config): a stdio server's `command`,
//! `args`, `env` and `cwd`, or a Streamable HTTP server's `url`, `headers`
//! and `bearer_token_env_var`; `enabled`, `enabled_tools` /
//! `disabled_tools`, `startup_timeout_sec` and `tool_timeout_sec`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// Share of the context window the MCP tools' definitions may take before
/// only `mcp_search` is sent (`mcp_tool_share`).
pub const BUDGET_SHARE: f64 = 0.10;

/// The MCP part of a session's settings.
#[derive(Clone, Debug)]
pub struct McpSettings {
    /// The servers: the user's (`[mcp_servers.NAME]`) and the project's
    /// (`.mcp.json`).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// The project's servers, each with the fingerprint of its entry as
    /// written, which the user's approval must match.
    pub project: BTreeMap<String, u64>,
    /// Where approvals of project servers are remembered; without it none
    /// is approved (they wait).
    pub approvals: Option<Approvals>,
    /// Share of the context window MCP tool definitions may take.
    pub budget_share: f64,
    /// What could not be read of the project's servers: told as failed
    /// servers (by name, or by the file's).
    pub problems: Vec<(String, String)>,
}

impl McpSettings {
    /// Whether the server `name` may run in `workspace`: a user's server
    /// may; a project's once approved as its entry is written now.
    pub fn approved(&self, workspace: &Path, name: &str) -> bool {
        match self.project.get(name) {
            None => true,
            Some(print) => self
                .approvals
                .as_ref()
                .is_some_and(|a| a.approved(workspace, name, *print)),
        }
    }

    /// The project's servers that wait for approval, with their
    /// fingerprints.
    pub fn waiting(&self, workspace: &Path) -> BTreeMap<&String, &u64> {
        self.project
            .iter()
            .filter(|(name, _)| !self.approved(workspace, name))
            .collect()
    }
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            servers: BTreeMap::new(),
            project: BTreeMap::new(),
            approvals: None,
            budget_share: BUDGET_SHARE,
            problems: Vec::new(),
        }
    }
}

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

/// A stable 64-bit FNV-1a of `text`: what an approval remembers of what
/// it approved (a project's MCP server entry, its hooks block).
pub fn fingerprint(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The user's approvals of project servers: for each project folder, each
/// approved server's name and the fingerprint of its entry then.
#[derive(Clone, Debug)]
pub struct Approvals {
    path: PathBuf,
}

type Approved = BTreeMap<String, BTreeMap<String, String>>;

impl Approvals {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `$WAYPOINT_HOME/mcp-approved.json`, else the platform data
    /// folder's (`~/.local/share/waypoint/mcp-approved.json` on Linux).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Self::from_env_named(env, "mcp-approved.json")
    }

    /// The approvals file `name` in the same folder as [`Self::from_env`]'s.
    pub fn from_env_named(env: impl Fn(&str) -> Option<String>, name: &str) -> Option<Self> {
        if let Some(home) = env("WAYPOINT_HOME").filter(|h| !h.trim().is_empty()) {
            return Some(Self::new(PathBuf::from(home).join(name)));
        }
        directories::ProjectDirs::from("", "", "waypoint")
            .map(|d| Self::new(d.data_dir().join(name)))
    }

    fn load(&self) -> Approved {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn key(workspace: &Path) -> String {
        std::fs::canonicalize(workspace)
            .unwrap_or_else(|_| workspace.to_path_buf())
            .to_string_lossy()
            .into_owned()
    }

    /// Whether the project server `name` of `workspace` was approved with
    /// its entry as it is now (`print`).
    pub fn approved(&self, workspace: &Path, name: &str, print: u64) -> bool {
        self.load()
            .get(&Self::key(workspace))
            .and_then(|servers| servers.get(name))
            .is_some_and(|p| *p == format!("{print:016x}"))
    }

    /// Remembers the project servers `servers` (name, fingerprint) as
    /// approved for `workspace`.
    pub fn approve<'a>(
        &self,
        workspace: &Path,
        servers: impl IntoIterator<Item = (&'a String, &'a u64)>,
    ) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        // Two sessions approving at once: one read-modify-write at a time,
        // so neither approval is lost.
        let lock = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.path.with_extension("json.lock"))?;
        // SAFETY: flock on an fd we own; released when `lock` is closed.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut all = self.load();
        let project = all.entry(Self::key(workspace)).or_default();
        for (name, print) in servers {
            project.insert(name.clone(), format!("{print:016x}"));
        }
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.persist(&self.path).map_err(|e| e.error)?;
        drop(lock);
        Ok(())
    }
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

    #[test]
    fn an_approval_holds_for_the_entry_as_it_was_approved() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let approvals = Approvals::new(home.path().join("a/mcp-approved.json"));
        let servers = BTreeMap::from([("s".to_string(), 1u64)]);
        assert!(!approvals.approved(project.path(), "s", 1));
        approvals.approve(project.path(), &servers).unwrap();
        assert!(approvals.approved(project.path(), "s", 1));
        // Another project, or the same name with another entry: asked again.
        let other = tempfile::tempdir().unwrap();
        assert!(!approvals.approved(other.path(), "s", 1));
        assert!(!approvals.approved(project.path(), "s", 2));
        // Many approving at once (sessions in two terminals): none is lost.
        let names: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
        std::thread::scope(|scope| {
            for name in &names {
                let (approvals, project) = (approvals.clone(), project.path());
                scope.spawn(move || {
                    let one = BTreeMap::from([(name.clone(), 7u64)]);
                    approvals.approve(project, &one).unwrap();
                });
            }
        });
        for name in &names {
            assert!(approvals.approved(project.path(), name, 7), "{name} lost");
        }
        assert!(approvals.approved(project.path(), "s", 1));
    }
}
