//! From settings to a running engine: the provider client, the agent's
//! limits, and the first-run help shown when no provider is usable.
//! Invariant: a missing or wrong setting becomes one readable message that
//! says what to do, never a panic.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::{AgentConfig, ClientFactory, ModelChoice};
use crate::config::{self, ConfigFile, Inputs, Layer, ProviderKind, Settings, Source, WireKind};
use crate::events::ApprovalMode;
use crate::llm::anthropic::{AnthropicClient, AnthropicConfig};
use crate::llm::openai::{OpenAiClient, OpenAiConfig};
use crate::llm::responses::ResponsesClient;
use crate::llm::retry::RetryPolicy;
use crate::llm::scripted::{DEMO_SCENARIO, Scenario, ScriptedClient};
use crate::llm::{LlmError, ModelClient};
use crate::tools::ToolConfig;

pub const OLLAMA_URL: &str = "http://localhost:11434/v1";

pub fn agent_config(s: &Settings) -> AgentConfig {
    AgentConfig {
        max_tokens: s.max_tokens.value.max(1),
        nag_every: s.nag_every.value,
        nag_max: s.nag_max.value,
        max_rounds: s.max_turns.value.max(1),
        tools: ToolConfig {
            bash: crate::tools::BashLimits {
                default_timeout: Duration::from_secs(s.bash_timeout.value.clamp(1, 600)),
                auto_background: Some(s.auto_background_after.value)
                    .filter(|secs| *secs > 0)
                    .map(Duration::from_secs),
                ..crate::tools::BashLimits::default()
            },
            output_cap: s.output_cap.value.max(256),
            rules: s.rules.clone(),
            task: s.task.clone(),
            web_allow: s.web_allow.clone(),
            images: s.images.value,
            // The MCP servers need the workspace (its `.mcp.json`): set with
            // it, by `mcp::project::settings`.
            ..ToolConfig::default()
        },
        context_window: Some(s.context_window.value).filter(|w| *w > 0),
        compact_at: s.compact_at.value,
        plan: crate::agent::PlanSettings {
            file: s.plan_file.value.as_ref().map(PathBuf::from),
            changes: s.plan_changes.value,
            tool: s.plan_tool.value,
        },
        prices: s.prices.clone(),
        ..AgentConfig::default()
    }
}

/// What a session takes from its workspace besides the files: the MCP
/// servers (the config's and the project's `.mcp.json`), the hooks (the
/// config's, and the project's once approved), Claude Code's permission
/// rules (the user's, and the project's: its allow rules once approved),
/// the skills and custom commands (the project's and the user's).
pub fn workspace_parts(
    settings: &Settings,
    config: &mut AgentConfig,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) {
    config.tools.mcp = crate::mcp::project::settings(settings, root, env);
    config.tools.hooks = Arc::new(crate::hooks::load(&settings.hooks, root, env));
    config
        .tools
        .rules
        .extend(crate::config::claude::read(root, env).rules);
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let config_dir =
        directories::ProjectDirs::from("", "", "waypoint").map(|d| d.config_dir().to_path_buf());
    let places = crate::skills::Places::of(root, home.as_deref(), config_dir.as_deref());
    config.tools.catalog = Arc::new(crate::skills::Catalog::discover(&places));
}

/// `waypoint config`: the settings, each with where it came from, and the
/// permission rules read from Claude Code's settings for the workspace.
pub fn config_text(
    cli: &crate::cli::Cli,
    settings: &Settings,
    config_path: Option<&Path>,
) -> std::io::Result<String> {
    let workspace = cli
        .workspace
        .clone()
        .map_or_else(std::env::current_dir, Ok)?;
    let claude = crate::config::claude::read(&workspace, &|k| std::env::var(k).ok());
    Ok(format!(
        "{}{}",
        settings.describe(config_path),
        claude.describe()
    ))
}

/// The model client the settings describe.
pub fn build_client(
    s: &Settings,
    scenario: Option<&Path>,
    retry_base: Duration,
) -> Result<Arc<dyn ModelClient>, LlmError> {
    let retry = RetryPolicy {
        max_retries: s.max_retries.value,
        base_delay: retry_base,
        ..RetryPolicy::default()
    };
    let idle_timeout = Duration::from_secs(s.stream_idle_timeout.value.max(1));
    let api_key = s.api_key.as_ref().map(|k| k.value.clone());
    // A bad base URL says where it was set (an environment variable is easy
    // to forget about).
    let named = |e: LlmError| match e {
        LlmError::Config(m) if m.contains("base URL") && s.base_url.source != Source::Default => {
            LlmError::Config(format!("{m}; it was set by {}", s.base_url.source))
        }
        other => other,
    };
    match s.provider.value {
        ProviderKind::Scripted => {
            let scenario = match scenario {
                Some(path) => Scenario::load(path)?,
                None => Scenario::parse(DEMO_SCENARIO)?,
            };
            Ok(Arc::new(ScriptedClient::new(scenario)))
        }
        ProviderKind::Anthropic => Ok(Arc::new(
            AnthropicClient::new(AnthropicConfig {
                api_key: api_key.unwrap_or_default(),
                base_url: s.base_url.value.clone(),
                model: s.model.value.clone(),
                retry,
                idle_timeout,
            })
            .map_err(named)?
            .with_thinking_budget(s.thinking_budget.value),
        )),
        ProviderKind::Openai => {
            let official = s.base_url.value.contains("api.openai.com");
            if official && api_key.is_none() {
                return Err(LlmError::Config(
                    "no OpenAI API key: set OPENAI_API_KEY, or point base_url at a local server such as Ollama \
(OPENAI_BASE_URL=http://localhost:11434/v1)"
                        .into(),
                ));
            }
            let config = OpenAiConfig {
                api_key,
                base_url: s.base_url.value.clone(),
                model: s.model.value.clone(),
                retry,
                idle_timeout,
            };
            match s.wire.value.for_model(&s.model.value) {
                WireKind::Responses => Ok(Arc::new(ResponsesClient::new(config).map_err(named)?)),
                WireKind::Chat | WireKind::Auto => {
                    Ok(Arc::new(OpenAiClient::new(config).map_err(named)?))
                }
            }
        }
    }
}

/// The engine's client factory: the settings as flags, profile, environment
/// and config file give them, with the model (and provider) asked for on top.
pub struct SettingsFactory {
    flags: Layer,
    profile: Option<String>,
    retry_base: Duration,
    scenario: Option<PathBuf>,
    env: fn(&str) -> Option<String>,
    /// The config file as last read.
    file: Mutex<Option<ConfigFile>>,
    /// The scripted client, once built: a scenario plays once per session,
    /// so a reload keeps it instead of starting it over.
    scripted: Mutex<Option<Arc<dyn ModelClient>>>,
    /// How much slower the built-in demo plays (1: as written).
    demo_pace: u64,
}

impl SettingsFactory {
    /// `file` is the config file as read at start; `env` reads the environment.
    pub fn new(
        flags: Layer,
        profile: Option<String>,
        file: Option<ConfigFile>,
        env: fn(&str) -> Option<String>,
        retry_base: Duration,
        scenario: Option<PathBuf>,
    ) -> Self {
        Self {
            flags,
            profile,
            retry_base,
            scenario,
            env,
            file: Mutex::new(file),
            scripted: Mutex::new(None),
            demo_pace: 1,
        }
    }

    /// The built-in demo plays `factor` times slower (the app's demo: a
    /// newcomer sees each plan step; headless runs stay quick).
    pub fn with_demo_pace(mut self, factor: u64) -> Self {
        self.demo_pace = factor.max(1);
        self
    }

    /// The settings with `choice` on top of the flags.
    pub fn settings(&self, choice: &ModelChoice, reload: bool) -> Result<Settings, LlmError> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if reload {
            // The environment of a running process cannot change; the file can.
            let (_, fresh) = config::load(&self.env)
                .map_err(|e| LlmError::Config(format!("cannot read the settings again: {e}")))?;
            *file = fresh;
        }
        let mut flags = self.flags.clone();
        if let Some(name) = &choice.provider {
            flags.provider = Some(provider_kind(name)?);
        }
        if let Some(model) = &choice.model {
            flags.model = Some(model.clone());
        }
        config::resolve(Inputs {
            flags,
            profile: self.profile.clone(),
            env: &self.env,
            file: file.clone(),
        })
        .map_err(|e| LlmError::Config(e.to_string()))
    }
}

impl ClientFactory for SettingsFactory {
    fn build(&self, choice: &ModelChoice, reload: bool) -> Result<Arc<dyn ModelClient>, LlmError> {
        let settings = self.settings(choice, reload)?;
        if settings.provider.value != ProviderKind::Scripted {
            return build_client(&settings, self.scenario.as_deref(), self.retry_base);
        }
        let mut scripted = self.scripted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = scripted.as_ref() {
            return Ok(client.clone());
        }
        let client: Arc<dyn ModelClient> = match &self.scenario {
            None if self.demo_pace > 1 => Arc::new(ScriptedClient::new(
                Scenario::parse(DEMO_SCENARIO)?.paced(self.demo_pace),
            )),
            _ => build_client(&settings, self.scenario.as_deref(), self.retry_base)?,
        };
        *scripted = Some(client.clone());
        Ok(client)
    }
}

/// The provider a name given by the user stands for.
fn provider_kind(name: &str) -> Result<ProviderKind, LlmError> {
    ProviderKind::parse(name).ok_or_else(|| {
        LlmError::Config(format!(
            "unknown provider `{name}`; use one of {}",
            ProviderKind::ALL.map(ProviderKind::as_str).join(", ")
        ))
    })
}

/// True when something answers on Ollama's port on this machine.
pub fn ollama_running() -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], 11434));
    TcpStream::connect_timeout(&addr, Duration::from_millis(150)).is_ok()
}

/// What a newcomer needs when no provider works: what was found, and the
/// lines to put in the config file.
pub fn first_run_help(
    reason: &str,
    config_path: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    ollama: bool,
) -> String {
    let has = |var: &str| env(var).is_some_and(|v| !v.trim().is_empty());
    let yes_no = |b: bool| if b { "set" } else { "not set" };
    let file = config_path
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "config.toml".into());
    let mut text = format!(
        "{reason}\n\nFound: ANTHROPIC_API_KEY {} · OPENAI_API_KEY {} · Ollama {}.\n",
        yes_no(has("ANTHROPIC_API_KEY")),
        yes_no(has("OPENAI_API_KEY")),
        if ollama {
            "answering on localhost:11434"
        } else {
            "not answering on localhost:11434"
        }
    );
    let lines = if ollama {
        "provider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n(and model = \"<a model you pulled, e.g. qwen2.5-coder:7b>\")"
    } else if has("OPENAI_API_KEY") {
        "provider = \"openai\"\nmodel = \"gpt-4o-mini\""
    } else {
        "provider = \"anthropic\"\napi_key = \"sk-ant-…\"   (or export ANTHROPIC_API_KEY=… and restart)"
    };
    text.push_str(&format!(
        "To set one up, add to {file}:\n{lines}\nthen press F5 (or send your message again): the file is read again, no restart needed.\n\nOr watch the offline demo: waypoint --demo"
    ));
    text
}

/// The approval mode this run uses and the sandbox `bash` gets; the note
/// says when the sandbox is missing (auto then refuses `bash` headless and
/// becomes auto-edit in the app).
pub fn safety(
    settings: &Settings,
    config: &mut AgentConfig,
    workspace: &std::path::Path,
    interactive: bool,
    demo: bool,
) -> (ApprovalMode, Option<String>) {
    use crate::safety::{Sandbox, landlock_abi};
    // Nobody answers approvals headless: plan mode refuses what it would ask.
    config.tools.bash.unattended = !interactive;
    // What Waypoint runs itself is found now, outside this workspace.
    crate::programs::trust(workspace);
    // The app asks in its approval prompt; headless, nobody can answer;
    // the demo works in a throwaway folder, in the sandbox, without stopping.
    let default = if interactive && !demo {
        ApprovalMode::Ask
    } else {
        ApprovalMode::Auto
    };
    let mode = settings.approval.value.unwrap_or(default);
    let why_not = match landlock_abi() {
        None => Some("this kernel has no Landlock".to_string()),
        Some(abi) if !settings.sandbox_network && abi < 4 => Some(format!(
            "sandbox.network = false needs Landlock ABI 4 and this kernel has {abi}"
        )),
        _ => None,
    };
    let mut gaps = None;
    if why_not.is_none() {
        let sandbox = Sandbox::for_workspace(
            workspace,
            &settings.sandbox_writable,
            settings.sandbox_network,
        )
        .with_sockets(&settings.sandbox_sockets);
        // Prepared now in auto mode, so a world the kernel refuses is said
        // once, at the start.
        if matches!(mode, ApprovalMode::Auto | ApprovalMode::Plan) {
            gaps = match sandbox.confinement_for(mode == ApprovalMode::Plan) {
                Ok(c) => c.gaps().map(|g| format!("sandbox: {g}")),
                Err(e) => Some(format!("sandbox: {e}")),
            };
        }
        config.tools.sandbox = Some(sandbox);
    }
    match (mode, why_not) {
        (ApprovalMode::Auto, Some(why)) if interactive => (
            ApprovalMode::AutoEdit,
            Some(format!(
                "no sandbox ({why}): auto mode asks before commands, like auto-edit"
            )),
        ),
        (ApprovalMode::Auto, Some(why)) => (
            mode,
            Some(format!(
                "no sandbox ({why}): bash is refused in auto mode; --approval yolo runs commands unsandboxed"
            )),
        ),
        (mode, _) => (mode, gaps),
    }
}

/// The system prompt's `<safety>` block: the approval mode the session
/// starts in and, in `auto`, what the sandbox lets commands do. Written
/// once, so the prompt stays byte-stable (a later switch is the user's).
pub fn safety_block(mode: ApprovalMode, sandbox: Option<&crate::safety::Sandbox>) -> String {
    let how = match (mode, sandbox) {
        (ApprovalMode::ReadOnly, _) => {
            "file changes and shell commands are refused; reads and the plan work.".to_string()
        }
        (ApprovalMode::Plan, sandbox) => format!(
            "you are in plan mode (read-only), enforced by Waypoint: file changes, MCP tools \
not marked read-only and `general` subagents are refused; {} {}",
            if sandbox.is_some() {
                "shell commands run in a sandbox where nothing is writable."
            } else {
                "shell commands are asked (there is no sandbox here)."
            },
            crate::events::PLAN_MODE_WORK
        ),
        (ApprovalMode::Ask, _) => "each shell command and file change waits for the user's \
approval; a refused one comes back as \"Refused by the user\"."
            .to_string(),
        (ApprovalMode::AutoEdit, _) => "file changes in the workspace run; each shell command \
waits for the user's approval."
            .to_string(),
        (ApprovalMode::Auto, Some(sandbox)) => format!(
            "nothing asks. {} A command the sandbox stopped is marked \"[blocked by the sandbox: …]\".",
            sandbox.describe()
        ),
        (ApprovalMode::Auto, None) => {
            "file changes run; shell commands are refused (there is no sandbox here).".to_string()
        }
        (ApprovalMode::Yolo, _) => {
            "nothing asks and shell commands run unsandboxed with the user's rights.".to_string()
        }
    };
    format!(
        "<safety>\nApproval mode: {} (as the session started; the user may switch it): {how}\n</safety>",
        mode.as_str()
    )
}

/// `waypoint sandbox -- CMD`: runs CMD confined as `bash`'s commands are
/// (its own world, Landlock, seccomp) and returns its exit code (128 + the
/// signal that ended it). Called before any thread exists, so the child
/// is a plain fork that may allocate until it execs.
pub fn run_sandboxed(write: &[PathBuf], network: bool, command: &[std::ffi::OsString]) -> i32 {
    use std::os::unix::process::CommandExt;
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("waypoint sandbox: cannot read the current folder: {e}");
            return 126;
        }
    };
    let sandbox = crate::safety::Sandbox::for_workspace(&cwd, write, network);
    for (dir, why) in &sandbox.left_out {
        eprintln!("waypoint sandbox: {} is not writable: {why}", dir.display());
    }
    let confinement = match sandbox.prepare() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("waypoint sandbox: {e}");
            return 126;
        }
    };
    if let Some(gaps) = confinement.gaps() {
        eprintln!("waypoint sandbox: {gaps}");
    }
    let Some((program, args)) = command.split_first() else {
        eprintln!("waypoint sandbox: no command given");
        return 2;
    };
    let flags = libc::c_ulong::try_from(confinement.clone_flags() | libc::SIGCHLD).unwrap_or(0);
    // SAFETY: clone without a new stack is fork with namespaces; this
    // process has one thread, so the child may run Rust freely until exec.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    if pid < 0 {
        eprintln!(
            "waypoint sandbox: cannot start the command: {}",
            std::io::Error::last_os_error()
        );
        return 126;
    }
    if pid == 0 {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args);
        for name in crate::safety::SOCKET_VARS {
            if confinement.hides_var(std::ffi::OsStr::new(name)) {
                cmd.env_remove(name);
            }
        }
        let e = match confinement.enter() {
            Ok(()) => cmd.exec(),
            Err(e) => e,
        };
        eprintln!(
            "waypoint sandbox: cannot run {}: {e}",
            program.to_string_lossy()
        );
        std::process::exit(127);
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return 126;
    };
    let status = loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => break status,
            Err(rustix::io::Errno::INTR) => {}
            _ => return 126,
        }
    };
    match status.terminating_signal() {
        Some(signal) => 128 + signal,
        None => libc::WEXITSTATUS(status.as_raw()),
    }
}

/// Logs go to a file, never to the terminal: `WAYPOINT_LOG` or the state
/// folder. The log holds error bodies and paths: the user's alone, like the
/// sessions (folders it makes 0700, the file 0600, an older 0644 file
/// tightened).
pub fn init_logging() {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let path = std::env::var_os("WAYPOINT_LOG")
        .map(PathBuf::from)
        .or_else(|| {
            let base = std::env::var_os("XDG_STATE_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state"))
                })?;
            Some(base.join("waypoint").join("waypoint.log"))
        });
    let Some(path) = path else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    else {
        return;
    };
    let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    let filter = tracing_subscriber::EnvFilter::try_from_env("WAYPOINT_LOG_LEVEL")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}

/// Says what a failing disk kept from a transcript
/// ([`crate::session::unsaved_notes`]) on stderr, one line each: at the
/// process's end, once the terminal is restored.
pub fn say_unsaved() {
    for note in crate::session::unsaved_notes() {
        eprintln!("waypoint: {}", crate::text::clean_line(&note));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Inputs, Layer, resolve};

    fn settings(env: &[(&str, &str)], flags: Layer) -> Settings {
        let map: std::collections::HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |k: &str| map.get(k).cloned();
        resolve(Inputs {
            flags,
            profile: None,
            env: &lookup,
            file: None,
        })
        .unwrap()
    }

    #[test]
    fn a_bad_base_url_names_the_variable_that_set_it() {
        let s = settings(
            &[
                ("ANTHROPIC_API_KEY", "sk-ant-test-123456789"),
                ("ANTHROPIC_BASE_URL", "localhost:8080"),
            ],
            Layer::default(),
        );
        let e = build_client(&s, None, Duration::from_millis(1))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("`localhost:8080`") && e.contains("it was set by env ANTHROPIC_BASE_URL"),
            "{e}"
        );
    }

    #[test]
    fn missing_keys_explain_themselves() {
        let s = settings(&[], Layer::default());
        let e = build_client(&s, None, Duration::from_millis(1))
            .err()
            .unwrap();
        assert!(e.to_string().contains("ANTHROPIC_API_KEY"));
        let s = settings(
            &[],
            Layer {
                provider: Some(ProviderKind::Openai),
                ..Layer::default()
            },
        );
        let e = build_client(&s, None, Duration::from_millis(1))
            .err()
            .unwrap();
        assert!(e.to_string().contains("OPENAI_API_KEY") && e.to_string().contains("11434"));
        // A local server needs no key.
        let s = settings(
            &[("OPENAI_BASE_URL", OLLAMA_URL), ("OPENAI_MODEL", "qwen")],
            Layer {
                provider: Some(ProviderKind::Openai),
                ..Layer::default()
            },
        );
        assert!(build_client(&s, None, Duration::from_millis(1)).is_ok());
    }

    #[test]
    fn first_run_help_names_what_it_found_and_the_lines_to_add() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-x".to_string());
        let text = first_run_help(
            "No model provider is configured.",
            Some(Path::new("/c/config.toml")),
            &env,
            false,
        );
        assert!(
            text.contains("ANTHROPIC_API_KEY not set · OPENAI_API_KEY set · Ollama not answering")
        );
        assert!(
            text.contains("add to /c/config.toml:\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"")
        );
        let none = |_: &str| None;
        let text = first_run_help("x", None, &none, true);
        assert!(text.contains("base_url = \"http://localhost:11434/v1\""));
        assert!(text.contains("waypoint --demo"));
        assert!(text.contains("press F5"));
        let text = first_run_help("x", None, &none, false);
        assert!(text.contains("api_key = \"sk-ant-…\""), "{text}");
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_factory_switches_model_and_provider_and_names_unknown_ones() {
        let flags = Layer {
            provider: Some(ProviderKind::Openai),
            base_url: Some(OLLAMA_URL.into()),
            ..Layer::default()
        };
        let f = SettingsFactory::new(flags, None, None, no_env, Duration::from_millis(1), None);
        let c = f
            .build(
                &ModelChoice {
                    provider: None,
                    model: Some("qwen".into()),
                },
                false,
            )
            .unwrap();
        assert_eq!((c.provider(), c.model()), ("openai", "qwen"));
        let s = f
            .build(
                &ModelChoice {
                    provider: Some("Scripted".into()),
                    model: None,
                },
                false,
            )
            .unwrap();
        assert_eq!(s.provider(), "scripted");
        // A reload keeps the scenario where it is.
        let again = f
            .build(
                &ModelChoice {
                    provider: Some("scripted".into()),
                    model: None,
                },
                false,
            )
            .unwrap();
        assert!(Arc::ptr_eq(&s, &again));
        let e = f
            .build(
                &ModelChoice {
                    provider: Some("gemini".into()),
                    model: Some("x".into()),
                },
                false,
            )
            .err()
            .unwrap();
        assert!(matches!(e, LlmError::Config(_)));
        assert_eq!(
            e.to_string(),
            "unknown provider `gemini`; use one of anthropic, openai, scripted"
        );
    }

    #[test]
    fn agent_limits_come_from_settings() {
        let s = settings(
            &[
                ("WAYPOINT_NAG_EVERY", "0"),
                ("WAYPOINT_BASH_TIMEOUT", "9000"),
            ],
            Layer::default(),
        );
        let c = agent_config(&s);
        assert_eq!(c.nag_every, 0);
        assert_eq!(c.tools.bash.default_timeout, Duration::from_secs(600));
    }

    #[test]
    fn the_model_is_told_the_mode_and_what_the_sandbox_allows() {
        let sandbox = crate::safety::Sandbox {
            writable: vec![
                PathBuf::from("/work/ws"),
                PathBuf::from("/tmp"),
                PathBuf::from("/dev/null"),
            ],
            network: false,
            ..crate::safety::Sandbox::default()
        };
        let auto = safety_block(ApprovalMode::Auto, Some(&sandbox));
        assert!(auto.starts_with("<safety>\nApproval mode: auto"), "{auto}");
        assert!(
            auto.contains("write only under /work/ws, /tmp (and /dev/null)"),
            "{auto}"
        );
        assert!(auto.contains("The network is off"), "{auto}");
        assert!(auto.contains("[blocked by the sandbox"), "{auto}");
        let no_sandbox = safety_block(ApprovalMode::Auto, None);
        assert!(
            no_sandbox.contains("shell commands are refused"),
            "{no_sandbox}"
        );
        let yolo = safety_block(ApprovalMode::Yolo, Some(&sandbox));
        assert!(yolo.contains("unsandboxed"), "{yolo}");
        assert!(!yolo.contains("/work/ws"), "{yolo}");
        assert!(safety_block(ApprovalMode::Ask, None).contains("waits for the user's approval"));
        let plan = safety_block(ApprovalMode::Plan, Some(&sandbox));
        for words in ["plan mode (read-only)", "nothing is writable", "todo_write"] {
            assert!(plan.contains(words), "{plan}");
        }
        let plan = safety_block(ApprovalMode::Plan, None);
        assert!(plan.contains("shell commands are asked"), "{plan}");
    }
}
