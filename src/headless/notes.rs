//! Headless lines on stderr for what the user must know besides the
//! reply: an MCP server that failed, is slow or waits for approval; the
//! task waiting for the servers still starting, and what it starts without.

use std::io::{self, Write};

use super::Printer;
use crate::events::McpStatus;
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

    /// The task given at start waits for the servers `names`.
    pub(super) fn mcp_wait_line(&mut self, names: &[String]) -> io::Result<()> {
        self.end_line()?;
        writeln!(
            self.err,
            "waypoint: waiting for MCP servers: {}…",
            clean_line(&names.join(", "))
        )
    }

    /// What the task starts without, when the wait is over.
    pub(super) fn mcp_wait_over_line(
        &mut self,
        failed: &[String],
        starting: &[String],
    ) -> io::Result<()> {
        if !starting.is_empty() {
            self.end_line()?;
            writeln!(
                self.err,
                "waypoint: the task starts without MCP servers still starting: {} (their tools join when ready)",
                clean_line(&starting.join(", "))
            )?;
        }
        if !failed.is_empty() {
            self.end_line()?;
            writeln!(
                self.err,
                "waypoint: the task starts without MCP servers that failed: {}",
                clean_line(&failed.join(", "))
            )?;
        }
        Ok(())
    }
}
