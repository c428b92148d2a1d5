//! Waypoint's approval modes as ACP session modes: the client lists them
//! and switches between them; the mode a session is in is its current one.

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};

use crate::events::ApprovalMode;

/// A mode's id: its name in the config (`read-only`, `plan`, `ask`, …).
pub fn id(mode: ApprovalMode) -> SessionModeId {
    SessionModeId::new(mode.as_str())
}

/// The mode a client's id names.
pub fn parse(id: &SessionModeId) -> Option<ApprovalMode> {
    ApprovalMode::parse(&id.0)
}

/// Every mode, `current` the one the session is in.
pub fn state(current: ApprovalMode) -> SessionModeState {
    let modes = ApprovalMode::ALL
        .into_iter()
        .map(|m| SessionMode::new(id(m), name(m)).description(description(m).to_string()))
        .collect();
    SessionModeState::new(id(current), modes)
}

fn name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Read-only",
        ApprovalMode::Plan => "Plan",
        ApprovalMode::Ask => "Ask",
        ApprovalMode::AutoEdit => "Auto-edit",
        ApprovalMode::Auto => "Auto (sandboxed)",
        ApprovalMode::Yolo => "Yolo",
    }
}

fn description(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Reads and the plan only: file changes and commands are refused.",
        ApprovalMode::Plan => {
            "Research and propose a plan; nothing changes until you approve it by switching to another mode."
        }
        ApprovalMode::Ask => "Every command and file change asks first.",
        ApprovalMode::AutoEdit => "File changes in the workspace run; commands ask.",
        ApprovalMode::Auto => "Nothing asks; commands run in the sandbox.",
        ApprovalMode::Yolo => "Nothing asks and there is no sandbox.",
    }
}
