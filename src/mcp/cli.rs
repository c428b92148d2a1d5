//! `waypoint mcp list` and `waypoint mcp check NAME`: what is configured,
//! and whether one server starts and what it offers, without a session.
//! Exit codes: 0 ready (or listed), 1 the server failed, 2 no such server.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::McpServerConfig;
use super::name::tool_name;
use super::tool::access_of;
use crate::cli::McpAction;
use crate::text::clean_line;
use crate::tools::Access;

/// The longest `check` waits for a server, whatever its startup timeout.
const CHECK_LIMIT: Duration = Duration::from_secs(120);

pub async fn run(
    servers: &BTreeMap<String, McpServerConfig>,
    action: &McpAction,
    workspace: &Path,
) -> io::Result<i32> {
    let out = &mut io::stdout().lock();
    match action {
        McpAction::List => list(servers, out).map(|()| 0),
        McpAction::Check { name } => check(servers, name, workspace, out).await,
    }
}

fn list(servers: &BTreeMap<String, McpServerConfig>, out: &mut dyn Write) -> io::Result<()> {
    if servers.is_empty() {
        return writeln!(
            out,
            "No MCP servers configured. Add one as [mcp_servers.NAME] with its command in the config file (`waypoint config` shows where it is)."
        );
    }
    for (name, config) in servers {
        let how = match (&config.command, &config.url) {
            (Some(command), _) => {
                let mut line = command.clone();
                for arg in &config.args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            (None, Some(url)) => format!("{url} (Streamable HTTP)"),
            (None, None) => "(no command)".to_string(),
        };
        let state = if config.is_enabled() {
            "enabled"
        } else {
            "disabled"
        };
        writeln!(out, "{name}\t{state}\t{}", clean_line(&how))?;
    }
    Ok(())
}

async fn check(
    servers: &BTreeMap<String, McpServerConfig>,
    name: &str,
    workspace: &Path,
    out: &mut dyn Write,
) -> io::Result<i32> {
    let Some(config) = servers.get(name) else {
        let known: Vec<&str> = servers.keys().map(String::as_str).collect();
        eprintln!(
            "waypoint: no MCP server named `{}` in the config file (configured: {})",
            clean_line(name),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        );
        return Ok(2);
    };
    if !config.is_enabled() {
        writeln!(
            out,
            "{name} is disabled (enabled = false); checking it anyway."
        )?;
    }
    let began = Instant::now();
    let started = tokio::time::timeout(CHECK_LIMIT, super::start(name, config, workspace)).await;
    let running = match started {
        Ok(Ok(running)) => running,
        Ok(Err(e)) => {
            eprintln!("waypoint: MCP server {name} failed: {}", e.message);
            if !e.stderr.is_empty() {
                eprintln!("its stderr ended with:\n{}", e.stderr);
            }
            return Ok(1);
        }
        Err(_) => {
            eprintln!(
                "waypoint: MCP server {name} did not answer within {} s",
                CHECK_LIMIT.as_secs()
            );
            return Ok(1);
        }
    };
    let offered: Vec<_> = running
        .tools
        .iter()
        .filter(|t| config.offers(&t.name))
        .collect();
    let tokens = serde_json::to_string(&offered).map_or(0, |s| s.len()) / 4;
    writeln!(
        out,
        "{name}: ready in {} ms, {} offered of {} (about {tokens} tokens in every request)",
        began.elapsed().as_millis(),
        offered.len(),
        running.tools.len()
    )?;
    for def in &running.tools {
        let kind = match (config.offers(&def.name), access_of(def)) {
            (false, _) => "not offered",
            (true, Access::Read) => "reads",
            (true, _) => "asks in ask mode",
        };
        let about = def
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or_default();
        writeln!(
            out,
            "  {}  [{kind}]  {}",
            tool_name(name, &def.name),
            clean_line(about)
        )?;
    }
    Ok(0)
}
