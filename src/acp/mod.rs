//! `waypoint acp`: Waypoint as an Agent Client Protocol agent over stdio,
//! for editors (Zed, JetBrains IDEs, Neovim plugins) and other ACP
//! clients. Built on the protocol's official Rust SDK. Each ACP session is
//! a Waypoint engine driven through the seam like the app drives its own:
//! the client's prompt is an `Op::Submit`, the engine's events become
//! session updates (`translate`, `plan`), its approval questions
//! `session/request_permission` (`permission`), its approval modes the
//! session's modes (`modes`).
//!
//! The handlers answer at once and leave long work (a turn, starting an
//! engine) to tasks of their own: the SDK runs handlers in its dispatch
//! loop, and a cancel must get through while a prompt runs.

mod files;
mod modes;
mod permission;
pub mod plan;
mod prompt;
mod server;
mod session;
mod terminal;
pub mod translate;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, JsonRpcResponse, Stdio, on_receive_notification, on_receive_request,
};
use color_eyre::eyre::{Result, eyre};

pub use plan::CHILD_MARK;
pub use server::Server;

use crate::cli::Cli;
use crate::config::{ConfigFile, Settings};
use crate::session::SessionStore;

/// Serves ACP on stdin and stdout until the client closes them; every
/// session's engine is stopped then (a running command with its process
/// group).
pub async fn serve(
    cli: Cli,
    settings: Settings,
    file: Option<ConfigFile>,
    store: SessionStore,
) -> Result<i32> {
    let factory = crate::launch::settings_factory(&cli, file, false);
    let server = Arc::new(Server::new(cli, settings, store, factory));
    let (s_init, s_new, s_load, s_prompt, s_mode, s_cancel) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
    );
    let served = Agent
        .v1()
        .name("waypoint")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                s_init.set_client(request.client_capabilities);
                responder.respond(initialized())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let place = (request.cwd, None, request.mcp_servers);
                open(s_new.clone(), cx, place, responder, |session| {
                    NewSessionResponse::new(session.id()).modes(modes::state(session.mode()))
                });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let id = request.session_id.0.to_string();
                let place = (request.cwd, Some(id), request.mcp_servers);
                open(s_load.clone(), cx, place, responder, |session| {
                    LoadSessionResponse::new().modes(modes::state(session.mode()))
                });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| {
                let started = s_prompt.session(&request.session_id.0).and_then(|session| {
                    let input = prompt::input(&request.prompt, &session.root);
                    session.prompt(input.text, input.images)
                });
                match started {
                    Ok(ended) => {
                        tokio::spawn(async move {
                            let _ = match ended.await {
                                Ok(Ok(stop)) => responder.respond(PromptResponse::new(stop)),
                                Ok(Err(e)) => responder.respond_with_internal_error(e),
                                Err(_) => {
                                    responder.respond_with_internal_error("the turn was lost")
                                }
                            };
                        });
                        Ok(())
                    }
                    Err(e) => responder.respond_with_internal_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                let Some(mode) = modes::parse(&request.mode_id) else {
                    return responder.respond_with_internal_error(format!(
                        "no mode {} (the modes: read-only, plan, ask, auto-edit, auto, yolo)",
                        request.mode_id.0
                    ));
                };
                match s_mode
                    .session(&request.session_id.0)
                    .and_then(|s| s.set_mode(mode))
                {
                    Ok(()) => responder.respond(SetSessionModeResponse::new()),
                    Err(e) => responder.respond_with_internal_error(e),
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                if let Ok(session) = s_cancel.session(&cancel.session_id.0) {
                    let _ = session.send(crate::events::Op::Interrupt);
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    server.stop_all().await;
    served.map(|()| 0).map_err(|e| eyre!("acp: {e}"))
}

/// Where a session opens: the client's folder, the stored session to
/// load (none: a new one), the client's MCP servers.
type Place = (PathBuf, Option<String>, Vec<McpServer>);

/// Starts a session in the background; once it is ready the client gets
/// `answer` (or why it failed), then what was held for it.
fn open<T: JsonRpcResponse>(
    server: Arc<Server>,
    cx: ConnectionTo<Client>,
    (cwd, load, servers): Place,
    responder: Responder<T>,
    answer: fn(&session::Session) -> T,
) {
    tokio::spawn(async move {
        match server
            .start(cx.clone(), &cwd, load.as_deref(), &servers)
            .await
        {
            Ok(session) => {
                let _ = responder.respond(answer(&session));
                session.known(&cx);
            }
            Err(e) => {
                let _ = responder.respond_with_internal_error(e);
            }
        }
    });
}

/// What Waypoint offers: stored sessions to load, images and embedded
/// context in prompts, the client's MCP servers over stdio and HTTP.
fn initialized() -> InitializeResponse {
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true));
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .agent_info(Implementation::new("waypoint", env!("CARGO_PKG_VERSION")).title("Waypoint"))
}
