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
pub use crate::config::Approvals;

/// The project file's name, at the workspace's root.
pub const FILE: &str = ".mcp.json";

/// Bytes of `.mcp.json` read, at most.
const MAX_BYTES: usize = 1 << 20;

/// What `.mcp.json` declares: the servers it could read, and one line for
/// each it could not.
#[derive(Debug, Default)]
pub struct Project {
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Each server's fingerprint of its entry as written.
    pub prints: BTreeMap<String, u64>,
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
            Ok(config) => {
                project.prints.insert(name.clone(), fingerprint(entry));
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
    crate::fsx::read_text(&root, Path::new(FILE), MAX_BYTES)
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

/// The MCP servers of a session in `workspace`: the config file's, and
/// the project's `.mcp.json` ones (a name the config has keeps the
/// config's), which wait for the user's approval; what could not be read
/// of the project's file is told as a failed server.
pub fn settings(
    s: &crate::config::Settings,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> crate::config::McpSettings {
    let project = read(workspace, env);
    let mut servers = s.mcp_servers.clone();
    let mut problems = project.problems;
    let mut prints = BTreeMap::new();
    for (name, config) in project.servers {
        match servers.entry(name) {
            // Told under the file's name: the config's server of that name
            // runs, and must not look failed.
            std::collections::btree_map::Entry::Occupied(taken) => problems.push(format!(
                "server `{}` is in the config file too; the config file's is used",
                taken.key()
            )),
            std::collections::btree_map::Entry::Vacant(free) => {
                if let Some(print) = project.prints.get(free.key()) {
                    prints.insert(free.key().clone(), *print);
                }
                free.insert(config);
            }
        }
    }
    crate::config::McpSettings {
        servers,
        project: prints,
        approvals: crate::config::Approvals::from_env(env),
        budget_share: s.mcp_tool_share,
        // One entry for the file (a view keeps one state a name).
        problems: (!problems.is_empty())
            .then(|| (FILE.to_string(), problems.join("; ")))
            .into_iter()
            .collect(),
    }
}

/// The fingerprint of the entry as written (its keys sorted).
fn fingerprint(entry: &Value) -> u64 {
    crate::config::fingerprint(&entry.to_string())
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
        assert!(p.prints.contains_key("local"));
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
}
