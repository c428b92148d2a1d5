//! Tool calls waiting for the user's yes or no: the one shown in the
//! approval prompt and those queued behind it, and the refusal reason being
//! typed. Invariant: the engine runs nothing while the queue is not empty,
//! and every request leaves it with exactly one answer (or when the turn
//! it belongs to ends).

use std::collections::VecDeque;

use crate::events::{ApprovalReason, ToolSummary};
use crate::text::clean_line;

/// Rules "always" lists before it says how many more there are.
const ALWAYS_SHOWN: usize = 4;

/// One call waiting for an answer, its strings as the model wrote them
/// (they are cleaned where they are drawn).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub id: String,
    pub name: String,
    pub summary: ToolSummary,
    /// The command, for `bash`.
    pub command: Option<String>,
    pub cwd: String,
    pub reason: ApprovalReason,
    /// The subagent whose call it is (its task), when not the main agent's.
    pub by: Option<String>,
}

impl ApprovalRequest {
    /// What "always" allows for the rest of the session: the command's
    /// first words (`cargo test, git status`), or this file.
    pub fn always_covers(&self) -> String {
        if let ApprovalReason::Tool { .. } = self.reason {
            return format!("this question from {}", clean_line(&self.name));
        }
        if let Some(command) = &self.command {
            let words = crate::agent::approval::first_words(command);
            if words.is_empty() {
                return "this command".into();
            }
            // A long line's list is cut (the body shows every command).
            let shown = words.len().min(ALWAYS_SHOWN);
            let mut out = words[..shown].join(", ");
            if words.len() > shown {
                out.push_str(&format!(" and {} more", words.len() - shown));
            }
            return clean_line(&out).into_owned();
        }
        if let crate::events::ToolDetail::Call { tool, server, .. } = &self.summary.detail {
            return format!("{} of {}", clean_line(tool), clean_line(server));
        }
        // Otherwise only file writes ask; a write is allowed by its path.
        "this file".into()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Approvals {
    /// The request shown first; the others wait behind it.
    pub queue: VecDeque<ApprovalRequest>,
    /// The reason typed after `n` (the prompt asks for it while `Some`).
    pub reason: Option<String>,
    /// Where the prompt's body is scrolled to (a long command or diff).
    pub scroll: super::Scroll,
    /// The shown request's body as last laid out (built once, not per frame).
    pub cache: Option<BodyCache>,
}

/// The prompt's body for one request at one width, and what "always" covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BodyCache {
    pub id: String,
    pub width: u16,
    pub lines: Vec<ratatui::text::Line<'static>>,
    pub always: String,
}

impl Approvals {
    /// The request on screen.
    pub fn current(&self) -> Option<&ApprovalRequest> {
        self.queue.front()
    }

    pub fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn push(&mut self, request: ApprovalRequest) {
        if self.queue.is_empty() {
            self.scroll = super::Scroll::top_only();
        }
        self.queue.push_back(request);
    }

    /// The request put last is a subagent's: `task` says which.
    pub fn asked_by(&mut self, task: String) {
        if let Some(last) = self.queue.back_mut() {
            last.by = Some(task);
        }
    }

    /// Takes the request on screen (it was answered); the next one shows
    /// from its top.
    pub fn pop(&mut self) -> Option<ApprovalRequest> {
        self.reason = None;
        self.scroll = super::Scroll::top_only();
        self.queue.pop_front()
    }

    /// The waits ended (the turn stopped): nothing is asked any more.
    pub fn clear(&mut self) {
        self.queue.clear();
        self.reason = None;
        self.cache = None;
    }
}
