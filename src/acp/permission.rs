//! Waypoint's approval questions as `session/request_permission`: the call
//! shown whole (its diff, or the command and where it runs, and why it
//! asks), with the answers Waypoint takes: once, always (this file or
//! command, for the session), or no.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, ToolCallContent, ToolCallLocation, ToolCallUpdate,
    ToolCallUpdateFields,
};

use super::translate::{diff_of, kind, text_content, title};
use crate::events::{ApprovalReason, Decision, ToolSummary};

pub const ONCE: &str = "allow_once";
pub const ALWAYS: &str = "allow_always";
pub const REJECT: &str = "reject_once";
/// No, and stop: the turn ends so the user can say what to do instead.
pub const REJECT_AND_TELL: &str = "reject_and_tell";

/// What the refusal that ends the turn tells the model.
const TOLD: &str = "Refused by the user, who stopped the turn to say what to do instead.";

/// What an approval question shows and where it comes from.
pub struct Question<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub summary: &'a ToolSummary,
    pub command: Option<&'a str>,
    pub cwd: &'a str,
    pub reason: &'a ApprovalReason,
}

/// The request that asks the client.
pub fn request(session: &SessionId, root: &Path, q: &Question<'_>) -> RequestPermissionRequest {
    let mut content: Vec<ToolCallContent> = Vec::new();
    let mut fields = ToolCallUpdateFields::new()
        .title(title(q.name, &q.summary.line))
        .kind(kind(q.name));
    if let Some((diff, path)) = diff_of(root, &q.summary.detail) {
        content.push(diff);
        fields = fields.locations(vec![ToolCallLocation::new(path)]);
    }
    if let Some(command) = q.command {
        content.push(text_content(&format!(
            "```sh\n{command}\n```\nin `{}`",
            q.cwd
        )));
    }
    if let Some(why) = why(q.reason) {
        content.push(text_content(&why));
    }
    let call = ToolCallUpdate::new(q.id.to_string(), fields.content(content));
    let always = match q.command {
        Some(_) => "Always allow this command (this session)",
        None => "Always allow (this session)",
    };
    let options = vec![
        PermissionOption::new(ONCE, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(ALWAYS, always, PermissionOptionKind::AllowAlways),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new(
            REJECT_AND_TELL,
            "Reject, and tell Waypoint what to do instead",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    RequestPermissionRequest::new(session.clone(), call, options)
}

/// The client's answer as the engine's decision, and whether the turn
/// stops (the user will say what to do instead); a cancelled question or
/// an unknown option refuses.
pub fn decision(answer: &RequestPermissionResponse) -> (Decision, bool) {
    match &answer.outcome {
        RequestPermissionOutcome::Selected(chosen) => match &*chosen.option_id.0 {
            ONCE => (Decision::Once, false),
            ALWAYS => (Decision::Always, false),
            REJECT_AND_TELL => (
                Decision::Refuse {
                    reason: Some(TOLD.to_string()),
                },
                true,
            ),
            _ => (Decision::Refuse { reason: None }, false),
        },
        _ => (Decision::Refuse { reason: None }, false),
    }
}

/// Why the call asks, when it is more than the mode.
fn why(reason: &ApprovalReason) -> Option<String> {
    match reason {
        ApprovalReason::Mode => None,
        ApprovalReason::SandboxBlocked { what } => Some(format!(
            "The sandbox stopped it ({what}): allowing runs it outside the sandbox."
        )),
        ApprovalReason::Unfollowable { why } => Some(format!(
            "It cannot be checked against the deny rules: {why}."
        )),
        ApprovalReason::Tool { question } => Some(question.clone()),
        ApprovalReason::Rule { rule } => Some(format!("The ask rule `{rule}` names it.")),
    }
}
