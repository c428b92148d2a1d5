//! The one way to make an engine: a builder that names each part, with
//! defaults for what a caller leaves out (a fixed client, the default
//! settings, the standard tools, no recorded session).

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::control::Control;
use super::shared::{Answers, Log};
use super::thread::Shared;
use super::{
    Agent, AgentConfig, AgentHandle, ClientFactory, FixedClient, Host, Outbox, Session,
    SessionSetup, Thread, approval,
};
use crate::events::Envelope;
use crate::llm::ModelClient;
use crate::session::{SessionError, Transcript};
use crate::todo::SharedPlan;
use crate::tools::{ToolRegistry, Workspace};

/// Builds an [`Agent`]; see [`Agent::builder`].
pub struct AgentBuilder {
    client: Arc<dyn ModelClient>,
    workspace: Workspace,
    factory: Option<Arc<dyn ClientFactory>>,
    config: AgentConfig,
    tools: Option<ToolRegistry>,
    setup: SessionSetup,
}

impl AgentBuilder {
    pub(super) fn new(client: Arc<dyn ModelClient>, workspace: Workspace) -> Self {
        Self {
            client,
            workspace,
            factory: None,
            config: AgentConfig::default(),
            tools: None,
            setup: SessionSetup::Off,
        }
    }

    /// What builds the next client when the settings are reloaded or the
    /// model is switched; without one, `client` is kept for good
    /// (`SetModel` is refused).
    pub fn factory(mut self, factory: Arc<dyn ClientFactory>) -> Self {
        self.factory = Some(factory);
        self
    }

    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// The tools offered (the standard ones when not given).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = Some(tools);
        self
    }

    /// How the session is kept: not at all (the default), as a new
    /// transcript, or continuing a stored one.
    pub fn session(mut self, setup: SessionSetup) -> Self {
        self.setup = setup;
        self
    }

    /// The engine, sending its events to `events`. Fails only when a
    /// resumed session's transcript cannot be reopened for writing.
    pub fn build(self, events: UnboundedSender<Envelope>) -> Result<Agent, SessionError> {
        let AgentBuilder {
            client,
            workspace,
            factory,
            mut config,
            tools,
            setup,
        } = self;
        let factory = factory.unwrap_or_else(|| Arc::new(FixedClient(client.clone())));
        config.system_prompt = config
            .system_prompt
            .replace("{workspace}", &workspace.root().display().to_string());
        let mut tools = tools.unwrap_or_else(ToolRegistry::standard);
        if !config.plan.tool {
            // The user's plan leads: no todo tools, no nag about them, and
            // the prompt asks for `Done: N` lines instead.
            tools.retain(|spec| spec.name != "todo_write" && spec.name != "todo_read");
            config.nag_every = 0;
            config.system_prompt = super::user_plan::system_prompt(&config.system_prompt);
        }
        let skills = &config.tools.catalog.skills;
        if !skills.is_empty() {
            // Their names and descriptions, within 2% of the window (a
            // token is about 4 bytes); built once, so the prompt stays
            // byte-stable for the provider's cache.
            let window = config
                .context_window
                .filter(|w| *w > 0)
                .or_else(|| crate::models::known(client.model()).map(|m| m.context_window))
                .unwrap_or(super::compact::DEFAULT_CONTEXT_WINDOW);
            let budget = usize::try_from(window / 50 * 4).unwrap_or(usize::MAX);
            let block = crate::skills::prompt_block(skills, budget);
            config.system_prompt = format!(
                "{}

{block}",
                config.system_prompt.trim_end()
            );
            tools.add(Arc::new(crate::tools::skill::SkillTool));
        }
        let requests = super::thread::Requests::default();
        let approvals = Answers::default();
        let plan = SharedPlan::default();
        let events = Outbox::root(events);
        let thread = Thread::new(client, tools, plan.clone(), &config);
        let tasks = Arc::new(super::subagent::TaskPool::new(&config.tools.task));
        let children = tasks.children.clone();
        let shared = Shared {
            tasks,
            workspace,
            policy: Arc::new(Mutex::new(approval::Policy::new(config.approval))),
            approvals: approvals.clone(),
            checkpoints: Arc::default(),
        };
        let host = Host {
            shared: Arc::new(shared),
            config,
            events: events.clone(),
            transcript: Log::root(Transcript::off()),
            store: None,
            requests: requests.clone(),
            mcp: crate::mcp::Servers::none(),
        };
        let mut agent = Agent {
            session: Session {
                thread,
                host,
                stages: Arc::new(super::stages::Stages::standard()),
            },
            control: Control::new(factory, requests, approvals, plan, events, children),
        };
        agent.keep_session(setup)?;
        Ok(agent)
    }

    /// Builds the engine and starts it on the current tokio runtime.
    pub fn spawn(self) -> Result<AgentHandle, SessionError> {
        let (ops_tx, ops_rx) = unbounded_channel();
        let (ev_tx, ev_rx) = unbounded_channel();
        let agent = self.build(ev_tx)?;
        let task = tokio::spawn(agent.run(ops_rx));
        Ok(AgentHandle {
            ops: ops_tx,
            events: ev_rx,
            task,
        })
    }
}
