//! `/mcp`: the MCP servers as the events told the app (state, tools, what
//! their definitions cost, which mode the tools are sent in), and the
//! actions the user asks of them (approve, reconnect, enable, disable),
//! sent to the engine as one op.

use std::time::Instant;

use crate::tui::effect::Effect;
use crate::tui::state::{App, NoticeKind};
use crate::units::tokens as short;

pub fn run(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    use crate::events::{McpAction, Op};
    let mut words = args.split_whitespace();
    let action = match (words.next(), words.next()) {
        (None, _) => return mcp_list(app),
        (Some("approve"), None) => McpAction::Approve,
        (Some("reconnect"), Some(name)) => McpAction::Reconnect { name: name.into() },
        (Some("enable"), Some(name)) => McpAction::Enable { name: name.into() },
        (Some("disable"), Some(name)) => McpAction::Disable { name: name.into() },
        _ => {
            app.notice(
                NoticeKind::Warning,
                "Usage: /mcp, /mcp approve, /mcp reconnect NAME, /mcp enable NAME, /mcp disable NAME.",
            );
            return Vec::new();
        }
    };
    vec![Effect::Send(Op::Mcp { action })]
}

fn mcp_list(app: &mut App) -> Vec<Effect> {
    use crate::events::McpStatus;
    use crate::text::clean_line;
    let mut lines = Vec::new();
    for (name, status) in app.status.mcp.servers() {
        let state = match status {
            McpStatus::Starting => "starting".to_string(),
            McpStatus::Slow { after_ms } => {
                format!("still starting ({} s; joins when ready)", after_ms / 1000)
            }
            McpStatus::Ready {
                tools,
                schema_tokens,
            } => format!(
                "ready · {} · ~{} tokens per request",
                crate::units::plural(*tools, "tool"),
                short(*schema_tokens)
            ),
            McpStatus::Failed { error, stderr } => {
                let last = stderr.lines().last().map(clean_line).unwrap_or_default();
                if last.is_empty() {
                    format!("failed: {}", clean_line(error))
                } else {
                    format!("failed: {} (stderr: {last})", clean_line(error))
                }
            }
            McpStatus::Disabled => "disabled (/mcp enable NAME starts it)".to_string(),
            McpStatus::NeedsApproval { command } => format!(
                "not started: this project's .mcp.json runs `{}` (/mcp approve)",
                clean_line(command)
            ),
        };
        lines.push(format!("  {name} · {state}"));
    }
    let mut out = if lines.is_empty() {
        "No MCP servers. Add one as [mcp_servers.NAME] with its command in the config file, or in the project's .mcp.json (README: MCP servers).".to_string()
    } else {
        format!(
            "MCP servers (their tools are offered as mcp__NAME__TOOL):\n{}",
            lines.join("\n")
        )
    };
    if let Some(mode) = app.status.mcp.mode {
        if mode.deferred > 0 {
            out.push_str(&format!(
                "\nSearch mode: the MCP tools' definitions (~{} tokens) are over the budget (~{} tokens, mcp_tool_share), so the model finds them with mcp_search; {} loaded.",
                short(mode.tokens),
                short(mode.budget),
                mode.offered.saturating_sub(1)
            ));
        } else if mode.offered > 0 {
            out.push_str(&format!(
                "\nAll {} MCP tools are sent (~{} tokens, within the budget of ~{}).",
                mode.offered,
                short(mode.tokens),
                short(mode.budget)
            ));
        }
    }
    app.notice(NoticeKind::Info, out);
    Vec::new()
}
