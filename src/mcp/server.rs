//! One MCP server: over stdio, started as a contained child (its own
//! session and process group, no terminal, killed with Waypoint), spoken
//! to with the official SDK (`rmcp`) over its pipes, and stopped with its
//! whole group (SIGTERM, then SIGKILL); or over Streamable HTTP ([`http`]),
//! its session ended when it is dropped. Invariant: a server that fails to
//! start says why in one line, with the tail of what it printed on stderr.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool as McpToolDef;
use rmcp::service::{Peer, RoleClient, RunningService};
use rustix::process::{Pid, Signal};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc::UnboundedSender;

use super::{McpServerConfig, http};
use crate::tools::spawn;

/// Bytes of a server's stderr kept for its error reports.
const STDERR_TAIL: usize = 4096;

/// How long a stopped server's group has after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Waypoint's own provider keys: a server inherits the rest of the
/// environment (it may need its own keys from there, as in the other
/// agents), and gets what its `env` sets.
fn is_provider_key(name: &std::ffi::OsStr) -> bool {
    matches!(
        name.to_str(),
        Some("ANTHROPIC_API_KEY" | "OPENAI_API_KEY" | "WAYPOINT_API_KEY")
    )
}

/// The last bytes a server wrote on stderr.
#[derive(Clone, Debug, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(bytes);
        let over = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..over);
    }

    /// The tail as text, its last lines.
    pub fn text(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_string()
    }
}

/// What is called when a server says its list of tools changed
/// (`notifications/tools/list_changed`).
pub type OnToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// The calls of a server in flight, and where each one's progress lines
/// go. The SDK puts its own progress token on every request and does not
/// say which, so a report reaches a call only while it is the server's one
/// call in flight (with several, whose it is cannot be told: it is dropped).
#[derive(Clone, Default)]
pub struct Progress(Arc<Mutex<Vec<Watcher>>>);

/// A call in flight: its number and where its lines go.
type Watcher = (u64, UnboundedSender<String>);

impl Progress {
    /// A call in flight whose lines go to `lines`, until [`Progress::forget`]
    /// with the number this returns.
    pub fn watch(&self, lines: UnboundedSender<String>) -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, lines));
        id
    }

    pub fn forget(&self, id: u64) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(i, _)| *i != id);
    }

    fn tell(&self, line: String) {
        let calls = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let [(_, lines)] = calls.as_slice() {
            let _ = lines.send(line);
        }
    }
}

/// A progress report as one line: `3/5 downloading`, `3 of ?`.
fn progress_line(p: &rmcp::model::ProgressNotificationParam) -> String {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            format!("{n:.1}")
        }
    };
    let count = match p.total {
        Some(total) => format!("{}/{}", number(p.progress), number(total)),
        None => number(p.progress),
    };
    match p
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        Some(message) => format!("{count} {message}"),
        None => count,
    }
}

/// Waypoint's side of a connection: it names itself, passes a changed
/// list of tools on, and a call's progress reports to the call.
pub struct Handler {
    on_tools_changed: Option<OnToolsChanged>,
    progress: Progress,
}

impl Handler {
    pub fn new(on_tools_changed: Option<OnToolsChanged>) -> Self {
        Self {
            on_tools_changed,
            progress: Progress::default(),
        }
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("waypoint", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        if let Some(changed) = &self.on_tools_changed {
            changed();
        }
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.progress.tell(progress_line(&params));
    }
}

/// A server that answered `initialize` and `tools/list`.
pub struct Running {
    pub name: String,
    pub tools: Vec<McpToolDef>,
    pub stderr: StderrTail,
    service: Option<RunningService<RoleClient, Handler>>,
    group: i32,
    child: Option<spawn::Child>,
}

impl Running {
    /// The server's process group (it leads it).
    pub fn group(&self) -> i32 {
        self.group
    }

    /// Who to send requests to (cheap to clone, shared by the tools).
    pub fn peer(&self) -> Option<Peer<RoleClient>> {
        self.service.as_ref().map(|s| s.peer().clone())
    }

    /// Where the server's progress reports of a call go (shared by the
    /// tools).
    pub fn progress(&self) -> Progress {
        self.service
            .as_ref()
            .map(|s| s.service().progress.clone())
            .unwrap_or_default()
    }
}

impl Drop for Running {
    /// The SDK's service is cancelled, and the server's whole group gets
    /// SIGTERM, then SIGKILL if anything of it is left after the grace.
    fn drop(&mut self) {
        // Dropping the service cancels it (and its task).
        drop(self.service.take());
        stop_group(self.group);
        if let Some(child) = self.child.take() {
            // Reaped by the child's own drop (killed if still there).
            drop(child);
        }
    }
}

/// SIGTERM to the group now, SIGKILL after the grace on a thread of its own
/// (a drop may happen while the runtime shuts down).
fn stop_group(group: i32) {
    if group <= 1 {
        return;
    }
    // The process group the server leads (setsid in the child).
    let Some(group) = Pid::from_raw(group) else {
        return;
    };
    if rustix::process::kill_process_group(group, Signal::TERM).is_err() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("mcp-stop".into())
        .spawn(move || {
            std::thread::sleep(STOP_GRACE);
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        });
}

/// Stops a server's group when dropped, unless disarmed: a start that is
/// abandoned half-way (the engine ended while the server was still
/// starting) leaves nothing behind.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0.take() {
            stop_group(group);
        }
    }
}

/// The innermost reason of an SDK error (the outer ones name the SDK's
/// types: "Send message error Transport [rmcp::…] error: …"), as one line.
pub fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = error;
    while let Some(source) = inner.source() {
        inner = source;
    }
    let text = inner.to_string();
    // Without a source, the SDK's own wording: its type names cut out.
    match (text.find(" ["), text.rfind("] ")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &text[..a], &text[b + 1..]),
        _ => text,
    }
    .lines()
    .next()
    .unwrap_or_default()
    .to_string()
}

/// Why `initialize` failed, in the transport's words when it was the
/// transport (the SDK's wrapper does not chain it as a source).
fn init_error(error: &rmcp::service::ClientInitializeError) -> String {
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            root_cause(error.error.as_ref())
        }
        other => root_cause(other),
    }
}

/// Why a server did not start: one line, and its stderr's tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartError {
    pub message: String,
    pub stderr: String,
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if !self.stderr.is_empty() {
            let last = self.stderr.lines().last().unwrap_or_default();
            write!(f, " (stderr: {last})")?;
        }
        Ok(())
    }
}

/// Starts the server `name`: a stdio server (`command`) in a neutral
/// folder (its `cwd`, when set, relative to `workspace`), or a Streamable HTTP
/// server (`url`); initializes it and lists its tools.
pub async fn start(
    name: &str,
    config: &McpServerConfig,
    workspace: &std::path::Path,
) -> Result<Running, StartError> {
    start_with(name, config, workspace, Handler::new(None)).await
}

/// [`start`], with `handler` answering the server.
pub async fn start_with(
    name: &str,
    config: &McpServerConfig,
    workspace: &std::path::Path,
    handler: Handler,
) -> Result<Running, StartError> {
    match (&config.command, &config.url) {
        (Some(program), None) => start_stdio(name, program, config, workspace, handler).await,
        (None, Some(url)) => start_http(name, url, config, handler).await,
        (Some(_), Some(_)) => Err(StartError {
            message: "both `command` and `url` are set: a server is one or the other".into(),
            stderr: String::new(),
        }),
        (None, None) => Err(StartError {
            message: "neither `command` (stdio) nor `url` (Streamable HTTP) is set".into(),
            stderr: String::new(),
        }),
    }
}

async fn start_http(
    name: &str,
    url: &str,
    config: &McpServerConfig,
    handler: Handler,
) -> Result<Running, StartError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let fail = |message: String| StartError {
        message,
        stderr: String::new(),
    };
    let parsed =
        reqwest::Url::parse(url).map_err(|e| fail(format!("`{url}` is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(fail(format!("`{url}` is not an http or https URL")));
    }
    let (headers, token) = http::headers(config).map_err(fail)?;
    let client = http::Client::new(config.startup_timeout()).map_err(fail)?;
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    if let Some(token) = token {
        transport = transport.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(client, transport);
    let service = handler
        .serve(transport)
        .await
        .map_err(|e| fail(format!("did not initialize at {url}: {}", init_error(&e))))?;
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| fail(format!("tools/list failed: {e}")))?;
    Ok(Running {
        name: name.to_string(),
        tools,
        stderr: StderrTail::default(),
        service: Some(service),
        group: 0,
        child: None,
    })
}

async fn start_stdio(
    name: &str,
    program: &str,
    config: &McpServerConfig,
    workspace: &std::path::Path,
    handler: Handler,
) -> Result<Running, StartError> {
    let fail = |message: String, stderr: &StderrTail| StartError {
        message,
        stderr: stderr.text(),
    };
    let stderr = StderrTail::default();
    let mut cmd = spawn::Command::new(super::place::program(program, workspace));
    for arg in &config.args {
        cmd.arg(arg);
    }
    for (k, v) in &config.env {
        cmd.env(k, v);
    }
    // Outside the workspace unless its `cwd` says so (`place`).
    cmd.current_dir(super::place::cwd(config, workspace));
    cmd.env_remove_if(is_provider_key);
    cmd.piped_stdin();
    let parent = i32::try_from(std::process::id()).unwrap_or(0);
    let mut child = cmd
        // Its own session and group, no terminal; SIGTERM when Waypoint dies.
        .spawn(&move || spawn::own_session(parent, Signal::TERM))
        .map_err(|e| fail(format!("cannot start `{program}`: {e}"), &stderr))?;
    let group = child.id();
    let mut guard = GroupGuard(Some(group));
    let mut reader = None;
    if let Some(mut err) = child.stderr.take() {
        let tail = stderr.clone();
        reader = Some(tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.push(&buf[..n]);
            }
        }));
    }
    // A server that failed: stopped, and what it printed read to the end
    // (for a moment) so the report has it.
    let failed = |message: String| async move {
        stop_group(group);
        if let Some(reader) = reader {
            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
        }
        message
    };
    let (Some(output), Some(input)) = (child.stdout.take(), child.stdin.take()) else {
        let message = failed("the server's pipes were not made".into()).await;
        return Err(fail(message, &stderr));
    };
    let service = match handler.serve((output, input)).await {
        Ok(service) => service,
        Err(e) => {
            let message = failed(format!("did not initialize: {e}")).await;
            return Err(fail(message, &stderr));
        }
    };
    // From here the server's drop stops the group.
    guard.0 = None;
    let mut running = Running {
        name: name.to_string(),
        tools: Vec::new(),
        stderr: stderr.clone(),
        service: Some(service),
        group,
        child: Some(child),
    };
    let tools = match running.service.as_ref() {
        Some(s) => s.peer().list_all_tools().await,
        None => Ok(Vec::new()),
    };
    running.tools = tools.map_err(|e| fail(format!("tools/list failed: {e}"), &stderr))?;
    Ok(running)
}
