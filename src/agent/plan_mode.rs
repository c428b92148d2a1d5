//! Plan mode at the approval gate: the model researches and proposes a
//! plan, and the harness (not the prompt) keeps anything from changing.
//! Reads, the plan's tools, MCP tools their server marks read-only and
//! `explore` subagents run; file changes, other MCP tools and `general`
//! subagents are refused; a command runs in the sandbox with nothing of
//! the user's writable (see [`crate::safety::Sandbox::read_only`]), and
//! where there is no sandbox it is asked in the app and refused headless.
//! Invariants: deny rules and ask rules act as in every other mode; every
//! refusal reads [`crate::events::plan_mode_refusal`], which tells the
//! model what to do.

use serde_json::Value;

use super::rule_gate::Gate;
use crate::events::{
    ApprovalMode, ApprovalReason, PLAN_MODE_WORK, PLAN_MODE_WORK_REPLY, plan_mode_refusal_for,
};
use crate::tools::{Origin, Refuser};

/// Plan mode refuses the call: `what` could not be done (what to do
/// instead as the model can: with the todo tool or in its reply).
pub(super) fn refuse(host: &super::thread::Host, what: &str) -> Gate {
    Gate::Refuse(
        Refuser::Mode,
        plan_mode_refusal_for(what, host.config.plan.tool),
    )
}

/// A tool that reads or plans: runs, but a subagent only as `explore`
/// (a `general` one has the parent's tools and would be refused them one
/// by one).
pub(super) fn agent_gate(host: &super::thread::Host, origin: &Origin, input: &Value) -> Gate {
    if *origin != Origin::Agent {
        return Gate::Run { sandboxed: false };
    }
    match crate::tools::task::TaskRequest::parse(input) {
        Ok(task) if task.agent != crate::tools::task::AgentKind::Explore => refuse(
            host,
            &format!(
                "a `{}` subagent may change files; only `\"agent\": \"explore\"` subagents run in plan mode",
                task.agent.name()
            ),
        ),
        // Unreadable input fails on its own, saying why.
        _ => Gate::Run { sandboxed: false },
    }
}

/// A command line, once the deny rules let it through: an ask rule asks;
/// what the deny rules cannot follow is refused (nobody is asked about
/// commands that run); with a sandbox it runs there with nothing
/// writable; without one it is asked, or refused headless.
pub(super) fn command_gate(
    host: &super::thread::Host,
    asked: Option<String>,
    unfollowable: Option<String>,
) -> Gate {
    if let Some(rule) = asked {
        return Gate::Ask(ApprovalReason::Rule { rule });
    }
    if let Some(why) = unfollowable {
        return Gate::Refuse(
            Refuser::Rules,
            crate::safety::rules::unfollowable_message(&why),
        );
    }
    match (
        &host.config.tools.sandbox,
        host.config.tools.bash.unattended,
    ) {
        (Some(_), _) => Gate::Run { sandboxed: true },
        (None, true) => refuse(
            host,
            "commands cannot run: this system has no sandbox to run them read-only, and nobody can approve one headless",
        ),
        (None, false) => Gate::Ask(ApprovalReason::Tool {
            question: NO_SANDBOX_QUESTION.into(),
        }),
    }
}

/// The note the model reads with the user's next message when the user
/// switched into plan mode or out of it since the model was last told
/// (other switches it learns from what runs, asks or is refused). `tool`:
/// the model has the todo tool to propose with.
pub(super) fn switch_note(policy: &super::policy::SharedPolicy, tool: bool) -> Option<String> {
    let mut policy = super::shared::lock(policy);
    let (was, now) = (policy.told, policy.mode);
    policy.told = now;
    if was == now {
        return None;
    }
    if now == ApprovalMode::Plan {
        let work = if tool {
            PLAN_MODE_WORK
        } else {
            PLAN_MODE_WORK_REPLY
        };
        return Some(format!(
            "<reminder>The user switched Waypoint to plan mode (read-only), enforced by Waypoint: file changes, MCP tools not marked read-only and `general` subagents are refused, and commands run where nothing is writable. {work}</reminder>"
        ));
    }
    (was == ApprovalMode::Plan).then(|| {
        format!(
            "<reminder>The user left plan mode: the approval mode is now {now}, so changes can be made as that mode allows. Work through the plan.</reminder>"
        )
    })
}

/// What the user is asked about a command in plan mode without a sandbox.
pub(super) const NO_SANDBOX_QUESTION: &str = "Waypoint is in plan mode, but this system has no sandbox to run commands read-only: run this one unconfined (it could change files)?";
