//! Headless lines on stderr for what the user must know besides the
//! reply: an MCP server that failed, is slow or waits for approval; the
//! task waiting for the servers still starting, and what it starts without.

use std::io::{self, Write};

use super::Printer;
use crate::events::{McpStatus, McpWait};
use crate::text::clean_line;

impl<O: Write, E: Write> Printer<O, E> {
    /// A line on stderr for a server that failed, is slow, or waits for
    /// the user's approval.
    pub(super) fn mcp_line(&mut self, name: &str, status: &McpStatus) -> io::Result<()> {
        match status {
            McpStatus::Failed { error, stderr } => {
                self.end_line()?;
                let last = stderr.lines().last().unwrap_or_default();
                let tail = if last.is_empty() {
                    String::new()
                } else {
                    format!(" (stderr: {})", clean_line(last))
                };
                writeln!(
                    self.err,
                    "waypoint: MCP server {} failed: {}{tail}",
                    clean_line(name),
                    clean_line(error)
                )?;
            }
            McpStatus::Slow { after_ms } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: MCP server {} is still starting after {} s",
                    clean_line(name),
                    after_ms / 1000
                )?;
            }
            McpStatus::NeedsApproval { command } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: MCP server {} of this project's .mcp.json ({}) was not started: \
                     approve it with `waypoint mcp approve` (or /mcp approve in the app)",
                    clean_line(name),
                    clean_line(command)
                )?;
            }
            McpStatus::Starting | McpStatus::Ready { .. } | McpStatus::Disabled => {}
        }
        Ok(())
    }

    /// The task given at start waits for the servers still starting;
    /// then, what it starts without.
    pub(super) fn mcp_wait_line(&mut self, wait: &McpWait) -> io::Result<()> {
        let lines = match wait {
            McpWait::Waiting { names } => vec![format!(
                "waiting for MCP servers: {}…",
                clean_line(&names.join(", "))
            )],
            McpWait::Over {
                failed, starting, ..
            } => [
                (starting, "still starting", " (their tools join when ready)"),
                (failed, "that failed", ""),
            ]
            .into_iter()
            .filter(|(names, _, _)| !names.is_empty())
            .map(|(names, how, then)| {
                format!(
                    "the task starts without MCP servers {how}: {}{then}",
                    clean_line(&names.join(", "))
                )
            })
            .collect(),
        };
        for line in lines {
            self.end_line()?;
            writeln!(self.err, "waypoint: {line}")?;
        }
        Ok(())
    }
}
