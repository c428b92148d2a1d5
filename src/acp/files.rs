//! The editor's files: when the client offers `fs/read_text_file` and
//! `fs/write_text_file`, the session's file tools read its buffers (unsaved
//! changes included) and write through it (`crate::tools::editor`), after
//! every check of their own.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use futures_util::future::BoxFuture;

use crate::tools::editor::EditorFiles;

/// The client as the file tools' editor, for one session.
#[derive(Debug)]
pub struct ClientFiles {
    pub cx: ConnectionTo<Client>,
    /// The session's id, known once its engine started (before any tool runs).
    pub session: Arc<OnceLock<SessionId>>,
}

impl ClientFiles {
    fn session(&self) -> Result<SessionId, String> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| "the session has not started".to_string())
    }
}

impl EditorFiles for ClientFiles {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session()?, path.to_path_buf());
            match self.cx.send_request(request).block_task().await {
                Ok(response) => Ok(Some(response.content)),
                Err(e) => Err(format!("the editor could not read {}: {e}", path.display())),
            }
        })
    }

    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let request =
                WriteTextFileRequest::new(self.session()?, path.to_path_buf(), text.to_string());
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|e| format!("the editor could not write {}: {e}", path.display()))
        })
    }
}
