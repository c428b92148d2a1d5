//! Headless lines on stderr for what the user must know besides the
//! reply: an MCP server that failed, is slow or waits for approval; the
//! task waiting for the servers still starting, and what it starts without.
//! And what a refused approval tells the model: why it was asked, so the
//! way to allow it is the one that applies.

use std::io::{self, Write};

use super::Printer;
use crate::events::{ApprovalReason, McpStatus, McpWait};
use crate::text::clean_line;

/// The refusal a headless run gives a call that asks: nobody is there
/// to answer, and what would let it run depends on why it asked.
pub fn headless_refusal(reason: &ApprovalReason) -> String {
    let why = match reason {
        ApprovalReason::Mode => {
            "the approval mode asks before this kind of call; the user can run with --approval auto (commands sandboxed) or yolo, or allow it with an allow rule".to_string()
        }
        ApprovalReason::SandboxBlocked { what } => format!(
            "the sandbox stopped it ({}) and running it outside needs approval; the user can widen [sandbox] (writable, network) or run with --approval yolo",
            clean_line(what)
        ),
        ApprovalReason::Unfollowable { why } => format!(
            "deny rules are set and this command cannot be checked against them ({}); write the command plainly",
            clean_line(why)
        ),
        ApprovalReason::Tool { question } => {
            format!("the tool asks first: {}", clean_line(question))
        }
        ApprovalReason::Rule { rule } => format!(
            "the ask rule `{}` asks before it; headless runs cannot answer it",
            clean_line(rule)
        ),
    };
    format!("Waypoint runs headless, so nobody can approve it: {why}")
}

impl<O: Write, E: Write> Printer<O, E> {
    /// A call that needs the approval headless mode cannot give.
    pub(super) fn cannot_ask(
        &mut self,
        name: &str,
        summary: &crate::events::ToolSummary,
    ) -> io::Result<()> {
        self.end_line()?;
        writeln!(
            self.err,
            "waypoint: {} {} needs approval, which headless mode cannot give: refused",
            clean_line(name),
            clean_line(&summary.line)
        )
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headless_refusal_names_what_would_let_it_run() {
        let all = [
            (ApprovalReason::Mode, "--approval auto"),
            (
                ApprovalReason::SandboxBlocked {
                    what: "write /etc/x".into(),
                },
                "[sandbox]",
            ),
            (
                ApprovalReason::Unfollowable {
                    why: "a program made by an expansion".into(),
                },
                "plainly",
            ),
            (
                ApprovalReason::Tool {
                    question: "Run unconfined?".into(),
                },
                "Run unconfined?",
            ),
            (
                ApprovalReason::Rule {
                    rule: "git push".into(),
                },
                "`git push`",
            ),
        ];
        for (reason, names) in all {
            let said = headless_refusal(&reason);
            assert!(said.starts_with("Waypoint runs headless, so nobody can approve it: "));
            assert!(said.contains(names), "{said}");
        }
        // Only the mode's reason suggests another mode or an allow rule.
        let rule = headless_refusal(&ApprovalReason::Rule { rule: "x".into() });
        assert!(!rule.contains("allow rule") && !rule.contains("--approval"));
    }
}
