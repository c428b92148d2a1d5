//! `waypoint mcp add` and `remove`: the config file edited in place, its
//! comments and layout kept (toml_edit). Invariants: the file is written
//! only if the result still reads as a valid config; it is replaced
//! atomically (a crash leaves the old file or the new, never half of one);
//! a name that is taken is refused, not overwritten.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use crate::cli::McpAction;

/// Why `waypoint mcp add` or `remove` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid TOML, so it was not changed: {source}", .path.display())]
    NotToml {
        path: PathBuf,
        source: toml_edit::TomlError,
    },
    #[error("the edit would make {} invalid, so it was not made: {source}", .path.display())]
    WouldBeInvalid {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An action that is no edit (`Check`, `Approve`, …) or no add.
    #[error("not an {0}")]
    NotAn(&'static str),
    #[error("`mcp_servers` in the config file is not a table")]
    NotATable,
    #[error("`{pair}` is not KEY=VALUE ({flag})")]
    NotAPair { pair: String, flag: &'static str },
    #[error("`{0}` is not a usable server name")]
    BadName(String),
    #[error("--env and --cwd are for a stdio server (a command), not a --url")]
    StdioOptionsWithUrl,
    #[error("give a command (after --) or a --url, not both")]
    CommandAndUrl,
    #[error(
        "give the server's command after `--` (waypoint mcp add {0} -- npx -y PACKAGE) or its --url"
    )]
    NoCommandNorUrl(String),
    #[error("there is a server named {0} already: `waypoint mcp remove {0}` first")]
    Taken(String),
    #[error("there is no server named {0} in the config file")]
    NoSuchServer(String),
}

/// Does `action` (`Add` or `Remove`) on the config file at `path`; says
/// what was done.
pub fn apply(path: &Path, action: &McpAction) -> Result<String, EditError> {
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            let path = path.to_path_buf();
            return Err(EditError::Read { path, source });
        }
    };
    let mut doc: DocumentMut = text.parse().map_err(|source| EditError::NotToml {
        path: path.to_path_buf(),
        source,
    })?;
    let done = match action {
        McpAction::Add { name, .. } => {
            add(&mut doc, action)?;
            format!(
                "Added the MCP server {name} to {shown}. Check it with `waypoint mcp check {name}`."
            )
        }
        McpAction::Remove { name } => {
            remove(&mut doc, name)?;
            format!("Removed the MCP server {name} from {shown}.")
        }
        _ => return Err(EditError::NotAn("edit")),
    };
    let new = doc.to_string();
    // The result must still be a config Waypoint reads.
    toml::from_str::<crate::config::Layer>(&new).map_err(|source| EditError::WouldBeInvalid {
        path: path.to_path_buf(),
        source,
    })?;
    write(path, &new).map_err(|source| EditError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(done)
}

fn servers(doc: &mut DocumentMut) -> Result<&mut Table, EditError> {
    let item = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        // `[mcp_servers.NAME]` headers only, no empty `[mcp_servers]`.
        t.set_implicit(true);
        Item::Table(t)
    });
    item.as_table_mut().ok_or(EditError::NotATable)
}

/// `KEY=VALUE` pairs as an inline table.
fn pairs(list: &[String], flag: &'static str) -> Result<InlineTable, EditError> {
    let mut table = InlineTable::new();
    for pair in list {
        let Some((k, v)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            let pair = pair.clone();
            return Err(EditError::NotAPair { pair, flag });
        };
        table.insert(k, v.into());
    }
    Ok(table)
}

fn add(doc: &mut DocumentMut, action: &McpAction) -> Result<(), EditError> {
    let McpAction::Add {
        name,
        env,
        cwd,
        url,
        headers,
        bearer_token_env_var,
        command,
    } = action
    else {
        return Err(EditError::NotAn("add"));
    };
    if name.is_empty() || name.chars().any(|c| c.is_control()) {
        return Err(EditError::BadName(name.clone()));
    }
    let mut table = Table::new();
    match (command.split_first(), url) {
        (Some((program, args)), None) => {
            table["command"] = value(program.as_str());
            if !args.is_empty() {
                table["args"] = value(args.iter().map(String::as_str).collect::<Array>());
            }
            if !env.is_empty() {
                table["env"] = value(pairs(env, "--env")?);
            }
            if let Some(cwd) = cwd {
                table["cwd"] = value(cwd.as_str());
            }
        }
        (None, Some(url)) => {
            if !env.is_empty() || cwd.is_some() {
                return Err(EditError::StdioOptionsWithUrl);
            }
            table["url"] = value(url.as_str());
            if !headers.is_empty() {
                table["headers"] = value(pairs(headers, "--header")?);
            }
            if let Some(var) = bearer_token_env_var {
                table["bearer_token_env_var"] = value(var.as_str());
            }
        }
        (Some(_), Some(_)) => return Err(EditError::CommandAndUrl),
        (None, None) => return Err(EditError::NoCommandNorUrl(name.clone())),
    }
    // Comments at the end of the file stay above the new table, and a
    // blank line parts it from what comes before.
    let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
    if !trailing.trim().is_empty() {
        doc.set_trailing("");
        table
            .decor_mut()
            .set_prefix(format!("{}\n\n", trailing.trim_end()));
    } else if !doc.is_empty() {
        table.decor_mut().set_prefix("\n");
    }
    let servers = servers(doc)?;
    if servers.contains_key(name) {
        return Err(EditError::Taken(name.clone()));
    }
    servers.insert(name, Item::Table(table));
    Ok(())
}

fn remove(doc: &mut DocumentMut, name: &str) -> Result<(), EditError> {
    let servers = doc
        .get_mut("mcp_servers")
        .and_then(Item::as_table_mut)
        .filter(|t| t.contains_key(name));
    let Some(servers) = servers else {
        return Err(EditError::NoSuchServer(name.to_string()));
    };
    // Comments above the table (or the file's last ones, moved there by
    // `add`) are kept, at the end of the file.
    let kept = servers
        .remove(name)
        .and_then(|item| item.as_table().map(|t| t.decor().prefix().cloned()))
        .flatten()
        .and_then(|p| p.as_str().map(str::to_string))
        .filter(|p| !p.trim().is_empty());
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    if let Some(kept) = kept {
        let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
        doc.set_trailing(format!("{trailing}{}\n", kept.trim_end()));
    }
    Ok(())
}

/// Replaces `path` with `text` atomically, keeping the file's permissions.
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    if let Ok(meta) = std::fs::metadata(path) {
        file.as_file().set_permissions(meta.permissions())?;
    }
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_action(name: &str, command: &[&str], env: &[&str]) -> McpAction {
        McpAction::Add {
            name: name.into(),
            env: env.iter().map(|s| s.to_string()).collect(),
            cwd: None,
            url: None,
            headers: Vec::new(),
            bearer_token_env_var: None,
            command: command.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn add_and_remove_keep_the_rest_of_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my settings\nmodel = \"claude-sonnet-4-5\"  # the usual one\n\n[sandbox]\nnetwork = false\n";
        std::fs::write(&path, before).unwrap();
        let said = apply(
            &path,
            &add_action(
                "everything",
                &["npx", "-y", "@modelcontextprotocol/server-everything"],
                &["LOG=warn"],
            ),
        )
        .unwrap();
        assert!(said.contains("Added the MCP server everything"), "{said}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(before), "{text}");
        assert!(text.contains("[mcp_servers.everything]"), "{text}");
        assert!(!text.contains("[mcp_servers]\n"), "{text}");
        let layer: crate::config::Layer = toml::from_str(&text).unwrap();
        let e = &layer.mcp_servers["everything"];
        assert_eq!(e.command.as_deref(), Some("npx"));
        assert_eq!(e.args, ["-y", "@modelcontextprotocol/server-everything"]);
        assert_eq!(e.env["LOG"], "warn");

        let web = McpAction::Add {
            name: "docs".into(),
            env: Vec::new(),
            cwd: None,
            url: Some("https://mcp.example.com/mcp".into()),
            headers: vec!["X-Team=platform".into()],
            bearer_token_env_var: Some("DOCS_TOKEN".into()),
            command: Vec::new(),
        };
        apply(&path, &web).unwrap();
        // A taken name is refused, the file unchanged.
        let text = std::fs::read_to_string(&path).unwrap();
        let err = apply(&path, &add_action("docs", &["x"], &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("already"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

        apply(
            &path,
            &McpAction::Remove {
                name: "everything".into(),
            },
        )
        .unwrap();
        apply(
            &path,
            &McpAction::Remove {
                name: "docs".into(),
            },
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        let err = apply(
            &path,
            &McpAction::Remove {
                name: "docs".into(),
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("no server named docs"), "{err}");
    }

    #[test]
    fn bad_input_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert!(
            apply(&path, &add_action("x", &[], &[]))
                .unwrap_err()
                .to_string()
                .contains("after `--`")
        );
        assert!(
            apply(&path, &add_action("x", &["srv"], &["NOEQUALS"]))
                .unwrap_err()
                .to_string()
                .contains("KEY=VALUE")
        );
        assert!(!path.exists());
        std::fs::write(&path, "model = [unclosed\n").unwrap();
        let err = apply(&path, &add_action("x", &["srv"], &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid TOML"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "model = [unclosed\n"
        );
        // A file made fresh holds only the server.
        let fresh = dir.path().join("new/config.toml");
        apply(&fresh, &add_action("x", &["srv", "--flag"], &[])).unwrap();
        assert_eq!(
            std::fs::read_to_string(&fresh).unwrap(),
            "[mcp_servers.x]\ncommand = \"srv\"\nargs = [\"--flag\"]\n"
        );
    }
}
