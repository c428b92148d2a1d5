//! The editor's terminals: with `acp_terminal = "editor"`, when the client
//! offers `terminal/*`, a `bash` command that does not run in the sandbox
//! runs in a terminal of the client's (`crate::tools::editor`), after every
//! check of Waypoint's. The call shows it: this sends the client a
//! `tool_call_update` embedding the terminal as soon as it exists, and
//! records it in the session's [`Terminals`] so the translation of the
//! call's later updates keeps it there.

use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, SessionId,
    SessionNotification, SessionUpdate, Terminal, TerminalExitStatus, TerminalOutputRequest,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use futures_util::future::BoxFuture;

use super::translate::{Terminals, call_id};
use crate::tools::editor::{EditorTerminal, TerminalExit, TerminalOutput, TerminalRun};

/// The client as the `bash` tool's terminals, for one session.
#[derive(Debug)]
pub struct ClientTerminal {
    pub cx: ConnectionTo<Client>,
    /// The session's id, known once its engine started (before any tool runs).
    pub session: Arc<OnceLock<SessionId>>,
    /// Shared with the session's translation.
    pub terminals: Terminals,
}

impl ClientTerminal {
    fn session(&self) -> Result<SessionId, String> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| "the session has not started".to_string())
    }

    /// Shows the terminal in the call that runs it. The call's id comes
    /// with the command (the engine's thread and call id, named as the
    /// translation names them), so two commands running at once each get
    /// theirs. The engine announces a call before running it and the
    /// session's pump forwards that at once, while this waits for the
    /// client to create the terminal first: the update follows the call's
    /// start.
    fn show(&self, session: SessionId, call: &str, terminal: &str) {
        self.terminals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(call.to_string(), terminal.to_string());
        let content = vec![ToolCallContent::Terminal(Terminal::new(
            terminal.to_string(),
        ))];
        let fields = ToolCallUpdateFields::new().content(content);
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call.to_string(), fields));
        if let Err(e) = self
            .cx
            .send_notification(SessionNotification::new(session, update))
        {
            tracing::warn!(error = %e, "acp: cannot show the terminal in its call");
        }
    }
}

fn exit_of(status: TerminalExitStatus) -> TerminalExit {
    TerminalExit {
        code: status.exit_code,
        signal: status.signal,
    }
}

impl EditorTerminal for ClientTerminal {
    fn create<'a>(&'a self, run: TerminalRun<'a>) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let session = self.session()?;
            let env = run
                .env
                .iter()
                .map(|(name, value)| EnvVariable::new(name.clone(), value.clone()))
                .collect();
            let request = CreateTerminalRequest::new(session.clone(), "bash")
                .args(vec!["-c".to_string(), run.command.to_string()])
                .env(env)
                .cwd(run.cwd.to_path_buf())
                .output_byte_limit(u64::try_from(run.output_limit).unwrap_or(u64::MAX));
            let created = self
                .cx
                .send_request(request)
                .block_task()
                .await
                .map_err(|e| format!("the editor could not create a terminal: {e}"))?;
            let terminal = created.terminal_id.0.to_string();
            if let Some((thread, id)) = run.call {
                self.show(session, &call_id(thread, id), &terminal);
            }
            Ok(terminal)
        })
    }

    fn output<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalOutput, String>> {
        Box::pin(async move {
            let request = TerminalOutputRequest::new(self.session()?, id.to_string());
            let response = self
                .cx
                .send_request(request)
                .block_task()
                .await
                .map_err(|e| format!("the editor did not give the terminal's output: {e}"))?;
            Ok(TerminalOutput {
                output: response.output,
                truncated: response.truncated,
                exit: response.exit_status.map(exit_of),
            })
        })
    }

    fn wait<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<TerminalExit, String>> {
        Box::pin(async move {
            let request = WaitForTerminalExitRequest::new(self.session()?, id.to_string());
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|r| exit_of(r.exit_status))
                .map_err(|e| format!("waiting for the editor's terminal failed: {e}"))
        })
    }

    fn kill<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let request = KillTerminalRequest::new(self.session()?, id.to_string());
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|e| format!("the editor could not kill the terminal's command: {e}"))
        })
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let request = ReleaseTerminalRequest::new(self.session()?, id.to_string());
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|e| format!("the editor could not release the terminal: {e}"))
        })
    }
}
