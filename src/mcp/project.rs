//! A project's own servers: `.mcp.json` at the workspace's root, in Claude
//! Code's shape (`{"mcpServers": {NAME: {type, command, args, env, url,
//! headers}}}`, `${VAR}` and `${VAR:-default}` expanded), and the user's
//! approvals of them. Invariants: the file is read through the workspace's
//! folder fd (a symlink out of the workspace, a FIFO or a huge file is
//! refused, never followed or waited on); a project server runs only once
//! the user approved it for this project *as it is written now* (the
//! SHA-256 of its entry's canonical form: any changed field, one header or
//! env value, and it is asked for again); approvals live in the user's
//! data folder, never in the repository; a secret (a variable named like
//! an API key, token, secret or password, or one holding the API key
//! Waypoint uses) is never expanded into a project's entry: the entry is
//! refused, named in the problems, and its server does not start; what
//! the user is asked shows the entry as written, env and headers included.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::McpServerConfig;
pub use crate::config::Approvals;
use crate::config::{Fingerprint, ProjectEntry};

/// The project file's name, at the workspace's root.
pub const FILE: &str = ".mcp.json";

/// Bytes of `.mcp.json` read, at most.
const MAX_BYTES: usize = 1 << 20;

/// What `.mcp.json` declares: the servers it could read, and one line for
/// each it could not.
#[derive(Debug, Default)]
pub struct Project {
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Each server's entry as written: its fingerprint and how it is shown.
    pub entries: BTreeMap<String, ProjectEntry>,
    pub problems: Vec<String>,
}

/// Reads the workspace's `.mcp.json` (none: no servers), with `env` for
/// the `${VAR}` expansions (never of a secret's name).
pub fn read(workspace: &Path, env: &dyn Fn(&str) -> Option<String>) -> Project {
    read_keeping(workspace, env, &[])
}

/// [`read`], refusing too any expansion that holds one of the `kept`
/// values (the API key Waypoint uses).
fn read_keeping(
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    kept: &[String],
) -> Project {
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
        // Read as written first (its shape, and what the user is shown),
        // then expanded.
        let read = server(entry, &|s| Ok(s.to_string())).and_then(|written| {
            let config = server(entry, &|s| expand_project(s, env, kept))?;
            Ok((written, config))
        });
        match read {
            Ok((written, config)) => {
                let shown = show(&written);
                let print = Fingerprint::of(entry);
                project
                    .entries
                    .insert(name.clone(), ProjectEntry { print, shown });
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

/// Why an entry of a project's file was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("not an object")]
    NotAnObject,
    /// A field (`env.NAME` for one of a map's) that must be a string.
    #[error("`{0}` is not a string")]
    NotAString(String),
    #[error("`{0}` is not an object")]
    FieldNotAnObject(String),
    #[error("`args` holds something not a string")]
    ArgNotAString,
    #[error("`args` is not a list")]
    ArgsNotAList,
    #[error(
        "the legacy SSE transport (`\"type\": \"sse\"`) is not supported: use its Streamable HTTP address with `\"type\": \"http\"`"
    )]
    Sse,
    #[error("unknown `type` `{0}`")]
    UnknownType(String),
    #[error("it needs a `command` (stdio) or a `url` (http), not both")]
    CommandOrUrl,
    #[error(transparent)]
    Expand(#[from] ExpandError),
}

/// Why a `${VAR}` in a text was not expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("`{0}` has a `${{` that is not closed")]
    Unclosed(String),
    #[error("`${{{0}}}` is not set")]
    NotSet(String),
    /// A project's entry named a secret, or a variable holding the key.
    #[error(
        "`${{{var}}}` was not expanded: {why}, which a project's {file} may not send anywhere (the server is not started; declare it in your own config file if it needs one)",
        file = FILE
    )]
    Refused { var: String, why: &'static str },
}

/// One entry of `mcpServers` as a server's settings, each text through
/// `expand`.
fn server(
    entry: &Value,
    expand: &dyn Fn(&str) -> Result<String, ExpandError>,
) -> Result<McpServerConfig, EntryError> {
    let Some(fields) = entry.as_object() else {
        return Err(EntryError::NotAnObject);
    };
    let text = |key: &str| -> Result<Option<String>, EntryError> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(expand(s)?)),
            Some(_) => Err(EntryError::NotAString(key.to_string())),
        }
    };
    let map = |key: &str| -> Result<BTreeMap<String, String>, EntryError> {
        let mut out = BTreeMap::new();
        match fields.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let v = v
                        .as_str()
                        .ok_or_else(|| EntryError::NotAString(format!("{key}.{k}")))?;
                    out.insert(k.clone(), expand(v)?);
                }
            }
            Some(_) => return Err(EntryError::FieldNotAnObject(key.to_string())),
        }
        Ok(out)
    };
    let mut args = Vec::new();
    match fields.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let item = item.as_str().ok_or(EntryError::ArgNotAString)?;
                args.push(expand(item)?);
            }
        }
        Some(_) => return Err(EntryError::ArgsNotAList),
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
        (Some("sse"), ..) => Err(EntryError::Sse),
        (None | Some("stdio"), Some(_), None) | (None | Some("http"), None, Some(_)) => Ok(config),
        (Some(other), ..) if !matches!(other, "stdio" | "http") => {
            Err(EntryError::UnknownType(other.to_string()))
        }
        _ => Err(EntryError::CommandOrUrl),
    }
}

/// `text` with `${VAR}` and `${VAR:-default}` replaced from `env`; a
/// variable that is not set and has no default is an error.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    expand_with(text, &|var| Ok(env(var)))
}

/// Name endings (upper-cased) of variables that hold secrets.
const SECRET_ENDINGS: &[&str] = &[
    "_API_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
    "_ACCESS_KEY",
    "_SECRET_KEY",
    "_PRIVATE_KEY",
    "_CREDENTIALS",
];

/// Whole names (upper-cased) of variables that hold secrets.
const SECRET_NAMES: &[&str] = &["API_KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"];

/// Whether a project's entry may not name the variable `var`: the provider
/// keys Waypoint keeps (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, any
/// `*_API_KEY`), and anything named like a token, secret or password.
pub fn is_secret_name(var: &str) -> bool {
    let name = var.trim().to_ascii_uppercase();
    crate::secrets::is_secret(&name)
        || SECRET_NAMES.contains(&name.as_str())
        || SECRET_ENDINGS.iter().any(|end| name.ends_with(end))
}

/// The shortest kept value looked for inside an expansion (shorter ones
/// are no real key, and would match by chance).
const MIN_KEPT: usize = 8;

/// [`expand`] for a project's entry: a variable named like a secret
/// ([`is_secret_name`]), or whose value holds a `kept` one, is never
/// expanded (default or not): the entry is refused with why.
fn expand_project(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    kept: &[String],
) -> Result<String, ExpandError> {
    let refused = |var: &str, why: &'static str| ExpandError::Refused {
        var: var.to_string(),
        why,
    };
    expand_with(text, &|var| {
        if is_secret_name(var) {
            return Err(refused(var, "it names a secret"));
        }
        let value = env(var);
        let holds_kept = value.as_deref().is_some_and(|v| {
            kept.iter()
                .any(|k| k.len() >= MIN_KEPT && v.contains(k.as_str()))
        });
        if holds_kept {
            return Err(refused(var, "it holds the API key Waypoint uses"));
        }
        Ok(value)
    })
}

/// `text` with each `${VAR}` and `${VAR:-default}` replaced by what
/// `lookup` gives for `VAR` (it may refuse the variable).
fn expand_with(
    text: &str,
    lookup: &dyn Fn(&str) -> Result<Option<String>, ExpandError>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed(text.to_string()));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        match (lookup(var)?.filter(|v| !v.is_empty()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ExpandError::NotSet(var.to_string())),
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
    // The key Waypoint uses, wherever it came from, is never sent to a
    // project's server, whatever the variable that holds it is called.
    let kept: Vec<String> = s.api_key.iter().map(|k| k.value.clone()).collect();
    let project = read_keeping(workspace, env, &kept);
    let mut servers = s.mcp_servers.clone();
    let mut problems = project.problems;
    let mut entries = BTreeMap::new();
    for (name, config) in project.servers {
        match servers.entry(name) {
            // Told under the file's name: the config's server of that name
            // runs, and must not look failed.
            std::collections::btree_map::Entry::Occupied(taken) => problems.push(format!(
                "server `{}` is in the config file too; the config file's is used",
                taken.key()
            )),
            std::collections::btree_map::Entry::Vacant(free) => {
                if let Some(entry) = project.entries.get(free.key()) {
                    entries.insert(free.key().clone(), entry.clone());
                }
                free.insert(config);
            }
        }
    }
    crate::config::McpSettings {
        servers,
        project: entries,
        approvals: crate::config::Approvals::from_env(env),
        budget_share: s.mcp_tool_share,
        // One entry for the file (a view keeps one state a name).
        problems: (!problems.is_empty())
            .then(|| (FILE.to_string(), problems.join("; ")))
            .into_iter()
            .collect(),
        // A driver with a task given at start says so.
        wait_at_start: false,
    }
}

/// A server's entry as written, in one line: its command and args (or
/// URL), then its cwd, env and headers, values quoted, nothing expanded.
fn show(written: &McpServerConfig) -> String {
    let mut out = match (&written.command, &written.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(written.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => format!("{url} (Streamable HTTP)"),
        (None, None) => String::new(),
    };
    if let Some(cwd) = &written.cwd {
        out.push_str(&format!(" · cwd {:?}", cwd.to_string_lossy()));
    }
    let pairs = |map: &BTreeMap<String, String>, sep: &str| {
        map.iter()
            .map(|(k, v)| format!("{k}{sep}{v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !written.env.is_empty() {
        out.push_str(&format!(" · env {}", pairs(&written.env, "=")));
    }
    if !written.headers.is_empty() {
        out.push_str(&format!(" · headers {}", pairs(&written.headers, ": ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key Waypoint uses in these tests.
    const KEY: &str = "sk-ant-api03-kept-key";

    fn env(var: &str) -> Option<String> {
        match var {
            "HOME" => Some("/home/me".into()),
            "TOKEN" | "GH_TOKEN" => Some("t0k".into()),
            "REGION" => Some("eu".into()),
            "ANTHROPIC_API_KEY" | "SAME_AS_KEY" => Some(KEY.into()),
            _ => None,
        }
    }

    fn write(dir: &Path, text: &str) {
        std::fs::write(dir.join(FILE), text).unwrap();
    }

    #[test]
    fn variables_are_expanded_with_defaults_and_a_missing_one_is_named() {
        assert_eq!(expand("${HOME}/bin", &env).unwrap(), "/home/me/bin");
        assert_eq!(expand("a${NOPE:-b}c", &env).unwrap(), "abc");
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer t0k");
        assert_eq!(expand("$HOME {x}", &env).unwrap(), "$HOME {x}");
        let err = expand("${NOPE}", &env).unwrap_err().to_string();
        assert!(err.contains("NOPE"));
        assert!(expand("${HOME", &env).is_err());
    }

    #[test]
    fn claude_codes_shape_is_read_and_bad_entries_are_named() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            r#"{"mcpServers": {
                "local": {"command": "${HOME}/bin/srv", "args": ["--x", "${NOPE:-1}"], "env": {"K": "${REGION}"}},
                "web": {"type": "http", "url": "https://h/mcp", "headers": {"X-Region": "in-${REGION}"}},
                "old": {"type": "sse", "url": "https://h/sse"},
                "broken": {"command": "x", "env": {"K": "${MISSING}"}},
                "neither": {}
            }}"#,
        );
        let p = read(dir.path(), &env);
        let local = &p.servers["local"];
        assert_eq!(local.command.as_deref(), Some("/home/me/bin/srv"));
        assert_eq!(local.args, ["--x", "1"]);
        assert_eq!(local.env["K"], "eu");
        assert!(p.entries.contains_key("local"));
        assert_eq!(p.servers["web"].headers["X-Region"], "in-eu");
        assert_eq!(p.servers.len(), 2, "{:?}", p.servers.keys());
        let problems = p.problems.join("\n");
        for name in ["`old`", "`broken`", "MISSING", "`neither`"] {
            assert!(problems.contains(name), "{problems}");
        }
    }

    #[test]
    fn a_secret_is_never_expanded_into_a_projects_entry() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            r#"{"mcpServers": {
                "header": {"type": "http", "url": "https://h/mcp", "headers": {"X-Client": "${ANTHROPIC_API_KEY:-anon}"}},
                "env": {"command": "srv", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}"}},
                "arg": {"command": "srv", "args": ["--key=${openai_api_key:-none}"]},
                "url": {"url": "https://h/mcp?p=${DB_PASSWORD:-x}&s=${ ANY_SECRET }"},
                "cwd": {"command": "srv", "cwd": "/srv/${TOKEN}"},
                "alias": {"command": "srv", "env": {"K": "${SAME_AS_KEY}"}},
                "fine": {"command": "srv", "env": {"R": "${REGION}"}}
            }}"#,
        );
        let kept = [KEY.to_string()];
        let p = read_keeping(dir.path(), &env, &kept);
        // Only the entry that names no secret is read; the others are
        // refused (their servers never start), each said in one line.
        assert_eq!(p.servers.keys().collect::<Vec<_>>(), ["fine"]);
        assert_eq!(p.problems.len(), 6, "{:?}", p.problems);
        for (server, var) in [
            ("header", "${ANTHROPIC_API_KEY}"),
            ("env", "${GH_TOKEN}"),
            ("arg", "${openai_api_key}"),
            ("url", "${DB_PASSWORD}"),
            ("cwd", "${TOKEN}"),
            ("alias", "${SAME_AS_KEY}"),
        ] {
            let line = p
                .problems
                .iter()
                .find(|m| m.contains(&format!("server `{server}` skipped")))
                .unwrap_or_else(|| panic!("{server}: {:?}", p.problems));
            assert!(line.contains(&format!("{var}` was not expanded")), "{line}");
            assert!(!line.contains('\n') && !line.contains(KEY), "{line}");
        }
        let all = format!("{p:?}");
        assert!(!all.contains(KEY) && !all.contains("t0k"), "{all}");
        // The names: the provider keys and anything like a token, secret
        // or password; not ordinary variables.
        for var in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "gemini_api_key",
            "GITHUB_TOKEN",
            "TOKEN",
            "CLIENT_SECRET",
            "PGPASSWORD_x_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(is_secret_name(var), "{var}");
        }
        for var in ["HOME", "PATH", "REGION", "TOKENIZER", "KEYBOARD"] {
            assert!(!is_secret_name(var), "{var}");
        }
        // The user's own expansion (not a project's) is unchanged.
        assert_eq!(expand("${ANTHROPIC_API_KEY}", &env).unwrap(), KEY);
    }

    #[test]
    fn the_approval_shows_env_and_headers_as_written() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            r#"{"mcpServers": {
                "web": {"type": "http", "url": "https://h/${REGION}/mcp", "headers": {"X-Client": "${CLIENT_ID:-anon}", "X-Region": "${REGION}"}},
                "local": {"command": "${HOME}/bin/srv", "args": ["-v"], "cwd": "tools", "env": {"MODE": "${REGION}", "LEVEL": "3"}}
            }}"#,
        );
        let p = read(dir.path(), &env);
        assert_eq!(
            p.entries["web"].shown,
            r#"https://h/${REGION}/mcp (Streamable HTTP) · headers X-Client: "${CLIENT_ID:-anon}", X-Region: "${REGION}""#
        );
        assert_eq!(
            p.entries["local"].shown,
            r#"${HOME}/bin/srv -v · cwd "tools" · env LEVEL="3", MODE="${REGION}""#
        );
        // Every view of a waiting server shows that line.
        let settings = crate::config::McpSettings {
            servers: p.servers.clone(),
            project: p.entries.clone(),
            ..crate::config::McpSettings::default()
        };
        assert_eq!(
            settings.shown("web", &p.servers["web"]),
            p.entries["web"].shown
        );
    }

    #[test]
    fn any_changed_field_of_an_approved_entry_is_asked_again() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let entry = serde_json::json!({
            "command": "srv", "args": ["-v"], "cwd": "tools", "env": {"A": "1", "B": "2"},
        });
        let web = serde_json::json!({
            "type": "http", "url": "https://h/mcp", "headers": {"X-A": "1", "X-B": "2"},
        });
        let file = |local: &Value, web: &Value| {
            serde_json::json!({"mcpServers": {"local": local, "web": web}}).to_string()
        };
        write(dir.path(), &file(&entry, &web));
        let mut settings = crate::config::McpSettings {
            approvals: Some(Approvals::new(home.path().join("mcp-approved.json"))),
            ..crate::config::McpSettings::default()
        };
        let mut load = |text: &str| {
            write(dir.path(), text);
            settings.project = read(dir.path(), &env).entries;
            settings.clone()
        };
        let now = load(&file(&entry, &web));
        assert_eq!(now.waiting(dir.path()).len(), 2);
        let approvals = now.approvals.clone().unwrap();
        approvals
            .approve(dir.path(), now.waiting(dir.path()))
            .unwrap();
        assert!(load(&file(&entry, &web)).waiting(dir.path()).is_empty());
        // The same entries with their keys in another order: still approved.
        let reordered = r#"{"mcpServers": {"web": {"headers": {"X-B": "2", "X-A": "1"}, "url": "https://h/mcp", "type": "http"},
            "local": {"env": {"B": "2", "A": "1"}, "cwd": "tools", "args": ["-v"], "command": "srv"}}}"#;
        assert!(load(reordered).waiting(dir.path()).is_empty());
        let changes: [(&str, &str, Value); 7] = [
            ("local", "/command", "srv2".into()),
            ("local", "/args/0", "-vv".into()),
            ("local", "/cwd", "tool".into()),
            ("local", "/env/B", "3".into()),
            ("web", "/url", "https://h/mcp2".into()),
            ("web", "/headers/X-B", "3".into()),
            ("web", "/headers/X-A", "${X_A:-1}".into()),
        ];
        for (server, pointer, value) in changes {
            let (mut local, mut remote) = (entry.clone(), web.clone());
            let target = if server == "local" {
                &mut local
            } else {
                &mut remote
            };
            *target.pointer_mut(pointer).unwrap() = value;
            let now = load(&file(&local, &remote));
            let waiting: Vec<&String> = now.waiting(dir.path()).into_keys().collect();
            assert_eq!(
                waiting,
                [server],
                "{server}{pointer} changed, not asked again"
            );
        }
        // One added header, one added env value: asked again too.
        let mut more = web.clone();
        more["headers"]["X-C"] = "3".into();
        assert_eq!(load(&file(&entry, &more)).waiting(dir.path()).len(), 1);
        let mut more = entry;
        more["env"]["C"] = "3".into();
        assert_eq!(load(&file(&more, &web)).waiting(dir.path()).len(), 1);
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
        let (cwd, mode) = (rustix::fs::CWD, rustix::fs::Mode::from_bits_retain(0o600));
        let fifo = dir.path().join(FILE);
        rustix::fs::mknodat(cwd, &fifo, rustix::fs::FileType::Fifo, mode, 0).unwrap();
        let p = read(dir.path(), &env);
        assert!(p.problems.iter().any(|m| m.contains("not read")), "{p:?}");
    }
}
