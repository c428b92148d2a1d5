//! The configured servers, started in the background as the engine starts:
//! no frame and no request waits for them. Invariant: a server that is
//! ready is handed to the engine once ([`Servers::take_ready`], at a turn
//! boundary), and is stopped (its group killed) when the engine drops it;
//! a server past its startup timeout keeps starting and attaches when
//! ready instead of failing for the session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{McpServerConfig, McpTool, Running, start};
use crate::events::McpStatus;
use crate::tools::Tool;

/// Where a server's state goes (to the engine's driver, as an event).
pub type StatusSink = Arc<dyn Fn(&str, McpStatus) + Send + Sync>;

/// The servers being started, and those ready but not yet attached.
pub struct Servers {
    ready: UnboundedReceiver<(Running, McpServerConfig)>,
    /// Ready servers, kept for as long as the engine lives.
    attached: Vec<Running>,
    /// The starting tasks: aborted with the engine, which stops a server
    /// still starting (its group killed).
    starting: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Servers {
    fn drop(&mut self) {
        for task in &self.starting {
            task.abort();
        }
    }
}

impl Servers {
    /// No servers.
    pub fn none() -> Self {
        let (_tx, ready) = unbounded_channel();
        Self {
            ready,
            attached: Vec::new(),
            starting: Vec::new(),
        }
    }

    /// Starts every enabled server of `configs` on its own task, in
    /// `workspace`; each reports to `status` as it goes.
    pub fn start(
        configs: &BTreeMap<String, McpServerConfig>,
        workspace: PathBuf,
        status: StatusSink,
    ) -> Self {
        let (tx, ready) = unbounded_channel();
        let mut starting = Vec::new();
        for (name, config) in configs.iter().filter(|(_, c)| c.is_enabled()) {
            status(name, McpStatus::Starting);
            starting.push(tokio::spawn(run_one(
                name.clone(),
                config.clone(),
                workspace.clone(),
                status.clone(),
                tx.clone(),
            )));
        }
        Self {
            ready,
            attached: Vec::new(),
            starting,
        }
    }

    /// The tools of the servers that became ready since the last call
    /// (only those their config offers), in the order they came.
    pub fn take_ready(&mut self) -> Vec<Arc<dyn Tool>> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        while let Ok((running, config)) = self.ready.try_recv() {
            if let Some(peer) = running.peer() {
                for def in running.tools.iter().filter(|t| config.offers(&t.name)) {
                    tools.push(Arc::new(McpTool::new(
                        &running.name,
                        def.clone(),
                        peer.clone(),
                        config.tool_timeout(),
                    )));
                }
            }
            self.attached.push(running);
        }
        tools
    }
}

async fn run_one(
    name: String,
    config: McpServerConfig,
    workspace: PathBuf,
    status: StatusSink,
    ready: UnboundedSender<(Running, McpServerConfig)>,
) {
    let began = Instant::now();
    let timeout = config.startup_timeout();
    let result = {
        let mut starting = Box::pin(start(&name, &config, &workspace));
        tokio::select! {
            r = &mut starting => r,
            () = tokio::time::sleep(timeout) => {
                let after_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                status(&name, McpStatus::Slow { after_ms });
                starting.await
            }
        }
    };
    match result {
        Ok(running) => {
            let offered: Vec<_> = running
                .tools
                .iter()
                .filter(|t| config.offers(&t.name))
                .collect();
            // What their definitions add to every request, about (four
            // bytes a token, as the engine estimates).
            let bytes = serde_json::to_string(&offered).map_or(0, |s| s.len());
            status(
                &name,
                McpStatus::Ready {
                    tools: offered.len(),
                    schema_tokens: (bytes / 4) as u64,
                },
            );
            // An engine that is gone drops the server (and stops it).
            let _ = ready.send((running, config));
        }
        Err(e) => status(
            &name,
            McpStatus::Failed {
                error: e.message,
                stderr: e.stderr,
            },
        ),
    }
}
