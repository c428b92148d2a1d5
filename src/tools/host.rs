//! What a running tool may ask of the host it runs in: tell the user how
//! it is getting on, and ask the user a question of its own. Requests go by
//! message to the call pipeline, which serves them while the tool runs (it
//! holds the outbox, the approval policy and the user's answers), so a tool
//! holds no engine type and an MCP tool or a `task` tool is an ordinary
//! [`Tool`](super::Tool).

use tokio::sync::{mpsc::UnboundedSender, oneshot};

use super::task::Subagents;
use crate::events::Decision;

/// A request from a running tool to its host.
#[derive(Debug)]
pub enum HostRequest {
    /// How the call is getting on, in one line (shown with the call).
    Progress(String),
    /// A question for the user about this call; the answer goes back on
    /// `answer` (dropped unanswered when the turn is interrupted).
    Ask {
        question: String,
        answer: oneshot::Sender<Decision>,
    },
}

/// The host handle a tool gets with its call.
#[derive(Clone, Copy, Default)]
pub struct ToolHost<'a> {
    requests: Option<&'a UnboundedSender<HostRequest>>,
    subagents: Option<&'a dyn Subagents>,
    jobs: Option<&'a std::sync::Arc<super::jobs::Jobs>>,
    /// The model the call's result goes to, and whether it takes images.
    model: Option<(&'a str, bool)>,
    /// The images the reply's calls may still show.
    image_budget: Option<&'a super::image_budget::ImageBudget>,
}

impl<'a> ToolHost<'a> {
    /// A handle whose requests go to `requests`.
    pub fn new(requests: &'a UnboundedSender<HostRequest>) -> Self {
        Self {
            requests: Some(requests),
            subagents: None,
            jobs: None,
            model: None,
            image_budget: None,
        }
    }

    /// The same host, able to run subagents for the call.
    pub fn with_subagents(self, subagents: &'a dyn Subagents) -> Self {
        Self {
            subagents: Some(subagents),
            ..self
        }
    }

    /// The same host, keeping the session's background jobs.
    pub fn with_jobs(self, jobs: &'a std::sync::Arc<super::jobs::Jobs>) -> Self {
        Self {
            jobs: Some(jobs),
            ..self
        }
    }

    /// The same host, whose results go to `model` (`images`: it takes them).
    pub fn with_model(self, model: &'a str, images: bool) -> Self {
        Self {
            model: Some((model, images)),
            ..self
        }
    }

    /// The same host, whose images come out of the reply's `budget`.
    pub fn with_image_budget(self, budget: &'a super::image_budget::ImageBudget) -> Self {
        Self {
            image_budget: Some(budget),
            ..self
        }
    }

    /// Whether the reply may show another image; `Err` says why not and
    /// what to do. Without a budget (a tool run outside a reply), always.
    pub fn image_room(&self) -> Result<(), String> {
        self.image_budget.map_or(Ok(()), |b| b.room())
    }

    /// Takes an image of `bytes` from the reply's budget; `Err` (nothing
    /// taken): the budget is spent, and what to do.
    pub fn take_image(&self, bytes: usize) -> Result<(), String> {
        self.image_budget.map_or(Ok(()), |b| b.take(bytes))
    }

    /// Whether the model the result goes to takes images; `Err` says why
    /// not, naming it.
    pub fn images(&self) -> Result<(), String> {
        match self.model {
            Some((_, true)) => Ok(()),
            Some((model, false)) => Err(format!(
                "the model `{model}` does not take images (switch with /model to one that does, e.g. claude-sonnet-4-5 or gpt-4.1; if it does, set `images = true`)"
            )),
            None => Err("no model is there to see images".to_string()),
        }
    }

    /// The session's background jobs, where there are any.
    pub fn jobs(&self) -> Option<&'a std::sync::Arc<super::jobs::Jobs>> {
        self.jobs
    }

    /// What runs subagents for the call, where there is one.
    pub fn subagents(&self) -> Option<&'a dyn Subagents> {
        self.subagents
    }

    /// No host (a tool run outside the engine): progress goes nowhere and
    /// questions are refused.
    pub fn detached() -> Self {
        Self::default()
    }

    /// Tells the user how the call is getting on (`message`: one line).
    pub fn progress(&self, message: impl Into<String>) {
        if let Some(requests) = self.requests {
            let _ = requests.send(HostRequest::Progress(message.into()));
        }
    }

    /// Asks the user `question` about this call, as an approval (the mode
    /// may answer for them: yolo allows, read-only refuses). `None`: the
    /// turn was interrupted first.
    pub async fn ask(&self, question: impl Into<String>) -> Option<Decision> {
        let Some(requests) = self.requests else {
            return Some(Decision::Refuse {
                reason: Some("no one is there to ask".into()),
            });
        };
        let (answer, answered) = oneshot::channel();
        let question = question.into();
        if requests
            .send(HostRequest::Ask { question, answer })
            .is_err()
        {
            return None;
        }
        answered.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_detached_host_refuses_and_drops_progress() {
        let host = ToolHost::detached();
        host.progress("ignored");
        assert!(matches!(
            host.ask("may I?").await,
            Some(Decision::Refuse { .. })
        ));
    }

    #[tokio::test]
    async fn requests_reach_the_host_and_answers_come_back() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let host = ToolHost::new(&tx);
        host.progress("half way");
        let serve = async {
            let Some(HostRequest::Progress(p)) = rx.recv().await else {
                panic!("progress first")
            };
            assert_eq!(p, "half way");
            let Some(HostRequest::Ask { question, answer }) = rx.recv().await else {
                panic!("then the question")
            };
            assert_eq!(question, "may I?");
            answer.send(Decision::Once).unwrap();
            // A question nobody answers (the turn was interrupted).
            let Some(HostRequest::Ask { answer, .. }) = rx.recv().await else {
                panic!("a second question")
            };
            drop(answer);
        };
        let ask = async {
            let first = host.ask("may I?").await;
            let second = host.ask("again?").await;
            (first, second)
        };
        let ((), (first, second)) = tokio::join!(serve, ask);
        assert_eq!(first, Some(Decision::Once));
        assert_eq!(second, None);
    }
}
