//! The configured servers, started in the background as the engine starts:
//! no frame and no request waits for them. Each server has a slot (off,
//! starting, ready, failed) that the user's actions (`/mcp approve`,
//! `reconnect`, `enable`, `disable`) and the server itself (ready, died,
//! its tools changed) move. Invariants: the registry changes only in
//! [`Servers::sync`] (a server joining or leaving at a turn boundary, a
//! tool loaded by `mcp_search` before the next request), appending and
//! removing without reordering the rest; a server whose slot moved on
//! (reconnected, disabled) can never put its tools back (each start has a
//! generation); a project's server (`.mcp.json`) is not started before
//! the user approved it; a server is stopped (its group killed) when its
//! slot lets go of it or the engine drops the servers. A server that
//! becomes ready mid-turn joins at the next round (before the next model
//! request), its tools after those already sent; a task given at start
//! waits for the servers still starting ([`wait`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Instant;

use rmcp::model::Tool as McpToolDef;

use super::search::{Catalog, Entry, McpSearch, SEARCH_TOOL};
use super::server::{Handler, start_with};
use super::{McpServerConfig, Running, Settings};
use crate::events::{Event, McpAction, McpStatus};
use crate::tools::{Origin, Tool, ToolRegistry};

mod build;
mod relist;
pub mod wait;
use relist::on_tools_changed;

/// Why `/mcp` (or `waypoint mcp approve` in a session) did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    #[error("`{0}` runs already (`/mcp reconnect {0}` restarts it)")]
    Running(String),
    #[error("there is no MCP server `{0}`: none is configured")]
    NoneConfigured(String),
    #[error("there is no MCP server `{name}` (there are: {known})")]
    Unknown { name: String, known: String },
    #[error("approvals cannot be remembered: there is no home folder (set WAYPOINT_HOME)")]
    NoHome,
    #[error(
        "no server of this project's {} waits for approval",
        super::project::FILE
    )]
    NoneWaiting,
    #[error("the approval was not saved: {0}")]
    NotSaved(std::io::Error),
}

/// Where a server's state goes (to the engine's driver, as an event).
pub type StatusSink = Arc<dyn Fn(&str, McpStatus) + Send + Sync>;

enum State {
    /// Not started: turned off, or a project server waiting for approval.
    Off,
    /// Starting, until its startup timeout runs out at `until` (and on,
    /// as a slow server, after).
    Starting {
        task: tokio::task::JoinHandle<()>,
        until: Instant,
    },
    /// Its tools are the server's own list (`running.tools`, listed again
    /// when it says they changed).
    Ready {
        running: Box<Running>,
    },
    Failed,
}

struct Slot {
    config: McpServerConfig,
    /// Counts starts: a start (or a changed list of tools) of an older
    /// generation finds its slot moved on and is dropped.
    generation: u64,
    state: State,
}

/// One MCP tool as built for the registry.
struct Built {
    server: String,
    tool: Arc<dyn Tool>,
    /// What its definition costs per request, about.
    tokens: u64,
    /// The start of its server it belongs to, and a hash of its
    /// definition then: while both hold, the same tool is kept (and keeps
    /// its place).
    generation: u64,
    print: u64,
    /// Its description, for `mcp_search`.
    description: String,
}

struct Inner {
    settings: Settings,
    workspace: PathBuf,
    status: StatusSink,
    slots: BTreeMap<String, Slot>,
    /// A slot changed since the last sync at a turn boundary.
    dirty: bool,
    /// A slot changed since the last round's join.
    fresh: bool,
    /// Wakes a wait for the servers still starting ([`wait`]) when a slot
    /// changes or the user skips the wait.
    changes: Arc<tokio::sync::Notify>,
    /// The user asked to stop waiting (`McpAction::SkipWait`).
    skip_wait: bool,
    catalog: Catalog,
    /// What the registry holds of ours: tool name → server.
    attached: BTreeMap<String, String>,
    /// The tools of ready servers, as the last sync built them.
    tools: BTreeMap<String, Built>,
    /// Names whose tool was replaced by a new start's (its peer is the
    /// stopped server's): taken out of the registry at the next sync.
    replaced: BTreeSet<String>,
    /// The last mode told (offered, deferred, tokens), so it is told once.
    told: Option<(usize, usize, u64)>,
    /// Counts rebuilds of `tools`.
    generation: u64,
    /// What the last sync saw: the tools' generation, the number of tools
    /// searches loaded, the window.
    synced: Option<(u64, usize, u64)>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for slot in self.slots.values() {
            if let State::Starting { task, .. } = &slot.state {
                task.abort();
            }
        }
    }
}

/// The servers of a session: cheap to clone (the engine and its op
/// dispatcher each hold one).
#[derive(Clone)]
pub struct Servers(Arc<Mutex<Inner>>);

impl Servers {
    /// No servers.
    pub fn none() -> Self {
        Self::start(&Settings::default(), PathBuf::new(), Arc::new(|_, _| {}))
    }

    /// Starts every enabled server of `settings` on its own task, in
    /// `workspace` (a project server only when approved); each reports to
    /// `status` as it goes.
    pub fn start(settings: &Settings, workspace: PathBuf, status: StatusSink) -> Self {
        let slots = settings
            .servers
            .iter()
            .map(|(name, config)| {
                let slot = Slot {
                    config: config.clone(),
                    generation: 0,
                    state: State::Off,
                };
                (name.clone(), slot)
            })
            .collect();
        let servers = Self(Arc::new(Mutex::new(Inner {
            settings: settings.clone(),
            workspace,
            status,
            slots,
            dirty: false,
            fresh: false,
            changes: Arc::new(tokio::sync::Notify::new()),
            skip_wait: false,
            catalog: Catalog::default(),
            attached: BTreeMap::new(),
            tools: BTreeMap::new(),
            replaced: BTreeSet::new(),
            told: None,
            generation: 0,
            synced: None,
        })));
        let status = servers.lock().status.clone();
        for (name, problem) in &settings.problems {
            status(
                name,
                McpStatus::Failed {
                    error: problem.clone(),
                    stderr: String::new(),
                },
            );
        }
        let names: Vec<String> = settings.servers.keys().cloned().collect();
        for name in names {
            servers.begin(&name, false);
        }
        servers
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts `name` unless it is off by config or waits for approval
    /// (`force`: the user asked, so a config's `enabled = false` is
    /// overridden; approval is not).
    fn begin(&self, name: &str, force: bool) {
        let mut inner = self.lock();
        let Inner {
            slots,
            settings,
            workspace,
            status,
            ..
        } = &mut *inner;
        let Some(slot) = slots.get_mut(name) else {
            return;
        };
        if !settings.approved(workspace, name) {
            status(
                name,
                McpStatus::NeedsApproval {
                    command: settings.shown(name, &slot.config),
                },
            );
            return;
        }
        if !force && !slot.config.is_enabled() {
            status(name, McpStatus::Disabled);
            return;
        }
        stop(slot);
        slot.generation += 1;
        status(name, McpStatus::Starting);
        let task = tokio::spawn(run_one(
            Arc::downgrade(&self.0),
            name.to_string(),
            slot.generation,
            slot.config.clone(),
            workspace.clone(),
            status.clone(),
        ));
        let until = Instant::now() + slot.config.startup_timeout();
        slot.state = State::Starting { task, until };
        inner.changed();
    }

    /// Does what the user asked; the tools change at the next sync.
    pub fn act(&self, action: &McpAction) -> Result<(), ActError> {
        match action {
            McpAction::Approve => self.approve(),
            McpAction::Reconnect { name } => {
                self.known(name)?;
                self.begin(name, true);
                Ok(())
            }
            McpAction::Enable { name } => {
                self.known(name)?;
                let running = matches!(
                    self.lock().slots.get(name).map(|s| &s.state),
                    Some(State::Starting { .. } | State::Ready { .. })
                );
                if running {
                    return Err(ActError::Running(name.clone()));
                }
                self.begin(name, true);
                Ok(())
            }
            McpAction::Disable { name } => {
                self.known(name)?;
                let mut inner = self.lock();
                let status = inner.status.clone();
                if let Some(slot) = inner.slots.get_mut(name) {
                    stop(slot);
                    slot.generation += 1;
                    status(name, McpStatus::Disabled);
                }
                inner.changed();
                Ok(())
            }
            McpAction::SkipWait => {
                let mut inner = self.lock();
                inner.skip_wait = true;
                inner.changes.notify_waiters();
                Ok(())
            }
        }
    }

    fn known(&self, name: &str) -> Result<(), ActError> {
        let inner = self.lock();
        if inner.slots.contains_key(name) {
            return Ok(());
        }
        let name = name.to_string();
        let names: Vec<&str> = inner.slots.keys().map(String::as_str).collect();
        Err(if names.is_empty() {
            ActError::NoneConfigured(name)
        } else {
            let known = names.join(", ");
            ActError::Unknown { name, known }
        })
    }

    /// Approves the project's servers that wait (as they are written now)
    /// and starts them.
    fn approve(&self) -> Result<(), ActError> {
        let waiting: Vec<String> = {
            let inner = self.lock();
            let Some(approvals) = &inner.settings.approvals else {
                return Err(ActError::NoHome);
            };
            let waiting = inner.settings.waiting(&inner.workspace);
            if waiting.is_empty() {
                return Err(ActError::NoneWaiting);
            }
            approvals
                .approve(&inner.workspace, waiting.iter().map(|(n, p)| (*n, *p)))
                .map_err(ActError::NotSaved)?;
            waiting.keys().map(|n| (*n).clone()).collect()
        };
        for name in waiting {
            self.begin(&name, false);
        }
        Ok(())
    }

    /// Brings `registry` in line: at a turn boundary, the tools of
    /// servers that became ready (or changed their list) are added and
    /// those of servers gone are removed; at a round boundary (before each
    /// model request) only the tools of servers that became ready are
    /// added, after the others (unless they would tip the tools past the
    /// budget: then at the turn boundary); always, the tools `mcp_search`
    /// loaded are added. Past the budget (`window` tokens times the
    /// budget share) only `mcp_search` and the loaded tools are offered.
    /// Returns the event that tells a changed mode.
    pub fn sync(&self, registry: &mut ToolRegistry, window: u64, at: Boundary) -> Option<Event> {
        let mut inner = self.lock();
        inner.reap_dead();
        match at {
            Boundary::Turn if std::mem::take(&mut inner.dirty) => {
                inner.fresh = false;
                inner.rebuild_tools();
                inner.generation += 1;
            }
            Boundary::Round if std::mem::take(&mut inner.fresh) => {
                let budget = (window as f64 * inner.settings.budget_share) as u64;
                if inner.join_ready(budget) {
                    inner.generation += 1;
                }
            }
            Boundary::Turn | Boundary::Round => {}
        }
        // Most requests: nothing changed since the last one, no work.
        let state = (inner.generation, inner.catalog.loaded_count(), window);
        if inner.synced == Some(state) {
            return None;
        }
        inner.synced = Some(state);
        let budget = (window as f64 * inner.settings.budget_share) as u64;
        let tokens: u64 = inner.tools.values().map(|b| b.tokens).sum();
        let search = tokens > budget && !inner.tools.is_empty();
        // Ready tools, by name, with their server.
        let wanted: BTreeMap<String, String> = if search {
            let loaded = inner.catalog.loaded();
            let mut wanted: BTreeMap<String, String> = inner
                .tools
                .iter()
                .filter(|(name, _)| loaded.contains(*name))
                .map(|(name, b)| (name.clone(), b.server.clone()))
                .collect();
            wanted.insert(SEARCH_TOOL.to_string(), String::new());
            wanted
        } else {
            inner
                .tools
                .iter()
                .map(|(name, b)| (name.clone(), b.server.clone()))
                .collect()
        };
        let entries = inner
            .tools
            .iter()
            .map(|(name, b)| Entry::new(name, &b.server, &b.description))
            .collect();
        inner.catalog.set(entries);
        if wanted != inner.attached || !inner.replaced.is_empty() {
            let mut gone: BTreeSet<String> = inner
                .attached
                .keys()
                .filter(|n| !wanted.contains_key(*n))
                .cloned()
                .collect();
            gone.append(&mut inner.replaced);
            if !gone.is_empty() {
                registry.retain(|spec| !gone.contains(&spec.name));
            }
            for name in wanted.keys().filter(|n| !inner.attached.contains_key(*n)) {
                let tool: Arc<dyn Tool> = if name == SEARCH_TOOL {
                    Arc::new(McpSearch::new(inner.catalog.clone()))
                } else {
                    match inner.tools.get(name) {
                        Some(b) => b.tool.clone(),
                        None => continue,
                    }
                };
                registry.add(tool);
            }
            inner.attached = wanted;
        }
        let deferred = if search {
            inner.tools.len() + 1 - inner.attached.len()
        } else {
            0
        };
        let mode = (inner.attached.len(), deferred, tokens);
        if inner.told == Some(mode) || (inner.tools.is_empty() && inner.told.is_none()) {
            return None;
        }
        inner.told = Some(mode);
        Some(Event::McpTools {
            offered: inner.attached.len(),
            deferred,
            tokens,
            budget,
        })
    }
}

/// Where [`Servers::sync`] is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Before a turn's first request.
    Turn,
    /// Before every model request of a turn.
    Round,
}

impl Inner {
    /// A slot changed: the next sync looks again, a wait wakes.
    fn changed(&mut self) {
        self.dirty = true;
        self.fresh = true;
        self.changes.notify_waiters();
    }

    /// Ready servers whose connection ended (the process died, the HTTP
    /// session was lost) are failed, with the tail of their stderr.
    fn reap_dead(&mut self) {
        for (name, slot) in &mut self.slots {
            let State::Ready { running, .. } = &slot.state else {
                continue;
            };
            if running.peer().is_some_and(|p| !p.is_transport_closed()) {
                continue;
            }
            let stderr = running.stderr.text();
            (self.status)(
                name,
                McpStatus::Failed {
                    error: "the server stopped (its connection closed); `/mcp reconnect` starts it again".into(),
                    stderr,
                },
            );
            stop(slot);
            slot.state = State::Failed;
            self.dirty = true;
        }
    }
}

/// Lets go of a slot's server: a start is aborted (which stops it), a
/// ready one dropped (which stops its group).
fn stop(slot: &mut Slot) {
    match std::mem::replace(&mut slot.state, State::Off) {
        State::Starting { task, .. } => task.abort(),
        State::Ready { running, .. } => drop(running),
        State::Off | State::Failed => {}
    }
}

/// About how many tokens the definitions cost in every request (four
/// bytes a token, as the engine estimates).
pub fn schema_tokens(defs: &[McpToolDef]) -> u64 {
    serde_json::to_string(defs).map_or(0, |s| s.len() / 4) as u64
}

/// A ready server's state: the tools its config offers and what their
/// definitions cost.
fn ready(config: &McpServerConfig, tools: &[McpToolDef]) -> McpStatus {
    let offered: Vec<McpToolDef> = tools
        .iter()
        .filter(|t| config.offers(&t.name))
        .cloned()
        .collect();
    McpStatus::Ready {
        tools: offered.len(),
        schema_tokens: schema_tokens(&offered),
    }
}

async fn run_one(
    servers: Weak<Mutex<Inner>>,
    name: String,
    generation: u64,
    config: McpServerConfig,
    workspace: PathBuf,
    status: StatusSink,
) {
    let began = Instant::now();
    let timeout = config.startup_timeout();
    let handler = Handler::new(Some(on_tools_changed(
        servers.clone(),
        name.clone(),
        generation,
    )));
    let result = {
        let mut starting = Box::pin(start_with(&name, &config, &workspace, handler));
        tokio::select! {
            r = &mut starting => r,
            () = tokio::time::sleep(timeout) => {
                let after_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                status(&name, McpStatus::Slow { after_ms });
                starting.await
            }
        }
    };
    let Some(inner) = servers.upgrade() else {
        // The engine is gone: the server is dropped (and stopped).
        return;
    };
    let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(slot) = inner
        .slots
        .get_mut(&name)
        .filter(|s| s.generation == generation)
    else {
        return;
    };
    match result {
        Ok(running) => {
            status(&name, ready(&config, &running.tools));
            slot.state = State::Ready {
                running: Box::new(running),
            };
        }
        Err(e) => {
            status(
                &name,
                McpStatus::Failed {
                    error: e.message,
                    stderr: e.stderr,
                },
            );
            slot.state = State::Failed;
        }
    }
    inner.changed();
}

/// The origin of the tools [`Servers::sync`] manages.
pub fn is_ours(origin: &Origin) -> bool {
    matches!(origin, Origin::Mcp { .. })
}
