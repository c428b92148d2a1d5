//! A project's own servers: `.mcp.json` at the workspace's root, in Claude
//! Code's shape (`{"mcpServers": {NAME: {type, command, args, env, url,
//! headers}}}`, `${VAR}` and `${VAR:-default}` expanded), and the user's
//! approvals of them. Invariants: the file is read through the workspace's
//! folder fd (a symlink out of the workspace, a FIFO or a huge file is
//! refused, never followed or waited on); a project server runs only once
//! the user approved it for this project *as it is written now* (its entry
//! changed, it is asked for again); approvals live in the user's data
//! folder, never in the repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::McpServerConfig;

/// The project file's name, at the workspace's root.
pub const FILE: &str = ".mcp.json";

/// Bytes of `.mcp.json` read, at most.
const MAX_BYTES: usize = 1 << 20;

/// What `.mcp.json` declares: the servers it could read, and one line for
/// each it could not.
#[derive(Debug, Default)]
pub struct Project {
    pub servers: BTreeMap<String, McpServerConfig>,
    pub problems: Vec<String>,
}

/// Reads the workspace's `.mcp.json` (none: no servers), with `env` for
/// the `${VAR}` expansions.
pub fn read(workspace: &Path, env: &dyn Fn(&str) -> Option<String>) -> Project {
    let mut project = Project::default();
    let text = match open(workspace) {
        Ok(Some(text)) => text,
        Ok(None) => return project,
        Err(e) => {
            project.problems.push(format!("{FILE} was not read: {e}"));
            return project;
        }
    };
    let root: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            project
                .problems
                .push(format!("{FILE} is not valid JSON: {e}"));
            return project;
        }
    };
    let Some(servers) = root.get("mcpServers").and_then(Value::as_object) else {
        if root.get("mcpServers").is_some() {
            project
                .problems
                .push(format!("{FILE}: `mcpServers` is not an object"));
        }
        return project;
    };
    for (name, entry) in servers {
        match server(entry, env) {
            Ok(mut config) => {
                config.project = Some(fingerprint(entry));
                project.servers.insert(name.clone(), config);
            }
            Err(why) => project
                .problems
                .push(format!("{FILE}: server `{name}` skipped: {why}")),
        }
    }
    project
}

fn open(workspace: &Path) -> std::io::Result<Option<String>> {
    let root = crate::fsx::Root::new(workspace)?;
    let mut file = match root.open_file(Path::new(FILE)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let (bytes, cut) = crate::fsx::read_capped(&mut file, MAX_BYTES)?;
    if cut {
        return Err(std::io::Error::other(format!(
            "it is larger than {} KiB",
            MAX_BYTES / 1024
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| std::io::Error::other("it is not UTF-8"))
}

/// One entry of `mcpServers` as a server's settings.
fn server(entry: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<McpServerConfig, String> {
    let Some(fields) = entry.as_object() else {
        return Err("not an object".into());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand(s, env).map(Some),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    };
    let map = |key: &str| -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        match fields.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let v = v
                        .as_str()
                        .ok_or_else(|| format!("`{key}.{k}` is not a string"))?;
                    out.insert(k.clone(), expand(v, env)?);
                }
            }
            Some(_) => return Err(format!("`{key}` is not an object")),
        }
        Ok(out)
    };
    let mut args = Vec::new();
    match fields.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let item = item.as_str().ok_or("`args` holds something not a string")?;
                args.push(expand(item, env)?);
            }
        }
        Some(_) => return Err("`args` is not a list".into()),
    }
    let kind = text("type")?;
    let config = McpServerConfig {
        command: text("command")?,
        args,
        env: map("env")?,
        cwd: text("cwd")?.map(PathBuf::from),
        url: text("url")?,
        headers: map("headers")?,
        ..McpServerConfig::default()
    };
    match (kind.as_deref(), &config.command, &config.url) {
        (Some("sse"), ..) => {
            Err("the legacy SSE transport (`\"type\": \"sse\"`) is not supported: use its Streamable HTTP address with `\"type\": \"http\"`".into())
        }
        (None | Some("stdio"), Some(_), None) | (None | Some("http"), None, Some(_)) => Ok(config),
        (Some(other), ..) if !matches!(other, "stdio" | "http") => {
            Err(format!("unknown `type` `{other}`"))
        }
        _ => Err("it needs a `command` (stdio) or a `url` (http), not both".into()),
    }
}

/// `text` with `${VAR}` and `${VAR:-default}` replaced from `env`; a
/// variable that is not set and has no default is an error.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`{text}` has a `${{` that is not closed"));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        match (env(var).filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(format!("`${{{var}}}` is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A stable 64-bit FNV-1a of the entry as written (its keys sorted).
fn fingerprint(entry: &Value) -> u64 {
    let text = entry.to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// How a server starts, in one line (for an approval question).
pub fn describe(config: &McpServerConfig) -> String {
    match (&config.command, &config.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(config.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.clone(),
        (None, None) => String::new(),
    }
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
        const NAME: &str = "mcp-approved.json";
        if let Some(home) = env("WAYPOINT_HOME").filter(|h| !h.trim().is_empty()) {
            return Some(Self::new(PathBuf::from(home).join(NAME)));
        }
        directories::ProjectDirs::from("", "", "waypoint")
            .map(|d| Self::new(d.data_dir().join(NAME)))
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

    /// Whether the project server `name` of `workspace` was approved as
    /// `config` is now.
    pub fn approved(&self, workspace: &Path, name: &str, config: &McpServerConfig) -> bool {
        let Some(print) = config.project else {
            return true;
        };
        self.load()
            .get(&Self::key(workspace))
            .and_then(|servers| servers.get(name))
            .is_some_and(|p| *p == format!("{print:016x}"))
    }

    /// Remembers `servers` (project ones) as approved for `workspace`.
    pub fn approve<'a>(
        &self,
        workspace: &Path,
        servers: impl IntoIterator<Item = (&'a String, &'a McpServerConfig)>,
    ) -> std::io::Result<()> {
        let mut all = self.load();
        let project = all.entry(Self::key(workspace)).or_default();
        for (name, config) in servers {
            if let Some(print) = config.project {
                project.insert(name.clone(), format!("{print:016x}"));
            }
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "HOME" => Some("/home/me".into()),
            "TOKEN" => Some("t0k".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded_with_defaults_and_a_missing_one_is_named() {
        assert_eq!(expand("${HOME}/bin", &env).unwrap(), "/home/me/bin");
        assert_eq!(expand("a${NOPE:-b}c", &env).unwrap(), "abc");
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer t0k");
        assert_eq!(expand("$HOME {x}", &env).unwrap(), "$HOME {x}");
        assert!(expand("${NOPE}", &env).unwrap_err().contains("NOPE"));
        assert!(expand("${HOME", &env).is_err());
    }

    #[test]
    fn claude_codes_shape_is_read_and_bad_entries_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            r#"{"mcpServers": {
                "local": {"command": "${HOME}/bin/srv", "args": ["--x", "${NOPE:-1}"], "env": {"K": "${TOKEN}"}},
                "web": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "old": {"type": "sse", "url": "https://h/sse"},
                "broken": {"command": "x", "env": {"K": "${MISSING}"}},
                "neither": {}
            }}"#,
        )
        .unwrap();
        let p = read(dir.path(), &env);
        let local = &p.servers["local"];
        assert_eq!(local.command.as_deref(), Some("/home/me/bin/srv"));
        assert_eq!(local.args, ["--x", "1"]);
        assert_eq!(local.env["K"], "t0k");
        assert!(local.project.is_some());
        assert_eq!(p.servers["web"].headers["Authorization"], "Bearer t0k");
        assert_eq!(p.servers.len(), 2, "{:?}", p.servers.keys());
        let problems = p.problems.join("\n");
        for name in ["`old`", "`broken`", "MISSING", "`neither`"] {
            assert!(problems.contains(name), "{problems}");
        }
    }

    #[test]
    fn a_symlinked_or_fifo_project_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.json"), r#"{"mcpServers":{}}"#).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.json"), dir.path().join(FILE)).unwrap();
        let p = read(dir.path(), &env);
        assert!(p.problems.iter().any(|m| m.contains("not read")), "{p:?}");
        std::fs::remove_file(dir.path().join(FILE)).unwrap();
        let fifo = std::ffi::CString::new(dir.path().join(FILE).to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let p = read(dir.path(), &env);
        assert!(p.problems.iter().any(|m| m.contains("not read")), "{p:?}");
    }

    #[test]
    fn an_approval_holds_for_the_entry_as_it_was_approved() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let approvals = Approvals::new(home.path().join("a/mcp-approved.json"));
        let write = |command: &str| {
            std::fs::write(
                project.path().join(FILE),
                format!(r#"{{"mcpServers": {{"s": {{"command": "{command}"}}}}}}"#),
            )
            .unwrap();
            read(project.path(), &env).servers
        };
        let servers = write("good");
        assert!(!approvals.approved(project.path(), "s", &servers["s"]));
        approvals.approve(project.path(), &servers).unwrap();
        assert!(approvals.approved(project.path(), "s", &servers["s"]));
        // Another project, or the same name with another command: asked again.
        let other = tempfile::tempdir().unwrap();
        assert!(!approvals.approved(other.path(), "s", &servers["s"]));
        let changed = write("evil");
        assert!(!approvals.approved(project.path(), "s", &changed["s"]));
        // A user's own server needs no approval.
        assert!(approvals.approved(project.path(), "s", &McpServerConfig::default()));
    }
}
