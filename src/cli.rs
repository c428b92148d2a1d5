//! Command-line flags. Every setting flag is optional so the config layer
//! can tell "not given" from "given": flags override the environment, which
//! overrides the config file (see `config/mod.rs`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{Layer, ProviderKind, Theme, WireKind};
use crate::events::ApprovalMode;
use crate::headless::{InputFormat, OutputFormat};

const ENVIRONMENT: &str = "Environment:
  ANTHROPIC_API_KEY  ANTHROPIC_MODEL  ANTHROPIC_BASE_URL   the Anthropic provider
  OPENAI_API_KEY     OPENAI_MODEL     OPENAI_BASE_URL      the OpenAI-compatible provider
  WAYPOINT_PROVIDER  WAYPOINT_MODEL   WAYPOINT_PROFILE     provider, model (wins over the provider's own), profile
  WAYPOINT_MAX_TOKENS  WAYPOINT_MAX_TURNS  WAYPOINT_NAG_EVERY  WAYPOINT_NAG_MAX  WAYPOINT_BASH_TIMEOUT
  WAYPOINT_OUTPUT_CAP  WAYPOINT_MAX_RETRIES  WAYPOINT_STREAM_IDLE_TIMEOUT
  WAYPOINT_THINKING_BUDGET  WAYPOINT_CONTEXT_WINDOW  WAYPOINT_COMPACT_AT
                     the settings of those names
  WAYPOINT_CONFIG      the config file (default: config.toml in the platform's config folder)
  WAYPOINT_LOG  WAYPOINT_LOG_LEVEL   the log file (never the terminal) and its filter
  NO_COLOR             no colours";

#[derive(Debug, Parser)]
#[command(
    name = "waypoint",
    version,
    about = "A terminal coding agent with a live plan",
    long_about = "A terminal coding agent with a live plan.\n\n`waypoint` opens the full-screen app in the current folder; \
`waypoint \"TASK\"` opens it and starts the task; `waypoint -p \"TASK\"` runs it headless. \
Settings come from flags, then the environment, then the config file (see `waypoint config`).",
    after_help = ENVIRONMENT
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The task to start with (opens the app and submits it).
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Run one task headless and print the work as it goes (no value, or `-`: read the task from
    /// stdin; with a value, text piped on stdin is attached to it).
    #[arg(short = 'p', long = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = crate::prompt::FROM_STDIN, help_heading = "Task")]
    pub print: Option<String>,

    /// Work on TEXT as a goal (headless): Waypoint keeps the agent going until every plan item is
    /// completed and verified by its check (and `--goal-check` passes), a budget stops it, or it
    /// makes no progress. Exit codes: 0 met, 4 unmet, 6 budget-limited.
    #[arg(long, value_name = "TEXT", requires = "print", help_heading = "Task")]
    pub goal: Option<String>,

    /// With `--goal`: a command whose success is the goal's own evidence (`cargo test`).
    #[arg(long, value_name = "CMD", requires = "goal", help_heading = "Task")]
    pub goal_check: Option<String>,

    /// With `--goal`: its budget, any of tokens (2M, 500k), dollars ($5), time (45m, 2h) and
    /// turns (30 turns), comma-separated.
    #[arg(long, value_name = "BUDGET", requires = "goal", value_parser = crate::events::Budget::parse, help_heading = "Task")]
    pub budget: Option<crate::events::Budget>,

    /// With `--goal`: each plan item's own budget (tokens, dollars, time while in progress, `N
    /// turns` for its tool calls); an item that spends it stops the goal as budget-limited.
    #[arg(long, value_name = "BUDGET", requires = "goal", value_parser = crate::events::Budget::parse, help_heading = "Task")]
    pub item_budget: Option<crate::events::Budget>,

    /// Continue the most recent session of this workspace.
    #[arg(
        short = 'c',
        long = "continue",
        conflicts_with = "resume",
        help_heading = "Session"
    )]
    pub continue_last: bool,

    /// Continue a stored session: ID (or its first characters) opens it; no ID opens a picker
    /// (in headless mode: lists the sessions).
    #[arg(short = 'r', long = "resume", value_name = "ID", num_args = 0..=1, default_missing_value = "", help_heading = "Session")]
    pub resume: Option<String>,

    /// Approve the plan a `--approval plan` run proposed and carry it out (headless, with `-r ID`
    /// or `-c`), in the mode `--approval` names (default: the one before plan mode; auto headless).
    #[arg(long, help_heading = "Session")]
    pub approve_plan: bool,

    /// With `--approve-plan`: start the work from a fresh conversation (the task, the research's
    /// summary and the approved plan).
    #[arg(long, requires = "approve_plan", help_heading = "Session")]
    pub fresh: bool,

    /// With `--approve-plan`: approve the plan as you edited it in the Markdown file PATH (a
    /// `--plan-file` copy of the proposal, or any `- [ ] item` checklist) instead of as proposed.
    #[arg(
        long,
        value_name = "PATH",
        requires = "approve_plan",
        help_heading = "Session"
    )]
    pub plan_from: Option<PathBuf>,

    /// What the agent may do without asking: read-only, plan (research and propose, enforced
    /// read-only), ask, auto-edit, auto (bash sandboxed), yolo
    /// [default: ask in the app, auto headless; env WAYPOINT_APPROVAL].
    #[arg(long, value_name = "MODE", value_parser = parse_mode, help_heading = "Safety", global = true)]
    pub approval: Option<ApprovalMode>,

    /// Short for `--approval yolo`: nothing asks, no sandbox.
    #[arg(long, conflicts_with = "approval", help_heading = "Safety")]
    pub yolo: bool,

    /// Project folder the agent works in (default: the current directory).
    #[arg(long, value_name = "DIR", help_heading = "Task")]
    pub workspace: Option<PathBuf>,

    /// How headless mode prints: readable text or the engine's events as JSON lines.
    #[arg(long, value_enum, default_value = "text", help_heading = "Task")]
    pub output_format: OutputFormat,

    /// What headless mode reads: the task (text), or ops as JSON lines on stdin until it closes,
    /// approvals answered by them (jsonl, with `--output-format jsonl`; see `waypoint schema`).
    #[arg(long, value_enum, default_value = "text", requires = "print", conflicts_with_all = ["goal", "approve_plan"], help_heading = "Task")]
    pub input_format: InputFormat,

    /// When the model stops with plan items open, nudge it on up to N times (each nudge lists
    /// them); stops early when a nudged turn leaves the plan unchanged [default: 0].
    #[arg(long, value_name = "N", help_heading = "Task")]
    pub auto_continue: Option<u32>,

    /// Model requests allowed for one task before it stops [default: 100].
    #[arg(long, value_name = "N", help_heading = "Task")]
    pub max_turns: Option<u32>,

    /// Run the bundled offline demo (no key, no network) in a fresh temporary workspace.
    #[arg(long, help_heading = "Task")]
    pub demo: bool,

    /// Keep the demo's temporary workspace when Waypoint exits (its path is printed).
    #[arg(long, requires = "demo", help_heading = "Task")]
    pub keep: bool,

    /// Play this scenario file instead of calling a model (implies --provider scripted).
    #[arg(long, value_name = "FILE", help_heading = "Task", global = true)]
    pub scenario: Option<PathBuf>,

    /// Model provider [default: anthropic; env WAYPOINT_PROVIDER].
    #[arg(long, value_enum, help_heading = "Model", global = true)]
    pub provider: Option<ProviderKind>,

    /// A named profile from the config file ([profile.NAME]) [env WAYPOINT_PROFILE].
    #[arg(long, value_name = "NAME", help_heading = "Model", global = true)]
    pub profile: Option<String>,

    /// Model name [env ANTHROPIC_MODEL or OPENAI_MODEL].
    #[arg(long, value_name = "M", help_heading = "Model", global = true)]
    pub model: Option<String>,

    /// API base URL [env ANTHROPIC_BASE_URL or OPENAI_BASE_URL].
    #[arg(long, value_name = "URL", help_heading = "Model", global = true)]
    pub base_url: Option<String>,

    /// The openai provider's wire: chat (Chat Completions), responses (the
    /// Responses API), auto (responses for codex and pro models) [default: auto; env WAYPOINT_WIRE].
    #[arg(long, value_enum, help_heading = "Model", global = true)]
    pub wire: Option<WireKind>,

    /// Maximum tokens of one model reply [default: 8192].
    #[arg(long, value_name = "N", help_heading = "Model", global = true)]
    pub max_tokens: Option<u32>,

    /// Retries of a failed model request: rate limits, overload, broken streams [default: 5].
    #[arg(long, value_name = "N", help_heading = "Model", global = true)]
    pub max_retries: Option<u32>,

    /// First retry delay in milliseconds (doubles each retry; a server's retry-after wins).
    #[arg(long, value_name = "MS", default_value_t = 500, hide = true)]
    pub retry_base_ms: u64,

    /// Seconds of silence inside a stream before it counts as broken and is retried [default: 60].
    #[arg(long, value_name = "SECS", help_heading = "Model", global = true)]
    pub stream_idle_timeout: Option<u64>,

    /// Extended thinking's token budget (Anthropic; at least 1024), 0 = off [default: 0].
    #[arg(long, value_name = "N", help_heading = "Model", global = true)]
    pub thinking_budget: Option<u32>,

    /// Keep a Markdown copy of the live plan at PATH in the workspace; ticking a box or adding a
    /// `- [ ] line` there changes the plan.
    #[arg(long, value_name = "PATH", help_heading = "Agent", global = true)]
    pub plan_file: Option<String>,

    /// Tool rounds without a plan update before the agent is reminded; 0 = never [default: 3].
    #[arg(long, value_name = "N", help_heading = "Agent", global = true)]
    pub nag_every: Option<u32>,

    /// Reminders in a row without a plan update before they stop until it is updated; 0 = no
    /// limit [default: 2].
    #[arg(long, value_name = "N", help_heading = "Agent", global = true)]
    pub nag_max: Option<u32>,

    /// Default timeout of a bash command in seconds (the model may ask for up to 600) [default: 120].
    #[arg(long, value_name = "SECS", help_heading = "Agent", global = true)]
    pub bash_timeout: Option<u64>,

    /// A bash command still running after SECS becomes a background job instead of running on to
    /// its timeout; 0 = never [default: 0; env WAYPOINT_AUTO_BACKGROUND_AFTER].
    #[arg(long, value_name = "SECS", help_heading = "Agent", global = true)]
    pub auto_background_after: Option<u64>,

    /// Largest tool output sent to the model, in bytes; head and tail are kept [default: 30000].
    #[arg(long, value_name = "BYTES", help_heading = "Agent", global = true)]
    pub output_cap: Option<usize>,

    /// The model's context window in tokens [default: the model's, else 128000; env WAYPOINT_CONTEXT_WINDOW].
    #[arg(long, value_name = "TOKENS", help_heading = "Agent", global = true)]
    pub context_window: Option<u64>,

    /// Compact the conversation past this share of the window [default: 0.8].
    #[arg(long, value_name = "SHARE", help_heading = "Agent", global = true)]
    pub compact_at: Option<f64>,

    /// Colours: the terminal's own, or none (NO_COLOR also turns them off).
    #[arg(long, value_enum, help_heading = "Display", global = true)]
    pub theme: Option<Theme>,

    /// What the model's changes to an approved plan need: ask (your sign-off; refused headless),
    /// tell (made and shown as changes to the agreement), free [default: tell].
    #[arg(long, value_name = "MODE", help_heading = "Safety")]
    pub plan_changes: Option<crate::config::PlanChanges>,

    /// Headless: accept the model's changes to an approved plan (as `--plan-changes tell`).
    #[arg(long, conflicts_with = "plan_changes", help_heading = "Safety")]
    pub accept_plan_changes: bool,

    /// Whether the model gets the todo tools [default: true]; without them your plan is re-sent
    /// each turn and its items advance by the reply's "Done: N" lines.
    #[arg(long, value_name = "true|false", help_heading = "Agent", global = true)]
    pub plan_tool: Option<bool>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim):
    /// each session works in the folder the editor names.
    Acp,
    /// Print the effective configuration and where each value comes from (keys masked).
    Config,
    /// Print the JSON schema of the ops and events headless mode speaks (`--input-format jsonl`,
    /// `--output-format jsonl`), with its version.
    Schema,
    /// Print a shell completion script: `waypoint completions bash > ~/.local/share/bash-completion/completions/waypoint`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// List the stored sessions (all workspaces), or delete some.
    Sessions {
        #[command(subcommand)]
        action: Option<SessionsAction>,
    },
    /// Run one command in the sandbox `bash` uses in auto mode (writes only to this folder, the
    /// temp folder, cargo's download caches and /dev/null), to see what it allows.
    Sandbox {
        /// Another folder it may write to (repeatable).
        #[arg(long = "write", value_name = "DIR")]
        write: Vec<PathBuf>,
        /// Refuse TCP connections and listening sockets, and every socket but Unix ones.
        #[arg(long)]
        no_network: bool,
        /// The command and its arguments (after `--`).
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<std::ffi::OsString>,
    },
    /// The MCP servers: list them, start one and show its tools, add or remove one in the config
    /// file, approve this project's `.mcp.json` servers.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// The hooks: list those that run here (the config file's, this project's
    /// `.claude/settings.json`), approve this project's.
    Hooks {
        #[command(subcommand)]
        action: HooksAction,
    },
    /// List a stored session's checkpoints: the points `waypoint undo --to` goes back to.
    Checkpoints {
        /// The session's id, or its first characters.
        id: String,
    },
    /// Undo a stored session's file changes: its last turn (the default), everything since a
    /// point, or one plan item's; prints the preview first, leaves conflicts alone.
    Undo {
        /// The session's id, or its first characters.
        id: String,
        /// Go back to this point (`waypoint checkpoints ID` lists them).
        #[arg(long, value_name = "POINT", conflicts_with = "item")]
        to: Option<u32>,
        /// Undo only what was done while plan item N was in progress.
        #[arg(long, value_name = "N")]
        item: Option<usize>,
        /// Print the preview; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Write a stored session as Markdown (or its raw records).
    Export {
        /// The session's id, or its first characters.
        id: String,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        /// Markdown for reading, or the transcript's JSON lines.
        #[arg(long, value_enum, default_value = "markdown")]
        format: ExportFormat,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// Delete one session.
    Rm {
        /// The session's id, or its first characters.
        id: String,
    },
    /// Delete the sessions not active for a while.
    Prune {
        /// An age such as 30d, 12h or 2w.
        #[arg(long, value_name = "AGE")]
        older_than: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// The servers of the config file: name, state and how each starts.
    List,
    /// Start one server as a session would (initialize, tools/list), print its tools, the
    /// tokens their definitions cost, and on failure why with its stderr; then stop it.
    Check {
        /// The server's name (`[mcp_servers.NAME]`).
        name: String,
    },
    /// Add a server to the config file: `waypoint mcp add NAME -- COMMAND ARGS…` (stdio) or
    /// `waypoint mcp add NAME --url URL` (Streamable HTTP). Comments and layout are kept.
    Add {
        /// Its name: its tools are offered as mcp__NAME__TOOL.
        name: String,
        /// An environment variable for a stdio server (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// The folder a stdio server starts in (relative: to the workspace).
        #[arg(long)]
        cwd: Option<String>,
        /// A Streamable HTTP server's address.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// A header of an HTTP server's requests (repeatable).
        #[arg(long = "header", value_name = "KEY=VALUE", requires = "url")]
        headers: Vec<String>,
        /// The environment variable holding an HTTP server's bearer token.
        #[arg(long, value_name = "VAR", requires = "url")]
        bearer_token_env_var: Option<String>,
        /// The command of a stdio server and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove a server from the config file.
    Remove { name: String },
    /// Approve the servers of this project's `.mcp.json` as they are written now (remembered for
    /// the project; a changed entry is asked for again).
    Approve,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Every hook that runs in this workspace, and those that wait for approval.
    List,
    /// Approve this project's `.claude/settings.json` hooks as they are written now (remembered
    /// for the project; a changed block is asked for again).
    Approve,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Markdown,
    Jsonl,
}

impl Cli {
    /// `--approve-plan` continues a stored session (`resuming`) headless,
    /// with no task: the message that says why not.
    pub fn check_approve_plan(
        &self,
        headless: bool,
        task: bool,
        resuming: bool,
    ) -> Result<(), &'static str> {
        match (self.approve_plan, headless, task, resuming) {
            (false, ..) | (true, true, false, true) => Ok(()),
            (true, _, _, false) => {
                Err("--approve-plan continues a session: use it with -r ID or -c")
            }
            (true, false, _, _) => Err(
                "--approve-plan is for headless runs (-p); in the app, press y on the proposed plan or type /approve",
            ),
            (true, true, true, _) => {
                Err("--approve-plan takes no task: the approved plan is the task")
            }
        }
    }

    /// `--plan-from`'s items, read before anything else happens: the
    /// message that says why not when the file is unreadable or holds none.
    pub fn edited_plan(&self) -> Result<Option<Vec<crate::todo::TodoItem>>, String> {
        crate::prompt::edited_plan(self.plan_from.as_deref())
    }

    /// The settings the flags give, for the config resolver.
    pub fn layer(&self) -> Layer {
        let provider = if self.demo || self.scenario.is_some() {
            Some(ProviderKind::Scripted)
        } else {
            self.provider
        };
        Layer {
            provider,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: None,
            wire: self.wire,
            max_tokens: self.max_tokens,
            max_turns: self.max_turns,
            nag_every: self.nag_every,
            nag_max: self.nag_max,
            plan_file: self.plan_file.clone(),
            bash_timeout: self.bash_timeout,
            auto_background_after: self.auto_background_after,
            output_cap: self.output_cap,
            context_window: self.context_window,
            compact_at: self.compact_at,
            max_retries: self.max_retries,
            stream_idle_timeout: self.stream_idle_timeout,
            thinking_budget: self.thinking_budget,
            theme: self.theme,
            plan_tool: self.plan_tool,
            plan_changes: if self.accept_plan_changes {
                Some(crate::config::PlanChanges::Tell)
            } else {
                self.plan_changes
            },
            approval: if self.yolo {
                Some(ApprovalMode::Yolo)
            } else {
                self.approval
            },
            ..Layer::default()
        }
    }
}

/// The top-level flags' long names (`--max-tokens`), hidden ones left out:
/// the configuration reference shows the flag of each key of that name.
pub fn setting_flags() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .map(|long| format!("--{long}"))
        .collect()
}

fn parse_mode(text: &str) -> Result<ApprovalMode, String> {
    ApprovalMode::parse(text).ok_or_else(|| {
        let all: Vec<&str> = ApprovalMode::ALL.iter().map(|m| m.as_str()).collect();
        format!("`{text}` is not a mode; one of: {}", all.join(", "))
    })
}
