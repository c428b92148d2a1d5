//! What the ACP server holds: the settings every session starts from, the
//! client's capabilities, and the sessions by id. Starting one is what the
//! app and headless mode do (`crate::launch`), in the folder the client
//! names, with the client's MCP servers beside the configured ones.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ClientCapabilities, McpServer};
use tokio::sync::oneshot;

use super::files::ClientFiles;
use super::session::{Pump, Session};
use super::terminal::ClientTerminal;
use super::translate::{Terminals, Translator};
use crate::agent::{Agent, ClientFactory, ModelChoice};
use crate::cli::Cli;
use crate::config::{AcpTerminal, McpServerConfig, Settings};
use crate::events::Op;
use crate::launch;
use crate::resume::Choice;
use crate::session::SessionStore;
use crate::setup::{self, SettingsFactory};

/// The server's state, shared by the handlers.
pub struct Server {
    pub cli: Cli,
    pub settings: Settings,
    pub store: SessionStore,
    pub factory: Arc<SettingsFactory>,
    caps: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl Server {
    pub fn new(
        cli: Cli,
        settings: Settings,
        store: SessionStore,
        factory: Arc<SettingsFactory>,
    ) -> Self {
        Self {
            cli,
            settings,
            store,
            factory,
            caps: Mutex::new(ClientCapabilities::default()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    pub fn set_client(&self, caps: ClientCapabilities) {
        *self.caps.lock().unwrap_or_else(|e| e.into_inner()) = caps;
    }

    fn plan_ids(&self) -> bool {
        self.caps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .plan
            .is_some()
    }

    /// The client reads and writes text files: the file tools go through it.
    fn editor_files(&self) -> bool {
        let caps = self.caps.lock().unwrap_or_else(|e| e.into_inner());
        caps.fs.read_text_file && caps.fs.write_text_file
    }

    /// Commands outside the sandbox run in the client's terminals: the
    /// settings ask for it and the client offers them.
    fn editor_terminal(&self) -> bool {
        let caps = self.caps.lock().unwrap_or_else(|e| e.into_inner());
        self.settings.acp_terminal == AcpTerminal::Editor && caps.terminal
    }

    pub fn session(&self, id: &str) -> Result<Arc<Session>, String> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.get(id).cloned().ok_or_else(|| {
            format!("no session {id} here (start one with session/new or session/load)")
        })
    }

    /// Starts an engine in `cwd` (a new session, or the stored one `load`
    /// names), and answers once it is ready: for a load, after its history
    /// went to the client.
    pub async fn start(
        self: &Arc<Self>,
        cx: ConnectionTo<Client>,
        cwd: &Path,
        load: Option<&str>,
        servers: &[McpServer],
    ) -> Result<Arc<Session>, String> {
        if !cwd.is_absolute() {
            return Err(format!(
                "cwd must be an absolute path, not {}",
                cwd.display()
            ));
        }
        if let Some(id) = load {
            let open = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if !id.is_empty() && open.keys().any(|k| k.starts_with(id)) {
                return Err(format!("session {id} is open here already"));
            }
        }
        let choice = load.map(|id| Choice::Id(id.to_string()));
        let (workspace, setup_kind, resumed_in) =
            launch::open_session(&self.cli, &self.store, choice.as_ref(), cwd.to_path_buf())
                .map_err(|e| format!("{e:#}"))?;
        let mut config = setup::agent_config(&self.settings);
        for server in servers {
            let (name, entry) = mcp_entry(server)?;
            config.tools.mcp.servers.insert(name, entry);
        }
        config.tools.mcp.wait_at_start = true;
        let _ = launch::settle_safety(
            &self.settings,
            &mut config,
            &workspace,
            (true, false),
            resumed_in,
        );
        let mode = config.approval;
        let id = Arc::new(std::sync::OnceLock::new());
        if self.editor_files() {
            let files = ClientFiles {
                cx: cx.clone(),
                session: id.clone(),
            };
            config.tools.files.editor = Some(Arc::new(files));
        }
        let terminals = Terminals::default();
        if self.editor_terminal() {
            let terminal = ClientTerminal {
                cx: cx.clone(),
                session: id.clone(),
                terminals: terminals.clone(),
            };
            config.tools.bash.editor = Some(Arc::new(terminal));
        }
        let client = self
            .factory
            .build(&ModelChoice::default(), false)
            .map_err(|e| e.to_string())?;
        let root = workspace.root().to_path_buf();
        let handle = Agent::builder(client, workspace)
            .factory(self.factory.clone())
            .config(config)
            .session(setup_kind)
            .spawn()
            .map_err(|e| e.to_string())?;
        let (ready_tx, ready) = oneshot::channel();
        let session = Arc::new(Session::new(id, handle.ops.clone(), root.clone(), mode));
        let mut translator = Translator::new(&root, self.plan_ids(), mode);
        translator.terminals = terminals;
        let pump = Pump {
            events: handle.events,
            translator,
            cx,
            session: session.clone(),
            ready: Some(ready_tx),
            load: load.is_some(),
        };
        tokio::spawn(pump.run());
        let started = match ready.await {
            Ok(result) => result,
            Err(_) => Err("the session did not start".to_string()),
        };
        match started {
            Ok(id) => {
                let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
                sessions.insert(id, session.clone());
                Ok(session)
            }
            Err(e) => {
                let _ = handle.ops.send(Op::Quit);
                Err(e)
            }
        }
    }

    /// Stops every session's engine (the client went away): a running
    /// command is killed with its process group.
    pub async fn stop_all(&self) {
        let sessions: Vec<Arc<Session>> = {
            let mut map = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            map.drain().map(|(_, s)| s).collect()
        };
        for session in &sessions {
            let _ = session.send(Op::Quit);
        }
        for session in sessions {
            session.stopped().await;
        }
    }
}

/// A client's MCP server as a configured one.
fn mcp_entry(server: &McpServer) -> Result<(String, McpServerConfig), String> {
    match server {
        McpServer::Stdio(s) => Ok((
            s.name.clone(),
            McpServerConfig {
                command: Some(s.command.display().to_string()),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                ..McpServerConfig::default()
            },
        )),
        McpServer::Http(h) => Ok((
            h.name.clone(),
            McpServerConfig {
                url: Some(h.url.clone()),
                headers: h
                    .headers
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                ..McpServerConfig::default()
            },
        )),
        McpServer::Sse(s) => Err(format!(
            "MCP server {}: SSE transport is not supported (use Streamable HTTP or stdio)",
            s.name
        )),
        _ => Err("an MCP server of a transport Waypoint does not know".to_string()),
    }
}
