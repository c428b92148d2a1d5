//! `/approval [MODE]`: what runs without asking.

use std::time::Instant;

use crate::events::{ApprovalMode, Op};
use crate::tui::effect::Effect;
use crate::tui::state::{App, NoticeKind};

/// What each approval mode lets run without asking.
fn mode_help(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "plan and read only: commands and file changes are refused",
        ApprovalMode::Plan => "research and propose a plan: changes refused, commands read-only",
        ApprovalMode::Ask => "reads run; every command and file change asks",
        ApprovalMode::AutoEdit => "file changes in the workspace run; commands ask",
        ApprovalMode::Auto => "nothing asks; commands run in the sandbox",
        ApprovalMode::Yolo => "nothing asks and there is no sandbox",
    }
}

/// `/approval [MODE]`: the mode now and the modes, or a switch.
pub fn run(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    if args.is_empty() {
        let now = app.status.engine.approval();
        let mut out = match now {
            Some((mode, true)) => {
                format!("Approval mode: {mode} (commands in the sandbox). Modes:")
            }
            Some((mode, false)) => format!("Approval mode: {mode}. Modes:"),
            None => "Approval mode: not known yet. Modes:".to_string(),
        };
        for mode in ApprovalMode::ALL {
            let mark = if now.is_some_and(|(m, _)| m == mode) {
                "▶"
            } else {
                " "
            };
            out.push_str(&format!(
                "\n{mark} {:<9}  {}",
                mode.as_str(),
                mode_help(mode)
            ));
        }
        out.push_str("\n/approval MODE switches from the next tool call on.");
        app.notice(NoticeKind::Info, out);
        return Vec::new();
    }
    let Some(mode) = ApprovalMode::parse(args) else {
        let names: Vec<&str> = ApprovalMode::ALL.iter().map(|m| m.as_str()).collect();
        app.notice(
            NoticeKind::Error,
            format!(
                "Unknown approval mode {:?}; the modes are {}.",
                crate::text::clean_line(args),
                names.join(", ")
            ),
        );
        return Vec::new();
    };
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No approval mode can be set: no provider is set up.",
        );
        return Vec::new();
    }
    // The engine confirms with `ApprovalMode`.
    vec![Effect::Send(Op::SetApproval { mode })]
}
