//! One ACP session: a Waypoint engine and the pump that turns its events
//! into the client's session updates, asks the client the engine's
//! approval questions, and ends the client's prompt when the turn ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionId, SessionNotification, SessionUpdate, StopReason,
};
use tokio::sync::{mpsc::UnboundedReceiver, mpsc::UnboundedSender, oneshot};

use super::permission::{self, Question};
use super::translate::Translator;
use crate::events::{AbortReason, ApprovalMode, Envelope, Event, Op};

/// How a prompt ended: the stop reason, or an error the client reads.
pub type TurnEnd = Result<StopReason, String>;

/// A session the server holds.
#[derive(Debug)]
pub struct Session {
    id: Arc<std::sync::OnceLock<SessionId>>,
    pub ops: UnboundedSender<Op>,
    pub root: PathBuf,
    /// The running prompt's answer, taken when its turn ends.
    prompt: Mutex<Option<oneshot::Sender<TurnEnd>>>,
    mode: Mutex<ApprovalMode>,
    proposed: AtomicBool,
    /// Updates made before the client knows the session (its commands,
    /// say): sent once the answer to `session/new` or `session/load` is.
    held: Mutex<Option<Vec<SessionUpdate>>>,
}

/// What the pump tells whoever waits for the session to be ready: its id
/// (after its start, or its replayed history), or why it failed.
pub type Ready = oneshot::Sender<Result<String, String>>;

impl Session {
    /// `id`: shared with whatever must name the session before its
    /// start is known here (the editor's files).
    pub fn new(
        id: Arc<std::sync::OnceLock<SessionId>>,
        ops: UnboundedSender<Op>,
        root: PathBuf,
        mode: ApprovalMode,
    ) -> Self {
        Self {
            id,
            ops,
            root,
            prompt: Mutex::new(None),
            mode: Mutex::new(mode),
            proposed: AtomicBool::new(false),
            held: Mutex::new(Some(Vec::new())),
        }
    }

    /// The session's id: the stored session's, known once it started.
    pub fn id(&self) -> SessionId {
        self.id.get().cloned().unwrap_or_else(|| SessionId::new(""))
    }

    /// Resolves once the engine is gone.
    pub async fn stopped(&self) {
        self.ops.closed().await;
    }

    pub fn mode(&self) -> ApprovalMode {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a turn with `text` (and `images`); the receiver gets how it
    /// ended. A session runs one prompt at a time.
    pub fn prompt(
        &self,
        text: String,
        images: Vec<crate::chat::ImageSource>,
    ) -> Result<oneshot::Receiver<TurnEnd>, String> {
        let mut slot = self.prompt.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|s| !s.is_closed()) {
            return Err("this session is already working on a prompt".to_string());
        }
        let (tx, rx) = oneshot::channel();
        *slot = Some(tx);
        if !images.is_empty() {
            self.send(Op::Attach { images })?;
        }
        self.send(Op::Submit { text })?;
        Ok(rx)
    }

    /// The client switched the session's mode: a proposed plan is approved
    /// into a working mode; otherwise the mode changes.
    pub fn set_mode(&self, mode: ApprovalMode) -> Result<(), String> {
        let working = !matches!(mode, ApprovalMode::Plan | ApprovalMode::ReadOnly);
        if working && self.proposed.load(Ordering::SeqCst) {
            return self.send(Op::ApprovePlan {
                mode: Some(mode),
                fresh: false,
                items: None,
            });
        }
        self.send(Op::SetApproval { mode })
    }

    /// The client has the session now: what was held for it goes out,
    /// and from now on every update at once.
    pub fn known(&self, cx: &ConnectionTo<Client>) {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).take();
        for update in held.unwrap_or_default() {
            notify(cx, self.id(), update);
        }
    }

    /// Sends `update`, or holds it while the client does not know the session.
    fn update(&self, cx: &ConnectionTo<Client>, update: SessionUpdate) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        match held.as_mut() {
            Some(list) => list.push(update),
            None => {
                drop(held);
                notify(cx, self.id(), update);
            }
        }
    }

    pub fn send(&self, op: Op) -> Result<(), String> {
        self.ops
            .send(op)
            .map_err(|_| "the session's engine has stopped".to_string())
    }

    fn finish(&self, end: TurnEnd) {
        let taken = self.prompt.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(tx) = taken {
            let _ = tx.send(end);
        }
    }
}

/// The engine's events, as long as it runs: updates to the client,
/// questions asked, prompts ended. `ready` is told once the session can
/// be answered: at its start, or (`load`) after its history was replayed.
pub struct Pump {
    pub events: UnboundedReceiver<Envelope>,
    pub translator: Translator,
    pub cx: ConnectionTo<Client>,
    pub session: Arc<Session>,
    pub ready: Option<Ready>,
    pub load: bool,
}

impl Pump {
    pub async fn run(mut self) {
        while let Some(envelope) = self.events.recv().await {
            self.handle(&envelope);
        }
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(
                "the engine stopped before the session started".to_string()
            ));
        }
        self.session
            .finish(Err("the session's engine stopped".to_string()));
    }

    fn handle(&mut self, envelope: &Envelope) {
        let root = envelope.thread.0 == 0;
        match &envelope.event {
            Event::SessionStarted { id, .. } if root => {
                let _ = self.session.id.set(SessionId::new(id.as_str()));
                if !self.load {
                    self.ready(Ok(id.clone()));
                }
            }
            // A stored session that cannot be restored says why, and its
            // load fails; a new session's start notes are not failures.
            Event::Error { message, .. } if self.load && self.ready.is_some() => {
                self.ready(Err(message.clone()));
            }
            Event::ApprovalRequested {
                id,
                name,
                summary,
                command,
                cwd,
                reason,
            } => {
                let question = Question {
                    id,
                    name,
                    summary,
                    command: command.as_deref(),
                    cwd,
                    reason,
                };
                let request =
                    permission::request(&self.session.id(), &self.session.root, &question);
                ask(self.cx.clone(), self.session.clone(), id.clone(), request);
            }
            Event::ApprovalMode { mode, .. } if root => {
                *self.session.mode.lock().unwrap_or_else(|e| e.into_inner()) = *mode;
            }
            _ => {}
        }
        // A loaded session's history goes before the answer to the load;
        // anything else waits until the client knows the session.
        let history = matches!(envelope.event, Event::History { .. });
        for update in self.translator.updates(envelope) {
            if history {
                notify(&self.cx, self.session.id(), update);
            } else {
                self.session.update(&self.cx, update);
            }
        }
        self.session
            .proposed
            .store(self.translator.plans.is_proposed(), Ordering::SeqCst);
        match &envelope.event {
            Event::History { .. } if self.load => {
                let id = self.session.id().0.to_string();
                self.ready(Ok(id));
            }
            Event::TurnComplete { stop_reason, .. } if root => {
                self.session.finish(Ok(stop(stop_reason)));
            }
            Event::TurnAborted {
                reason, message, ..
            } if root => self.session.finish(aborted(*reason, message)),
            _ => {}
        }
    }

    fn ready(&mut self, result: Result<String, String>) {
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(result);
        }
    }
}

fn notify(cx: &ConnectionTo<Client>, session: SessionId, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(session, update)) {
        tracing::warn!(error = %e, "acp: cannot send a session update");
    }
}

/// Asks the client, in the background (the pump goes on), and gives the
/// engine its answer; a question the client cannot answer refuses.
fn ask(
    cx: ConnectionTo<Client>,
    session: Arc<Session>,
    id: String,
    request: agent_client_protocol::v1::schema::RequestPermissionRequest,
) {
    tokio::spawn(async move {
        let (decision, stop) = match cx.send_request(request).block_task().await {
            Ok(answer) => permission::decision(&answer),
            Err(e) => (
                crate::events::Decision::Refuse {
                    reason: Some(format!("the editor did not answer: {e}")),
                },
                false,
            ),
        };
        let _ = session.send(Op::Approve { id, decision });
        if stop {
            let _ = session.send(Op::Interrupt);
        }
    });
}

fn stop(reason: &crate::events::StopReason) -> StopReason {
    use crate::events::StopReason as Ours;
    match reason {
        Ours::MaxTokens => StopReason::MaxTokens,
        Ours::Refusal => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

fn aborted(reason: AbortReason, message: &str) -> TurnEnd {
    match reason {
        AbortReason::Interrupted => Ok(StopReason::Cancelled),
        AbortReason::MaxTurns => Ok(StopReason::MaxTurnRequests),
        AbortReason::Hook => Ok(StopReason::EndTurn),
        AbortReason::Failed => Err(message.to_string()),
    }
}
