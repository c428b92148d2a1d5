//! `waypoint mcp list|check|add|remove|approve`: what is configured (the
//! config file's servers and the project's `.mcp.json`), whether one server
//! starts and what it offers, without a session; editing the config file;
//! approving the project's servers. Exit codes: 0 done, 1 the server failed
//! (or the edit was refused), 2 no such server.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::name::tool_name;
use super::tool::access_of;
use crate::cli::McpAction;
use crate::text::clean_line;
use crate::tools::Access;

/// The longest `check` waits for a server, whatever its startup timeout.
const CHECK_LIMIT: Duration = Duration::from_secs(120);

pub async fn run(
    settings: &crate::config::Settings,
    action: &McpAction,
    workspace: &Path,
) -> io::Result<i32> {
    let env = |k: &str| std::env::var(k).ok();
    let mcp = super::project::settings(settings, workspace, &env);
    let out = &mut io::stdout().lock();
    match action {
        McpAction::List => list(&mcp, workspace, out).map(|()| 0),
        McpAction::Check { name } => check(&mcp, name, workspace, out).await,
        McpAction::Approve => approve(&mcp, workspace, out),
        McpAction::Add { .. } | McpAction::Remove { .. } => {
            let Some(path) = settings
                .file
                .clone()
                .or_else(|| crate::config::config_path(&env))
            else {
                eprintln!("waypoint: there is no config folder to write to (set WAYPOINT_CONFIG)");
                return Ok(1);
            };
            match super::edit::apply(&path, action) {
                Ok(done) => writeln!(out, "{done}").map(|()| 0),
                Err(e) => {
                    eprintln!("waypoint: {e}");
                    Ok(1)
                }
            }
        }
    }
}

fn approve(mcp: &super::Settings, workspace: &Path, out: &mut dyn Write) -> io::Result<i32> {
    let waiting = mcp.waiting(workspace);
    if waiting.is_empty() {
        writeln!(
            out,
            "No server of this project's {} waits for approval.",
            super::project::FILE
        )?;
        return Ok(0);
    }
    let Some(approvals) = &mcp.approvals else {
        eprintln!(
            "waypoint: approvals cannot be remembered: there is no home folder (set WAYPOINT_HOME)"
        );
        return Ok(1);
    };
    approvals.approve(workspace, waiting.iter().map(|(n, p)| (*n, *p)))?;
    for name in waiting.keys() {
        let how = mcp
            .servers
            .get(*name)
            .map(|config| mcp.shown(name, config))
            .unwrap_or_default();
        writeln!(out, "approved {name}: {}", clean_line(&how))?;
    }
    writeln!(
        out,
        "They start with the next session in this project (a changed entry is asked for again)."
    )?;
    Ok(0)
}

fn list(mcp: &super::Settings, workspace: &Path, out: &mut dyn Write) -> io::Result<()> {
    for (name, problem) in &mcp.problems {
        writeln!(out, "{name}\tnot read\t{}", clean_line(problem))?;
    }
    let servers = &mcp.servers;
    if servers.is_empty() {
        return writeln!(
            out,
            "No MCP servers configured. Add one with `waypoint mcp add NAME -- COMMAND ARGS`, as [mcp_servers.NAME] in the config file (`waypoint config` shows where it is), or in the project's .mcp.json."
        );
    }
    for (name, config) in servers {
        let how = mcp.shown(name, config);
        let state = match (mcp.project.get(name), mcp.approved(workspace, name)) {
            (Some(_), false) => "project, waits for approval (waypoint mcp approve)",
            _ if !config.is_enabled() => "disabled",
            (Some(_), true) => "project, approved",
            (None, _) => "enabled",
        };
        writeln!(out, "{name}\t{state}\t{}", clean_line(&how))?;
        if let Some(warning) = super::place::warning(config, workspace) {
            writeln!(out, "{name}\t{}", clean_line(&warning))?;
        }
    }
    Ok(())
}

async fn check(
    mcp: &super::Settings,
    name: &str,
    workspace: &Path,
    out: &mut dyn Write,
) -> io::Result<i32> {
    let servers = &mcp.servers;
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
    if !mcp.approved(workspace, name) {
        eprintln!(
            "waypoint: {name} is a server of this project's {} and is not approved: it runs `{}`. Approve it with `waypoint mcp approve` first.",
            super::project::FILE,
            clean_line(&mcp.shown(name, config))
        );
        return Ok(1);
    }
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
            // The server's own words: no escape sequence of theirs
            // reaches the terminal.
            eprintln!(
                "waypoint: MCP server {name} failed: {}",
                crate::text::clean(&e.message)
            );
            if !e.stderr.is_empty() {
                eprintln!("its stderr ended with:\n{}", crate::text::clean(&e.stderr));
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
