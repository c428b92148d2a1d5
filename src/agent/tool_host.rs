//! The host's side of a running tool's requests ([`HostRequest`]): its
//! progress goes out as `ToolCallProgress`, its questions as approval
//! requests for the call (the mode, or an earlier "always", may answer
//! them). Served by the pipeline while the tool runs; the time a question
//! waits is not the call's.

use std::time::{Duration, Instant};

use std::sync::Mutex;

use tokio::sync::oneshot;

use super::Outbox;
use super::approval::Policy;
use super::shared::{Answers, lock};
use crate::events::{ApprovalReason, Decision, Event, ToolDetail, ToolSummary};
use crate::text::clean_line;
use crate::tools::HostRequest;

/// The longest progress line sent on (a tool's words, shown on one line).
const PROGRESS_CHARS: usize = 200;

/// One call's requests being served.
pub(super) struct Serving<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub cwd: String,
    pub events: &'a Outbox,
    pub policy: &'a Mutex<Policy>,
    pub answers: &'a Answers,
    /// The question put to the user: its words, where the answer goes,
    /// and since when it waits.
    asked: Option<(String, oneshot::Sender<Decision>, Instant)>,
    /// How long the call's answered questions waited for the user.
    waited: Duration,
}

impl<'a> Serving<'a> {
    pub(super) fn new(
        (id, name): (&'a str, &'a str),
        cwd: String,
        events: &'a Outbox,
        (policy, answers): (&'a Mutex<Policy>, &'a Answers),
    ) -> Self {
        Self {
            id,
            name,
            cwd,
            events,
            policy,
            answers,
            asked: None,
            waited: Duration::ZERO,
        }
    }

    /// A question is waiting for the user's answer.
    pub(super) fn is_asking(&self) -> bool {
        self.asked.is_some()
    }

    /// Takes the tool's request; a question put to the user gives where
    /// the answer will come.
    pub(super) fn take(&mut self, request: HostRequest) -> Option<oneshot::Receiver<Decision>> {
        match request {
            HostRequest::Progress(message) => {
                let line: String = clean_line(message.lines().next().unwrap_or_default())
                    .chars()
                    .take(PROGRESS_CHARS)
                    .collect();
                self.events.send(Event::ToolCallProgress {
                    id: self.id.to_string(),
                    message: line,
                });
                None
            }
            HostRequest::Ask { question, answer } => {
                let decided = lock(self.policy).answers(self.name, &question);
                if let Some(decision) = decided {
                    let _ = answer.send(decision);
                    None
                } else if self.asked.is_some() {
                    let _ = answer.send(Decision::Refuse {
                        reason: Some("one question at a time: the last is not answered".into()),
                    });
                    None
                } else {
                    let waiting = self.answers.wait(self.id);
                    self.events.send(Event::ApprovalRequested {
                        id: self.id.to_string(),
                        name: self.name.to_string(),
                        summary: ToolSummary {
                            line: clean_line(&question).into_owned(),
                            detail: ToolDetail::Output,
                        },
                        command: None,
                        cwd: self.cwd.clone(),
                        reason: ApprovalReason::Tool {
                            question: question.clone(),
                        },
                    });
                    self.asked = Some((question, answer, Instant::now()));
                    Some(waiting)
                }
            }
        }
    }

    /// How long the call's questions waited, the open one's so far too.
    pub(super) fn waited(&self) -> Duration {
        let open = self.asked.as_ref().map(|(_, _, since)| since.elapsed());
        self.waited + open.unwrap_or_default()
    }

    /// The turn was interrupted: the open question goes unanswered (the
    /// tool's `ask` returns `None` and it can stop with what it has).
    pub(super) fn withdraw(&mut self) {
        if let Some((_, _, since)) = self.asked.take() {
            self.waited += since.elapsed();
            self.answers.withdraw(self.id);
        }
    }

    /// The user's answer, or `None` when no one can answer any more.
    pub(super) fn answered(&mut self, answer: Option<Decision>) {
        let decision = answer.unwrap_or(Decision::Refuse {
            reason: Some("nobody is there to answer".into()),
        });
        if let Some((question, reply, since)) = self.asked.take() {
            self.waited += since.elapsed();
            if decision == Decision::Always {
                lock(self.policy).remember_question(self.name, &question);
            }
            let _ = reply.send(decision);
        }
    }
}
