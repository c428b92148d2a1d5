//! Plan mode's proposal and its approval. A plan the model writes in plan
//! mode is a proposal (`PlanProposed`); the user edits it like any plan,
//! asks for changes in words, or approves it (`Op::ApprovePlan`): the
//! approval is a revision by `approved` (the agreement the rest of the
//! work is held to), the mode becomes the one plan mode was entered from
//! (or the one the user names), and a turn starts carrying it out,
//! optionally from a fresh conversation (the task, the research's summary
//! and the plan). Invariants: only a proposed plan is approved; a plan the
//! model writes outside plan mode is never a proposal; the proposal
//! survives a resume (it is read back from the session's events).

use std::borrow::Cow;

use super::Session;
use super::shared::lock;
use super::voice::Voice;
use crate::chat::{ContentBlock, Conversation, Message, Role};
use crate::events::{ApprovalMode, CompactReason, Envelope, ErrorKind, Event};
use crate::session::{Record, now_ms};
use crate::todo::{Author, PlanDiff, TodoItem};

/// What heads the research's summary in a fresh conversation.
pub const RESEARCH_HEADER: &str = "[What the research in plan mode found: your last reply before the user approved the plan. The conversation before it is gone.]";

/// What heads the approved plan in a fresh conversation.
pub const APPROVED_HEADER: &str = "[The plan the user approved: the agreement you carry out. Keep it current with todo_write, keeping the same ids.]";

/// [`APPROVED_HEADER`] for a model without the todo tool.
pub const APPROVED_HEADER_REPLY: &str = "[The plan the user approved: the agreement you carry out. When you finish an item, end your reply with a line \"Done: N\" (its number).]";

/// After the model's accepted plan write (revision `revision`): in plan
/// mode it is a proposal, announced; elsewhere the plan is live.
pub(super) fn after_model_revision(voice: Voice<'_>, revision: u32) {
    let planning = lock(&voice.host.shared.policy).mode == ApprovalMode::Plan;
    voice.thread.plan.lock().proposed = planning.then_some(revision);
    if planning {
        voice.emit(Event::PlanProposed { revision });
    }
}

/// The proposal a session's events end with (for a resume): the revision
/// of the last `PlanProposed` not followed by an approval or a plan the
/// model wrote outside plan mode.
pub fn proposed_in(history: &[Envelope]) -> Option<u32> {
    let mut proposed = None;
    for envelope in history.iter().filter(|e| e.thread.is_root()) {
        match &envelope.event {
            Event::PlanProposed { revision } => proposed = Some(*revision),
            Event::PlanApproved { .. } => proposed = None,
            Event::PlanUpdated {
                author: Author::Model,
                revision,
                ..
            } if proposed != Some(*revision) => proposed = None,
            _ => {}
        }
    }
    proposed
}

/// The agreement a session's events end with (for a resume).
pub fn agreed_in(history: &[Envelope]) -> Option<Vec<TodoItem>> {
    let mut agreement = crate::events::Agreement::default();
    for envelope in history.iter().filter(|e| e.thread.is_root()) {
        agreement.note(&envelope.event);
    }
    agreement.agreed
}

/// What `Op::ApprovePlan` asks for.
pub(super) struct Approval {
    /// The mode to run in (none: the mode before plan mode).
    pub mode: Option<ApprovalMode>,
    /// Restart the conversation from the task, the research and the plan.
    pub fresh: bool,
    /// The plan as the user edited it, made the proposal first.
    pub items: Option<Vec<TodoItem>>,
}

/// `Op::ApprovePlan`, while idle: the proposed plan (first replaced by
/// the user's edited `items`, as a user revision) becomes the live one and
/// the mode `mode` (none: the mode before plan mode). Returns the message
/// that starts the turn carrying it out; `None` when there is no proposal
/// or the edited items are refused (said as an error; nothing changed).
pub(super) fn approve(session: &mut Session, approval: Approval) -> Option<String> {
    let Approval { mode, fresh, items } = approval;
    if session.thread.plan.lock().proposed.is_none() {
        session.emit(Event::Error {
            kind: ErrorKind::PlanEdit,
            message: "No plan is proposed: in plan mode (Shift+Tab, /plan-mode, --approval plan) the model proposes one for you to approve.".into(),
        });
        return None;
    }
    if let Some(items) = items
        && !edited_by_user(session, &items)
    {
        return None;
    }
    let mode = {
        let mut policy = lock(&session.host.shared.policy);
        let mode = mode
            .filter(|m| *m != ApprovalMode::Plan)
            .unwrap_or(policy.before_plan);
        policy.set_mode(mode);
        mode
    };
    super::approval::announce_mode(session.voice());
    let (items, rendered, revision) = {
        let mut state = session.thread.plan.lock();
        state.proposed = None;
        state.agreed = Some(state.manager.items().to_vec());
        // The checks the user approved with the plan run unasked.
        for item in state.manager.items().to_vec() {
            if let Some(check) = &item.scope.check {
                state.checks.approve(&item.id, check);
            }
        }
        let revision = state.next_revision();
        state.sync_file(true);
        (
            state.manager.items().to_vec(),
            state.manager.render(),
            revision,
        )
    };
    session.emit(Event::PlanUpdated {
        items,
        rendered: rendered.clone(),
        diff: PlanDiff::default(),
        revision,
        author: Author::Approved,
        at: now_ms(),
        note: Some("approved the plan".into()),
    });
    session.emit(Event::PlanApproved {
        revision,
        mode,
        fresh,
    });
    if fresh {
        restart(session, &rendered);
    }
    let how = if session.host.config.plan.tool {
        "mark it in progress with todo_write, and keep the plan current as you go"
    } else {
        "when you finish an item, end your reply with a line \"Done: N\" (its number)"
    };
    Some(format!(
        "The user approved the plan (revision {revision}); you are now in {} mode. Carry it out item by item, starting with the first open item: {how}.",
        mode.as_str()
    ))
}

/// The proposal becomes the user's edited `items` (a user revision, told
/// to the model with the approval); false when they were refused (said as
/// an error, the proposal unchanged).
fn edited_by_user(session: &mut Session, items: &[TodoItem]) -> bool {
    let same = |a: &TodoItem, b: &TodoItem| {
        a.content == b.content && a.status == b.status && (b.scope.is_empty() || a.scope == b.scope)
    };
    {
        let state = session.thread.plan.lock();
        let now = state.manager.items();
        if now.len() == items.len() && now.iter().zip(items).all(|(a, b)| same(a, b)) {
            return true;
        }
    }
    let event =
        super::plan_edit::apply_user_change(&session.thread.plan, Author::User, |manager| {
            manager.replace_by_user(items, "your edited plan")
        });
    let refused = matches!(event, Event::Error { .. });
    if let Event::Error { message, .. } = &event {
        session.emit(Event::Error {
            kind: ErrorKind::PlanEdit,
            message: format!(
                "The plan was not approved: {}",
                message.trim_start_matches("The plan was not changed: ")
            ),
        });
    } else {
        session.emit(event);
    }
    !refused
}

/// The conversation starts again from the task, the research's summary
/// (the model's last reply) and the approved plan, recorded whole so a
/// resume reads it as a compaction.
fn restart(session: &mut Session, plan: &str) {
    let before = session.thread.estimate(&session.host.config);
    let header = if session.host.config.plan.tool {
        APPROVED_HEADER
    } else {
        APPROVED_HEADER_REPLY
    };
    let messages = fresh_messages(session.thread.conversation.messages(), header, plan);
    let conversation = Conversation::from_messages(messages);
    if conversation.validate().is_err() {
        tracing::error!("the fresh conversation was invalid; kept the old one");
        return;
    }
    session.thread.conversation = conversation;
    session.thread.last_prompt = None;
    let after = session.thread.estimate(&session.host.config);
    let warning = session.host.transcript.record(&Record::Compaction {
        reason: CompactReason::Approval,
        summary: None,
        before_tokens: before,
        after_tokens: after,
        fallback: false,
        messages: Cow::Borrowed(session.thread.conversation.messages()),
        at: now_ms(),
    });
    session.host.warn_unsaved(warning);
}

/// One user message: the task (the first message's text), the model's
/// last reply, and the plan under `header`.
pub fn fresh_messages(old: &[Message], header: &str, plan: &str) -> Vec<Message> {
    let task = old
        .first()
        .and_then(Message::first_text)
        .map(str::to_string)
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "(the original task was not kept)".into());
    let mut content = vec![ContentBlock::Text { text: task }];
    if let Some(summary) = old
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.text("\n\n"))
        .find(|t| !t.trim().is_empty())
    {
        content.push(ContentBlock::Text {
            text: format!("{RESEARCH_HEADER}\n\n{summary}"),
        });
    }
    content.push(ContentBlock::Text {
        text: format!("{header}\n\n{plan}"),
    });
    vec![Message {
        role: Role::User,
        content,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ThreadId;

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    #[test]
    fn a_fresh_start_keeps_the_task_the_last_reply_and_the_plan_only() {
        let old = vec![
            text(Role::User, "Add a flag"),
            text(Role::Assistant, "Reading."),
            text(Role::User, "ok"),
            text(
                Role::Assistant,
                "The CLI is in src/cli.rs; the flag goes there.",
            ),
        ];
        let fresh = fresh_messages(&old, APPROVED_HEADER, "[ ] Add the flag");
        assert_eq!(fresh.len(), 1);
        let texts: Vec<&str> = fresh[0]
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts[0], "Add a flag");
        assert!(texts[1].ends_with("The CLI is in src/cli.rs; the flag goes there."));
        assert!(texts[2].ends_with("[ ] Add the flag"));
        assert_eq!(texts.len(), 3);
    }

    fn at(event: Event) -> Envelope {
        Envelope {
            thread: ThreadId::ROOT,
            parent_call: None,
            turn: 1,
            event,
        }
    }

    fn model_plan(revision: u32) -> Envelope {
        at(Event::PlanUpdated {
            items: Vec::new(),
            rendered: String::new(),
            diff: PlanDiff::default(),
            revision,
            author: Author::Model,
            at: 0,
            note: None,
        })
    }

    fn plan_by(author: Author, contents: &[&str]) -> Envelope {
        let items = contents
            .iter()
            .enumerate()
            .map(|(i, c)| TodoItem {
                id: (i + 1).to_string(),
                content: (*c).into(),
                status: crate::todo::TodoStatus::Pending,
                active_form: String::new(),
                scope: Default::default(),
            })
            .collect();
        at(Event::PlanUpdated {
            items,
            rendered: String::new(),
            diff: PlanDiff::default(),
            revision: 0,
            author,
            at: 0,
            note: None,
        })
    }

    #[test]
    fn a_resume_finds_the_agreement_with_its_accepted_changes() {
        let contents = |a: Option<Vec<TodoItem>>| {
            a.map(|items| items.into_iter().map(|i| i.content).collect::<Vec<_>>())
        };
        let mut history = vec![
            plan_by(Author::Model, &["A"]),
            plan_by(Author::Approved, &["A"]),
            // A status change: not a change of the agreement.
            plan_by(Author::Model, &["A"]),
        ];
        assert_eq!(contents(agreed_in(&history)), Some(vec!["A".to_string()]));
        history.push(at(Event::PlanChangeAccepted {
            lines: vec!["+ B".into()],
            asked: false,
        }));
        history.push(plan_by(Author::Model, &["A", "B"]));
        assert_eq!(
            contents(agreed_in(&history)),
            Some(vec!["A".to_string(), "B".to_string()])
        );
        history.push(at(Event::SessionReset));
        assert_eq!(agreed_in(&history), None);
        assert_eq!(agreed_in(&[plan_by(Author::Model, &["A"])]), None);
    }

    #[test]
    fn a_resume_finds_the_proposal_the_events_end_with() {
        let proposed = vec![model_plan(1), at(Event::PlanProposed { revision: 1 })];
        assert_eq!(proposed_in(&proposed), Some(1));
        let mut approved = proposed.clone();
        approved.push(at(Event::PlanApproved {
            revision: 2,
            mode: ApprovalMode::Auto,
            fresh: false,
        }));
        assert_eq!(proposed_in(&approved), None);
        // A plan the model wrote after leaving plan mode is live.
        let mut left = proposed;
        left.push(model_plan(2));
        assert_eq!(proposed_in(&left), None);
        assert_eq!(proposed_in(&[model_plan(1)]), None);
    }
}
