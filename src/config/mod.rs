//! Settings: built-in defaults, overridden by the TOML config file (and a
//! named profile in it), overridden by environment variables, overridden by
//! flags. Invariant: every resolved value remembers where it came from, so
//! `waypoint config` can show it; keys are only ever printed masked.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use crate::events::ApprovalMode;
use crate::pricing::Price;
use crate::safety::Rules;

/// One layer of optional settings: the file, a profile, or the flags.
#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Who answers: `anthropic`, `openai` (and every compatible server) or
    /// `scripted` (a scenario file, offline).
    pub provider: Option<ProviderKind>,
    /// The model's name as the provider knows it.
    pub model: Option<String>,
    /// The API's address (a gateway, a local server).
    pub base_url: Option<String>,
    /// The API key; better in `ANTHROPIC_API_KEY` or `OPENAI_API_KEY`. Only
    /// ever shown masked.
    pub api_key: Option<String>,
    /// The `openai` provider's wire: auto, chat or responses.
    pub wire: Option<WireKind>,
    /// Whether the model takes images (unset: known by its name).
    pub images: Option<bool>,
    /// Output tokens per model request.
    pub max_tokens: Option<u32>,
    /// Model requests per turn before it stops.
    pub max_turns: Option<u32>,
    /// Rounds without a plan update before the model is reminded of it.
    pub nag_every: Option<u32>,
    /// Nags in a row without a plan update before they stop; 0 = no limit.
    pub nag_max: Option<u32>,
    /// Seconds a `bash` command may run in the foreground.
    pub bash_timeout: Option<u64>,
    /// Seconds after which a `bash` command still running becomes a
    /// background job; 0 = never.
    pub auto_background_after: Option<u64>,
    /// Bytes of a tool's output the model reads (head and tail kept).
    pub output_cap: Option<usize>,
    /// The context window in tokens; 0 = the model's (or 128k).
    pub context_window: Option<u64>,
    /// The share of the window past which the conversation is compacted.
    pub compact_at: Option<f64>,
    /// Retries of a failed or cut model request.
    pub max_retries: Option<u32>,
    /// Seconds a stream may stay silent before it counts as cut.
    pub stream_idle_timeout: Option<u64>,
    /// Extended thinking's token budget (Anthropic); 0 = off.
    pub thinking_budget: Option<u32>,
    /// The app's colours: `auto` (the terminal's) or `no-color`.
    pub theme: Option<Theme>,
    /// What tool calls may do without asking.
    pub approval: Option<ApprovalMode>,
    /// A Markdown copy of the live plan in the workspace.
    pub plan_file: Option<String>,
    /// What the model's changes to an approved plan need: `ask` (your
    /// sign-off; refused headless), `tell` (made and shown) or `free`.
    pub plan_changes: Option<PlanChanges>,
    /// Whether the model gets the todo tools (`todo_write`, `todo_read`);
    /// without them the user's plan is re-sent each turn and its items
    /// advance by the reply's `Done: N` lines.
    pub plan_tool: Option<bool>,
    /// `[sandbox]`: where sandboxed commands may also write, and the network.
    pub sandbox: Option<SandboxLayer>,
    /// Named profiles (only at the top level of the file).
    #[serde(default)]
    pub profile: BTreeMap<String, Layer>,
    /// Prices per model, USD per million tokens (only at the top level).
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// MCP servers, `[mcp_servers.NAME]` (only at the top level).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// The share of the context window MCP tool definitions may take
    /// before only `mcp_search` is sent (only at the top level).
    pub mcp_tool_share: Option<f64>,
    /// `[task]`: subagents' places and limits (only at the top level).
    pub task: Option<TaskLayer>,
    /// `[[hooks.EVENT]]`: commands run at a session's moments (only at
    /// the top level).
    #[serde(default)]
    pub hooks: BTreeMap<String, Vec<HookEntry>>,
    /// Run every project's `.claude/settings.json` hooks without asking.
    pub hooks_from_claude: Option<bool>,
    /// Hosts `web_fetch` may reach at a private or loopback address.
    #[serde(default)]
    pub web_allow: Vec<String>,
    /// When the app sends a terminal notification (only at the top level).
    pub notify: Option<NotifyMode>,
    /// How the notification is written: `auto`, `osc9`, `osc777` or `bel`.
    pub notify_method: Option<NotifyMethod>,
    /// Seconds past which a turn's end notifies even when focused.
    pub notify_after: Option<u64>,
    /// Shell commands allowed without asking (matched on parsed words).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Shell commands never run, whatever the mode. A profile's rules add
    /// to the top level's.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Under `waypoint acp`, where a command that does not run in the
    /// sandbox runs: `waypoint` (its own runner) or `editor` (a terminal of
    /// the editor's, when it offers them) (only at the top level).
    pub acp_terminal: Option<AcpTerminal>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    File(PathBuf),
    Profile(String),
    Env(String),
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::File(p) => write!(f, "file {}", p.display()),
            Source::Profile(name) => write!(f, "profile {name}"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("the config file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "profile `{name}` was asked for, but there is no config file (looked at {}); create it with a [profile.{name}] table",
        .looked_at.as_ref().map_or_else(|| "no config folder is known".to_string(), |p| p.display().to_string())
    )]
    NoConfigForProfile {
        name: String,
        looked_at: Option<PathBuf>,
    },
    #[error("profile `{name}` is not in the config file{}", list_profiles(.available))]
    NoProfile {
        name: String,
        available: Vec<String>,
    },
    #[error(
        "profile `{0}` may not contain `profile`, `prices`, `mcp_servers` or `task` tables; put them at the top level"
    )]
    NestedProfile(String),
    #[error("{name} = {value} (from {from}) is not valid: {message}")]
    Value {
        name: &'static str,
        value: String,
        from: Source,
        message: String,
    },
    #[error("{var}={value:?} is not valid: {message}")]
    Env {
        var: String,
        value: String,
        message: String,
    },
}

fn list_profiles(available: &[String]) -> String {
    if available.is_empty() {
        " (it defines none)".into()
    } else {
        format!("; it has: {}", available.join(", "))
    }
}

/// The effective settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub provider: Sourced<ProviderKind>,
    pub model: Sourced<String>,
    pub base_url: Sourced<String>,
    pub api_key: Option<Sourced<String>>,
    /// The `openai` provider's wire (`Auto`: by the model).
    pub wire: Sourced<WireKind>,
    /// Whether the model takes images (`None`: by its name).
    pub images: Sourced<Option<bool>>,
    pub max_tokens: Sourced<u32>,
    pub max_turns: Sourced<u32>,
    pub nag_every: Sourced<u32>,
    pub nag_max: Sourced<u32>,
    pub bash_timeout: Sourced<u64>,
    pub auto_background_after: Sourced<u64>,
    pub output_cap: Sourced<usize>,
    pub context_window: Sourced<u64>,
    pub compact_at: Sourced<f64>,
    pub max_retries: Sourced<u32>,
    pub stream_idle_timeout: Sourced<u64>,
    pub thinking_budget: Sourced<u32>,
    pub theme: Sourced<Theme>,
    /// `None`: the driver's default (ask in the app, auto headless).
    pub approval: Sourced<Option<ApprovalMode>>,
    /// The plan file, relative to the workspace (`None`: not kept).
    pub plan_file: Sourced<Option<String>>,
    /// What the model's changes to an approved plan need.
    pub plan_changes: Sourced<PlanChanges>,
    /// Whether the model gets the todo tools.
    pub plan_tool: Sourced<bool>,
    /// Extra writable folders of the sandbox (home expanded).
    pub sandbox_writable: Vec<PathBuf>,
    pub sandbox_network: bool,
    /// Socket variables the sandbox lets through (`[sandbox] sockets`).
    pub sandbox_sockets: Vec<String>,
    pub profile: Option<String>,
    /// The file that was read, if it exists, and its profiles.
    pub file: Option<PathBuf>,
    pub profiles: Vec<String>,
    pub prices: BTreeMap<String, Price>,
    /// The MCP servers of the config file.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `mcp_tool_share`: the context share MCP tool definitions may take.
    pub mcp_tool_share: f64,
    /// `[task]`: subagents' places and limits.
    pub task: TaskLimits,
    /// The `allow` and `deny` rules for shell commands (the file's and the
    /// profile's together).
    pub rules: Rules,
    /// The config file's hooks.
    pub hooks: HooksConfig,
    /// When and how the app sends terminal notifications.
    pub notify: NotifySettings,
    /// Hosts `web_fetch` may reach at a private or loopback address.
    pub web_allow: Vec<String>,
    /// Where `waypoint acp` runs a command outside the sandbox.
    pub acp_terminal: AcpTerminal,
    /// The file's top-level values as written, the chosen profile's over
    /// them (for `waypoint config`'s keys without a line of their own).
    pub file_values: toml::Table,
}

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_ANTHROPIC_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_URL: &str = "https://api.openai.com/v1";

/// What the resolver reads; `env` is a lookup so tests need not touch the process environment.
pub struct Inputs<'a> {
    pub flags: Layer,
    pub profile: Option<String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The file's path and its text, when it exists.
    pub file: Option<ConfigFile>,
}

/// The file's top-level values as written (without the profiles), with
/// the profile `chosen`'s over them.
fn file_values(file: Option<&ConfigFile>, chosen: Option<&str>) -> toml::Table {
    let Some(mut table) = file.and_then(|(_, text)| toml::from_str::<toml::Table>(text).ok())
    else {
        return toml::Table::new();
    };
    let profiles = table.remove("profile");
    if let (Some(name), Some(toml::Value::Table(profiles))) = (chosen, profiles)
        && let Some(toml::Value::Table(own)) = profiles.get(name)
    {
        table.extend(own.clone());
    }
    table
}

/// The effective settings: each value from the flags, then the environment,
/// then the profile, then the file, then the default.
pub fn resolve(inputs: Inputs<'_>) -> Result<Settings, ConfigError> {
    let file_layer = file_layer(inputs.file.as_ref())?;
    let file = file_layer.as_ref().map(|(p, l)| (*p, l));
    let profiles: Vec<String> = file
        .map(|(_, l)| l.profile.keys().cloned().collect())
        .unwrap_or_default();
    let chosen = profile(&inputs, file.map(|(_, l)| l), &profiles)?;
    let chosen_name = chosen.as_ref().map(|(name, _)| name.clone());
    let profile = chosen.as_ref().map(|(name, l)| (name.as_str(), *l));
    let safety = safety::resolve(file.map(|(_, l)| l), profile, inputs.env);
    let layers = Layers {
        flags: &inputs.flags,
        env: inputs.env,
        profile,
        file,
        prefix: "ANTHROPIC",
    };
    let Connection {
        provider,
        model,
        base_url,
        api_key,
        wire,
        images,
    } = connection(layers)?;
    let (bash_timeout, auto_background_after) = bash_limits(layers)?;
    let (max_turns, nag_every, nag_max) = turn_limits(layers)?;
    let settings = Settings {
        max_tokens: layers.number(
            "--max-tokens",
            |l| l.max_tokens,
            "max_tokens",
            defaults::MAX_TOKENS,
        )?,
        max_turns,
        nag_every,
        nag_max,
        bash_timeout,
        auto_background_after,
        output_cap: layers.number(
            "--output-cap",
            |l| l.output_cap,
            "output_cap",
            defaults::OUTPUT_CAP,
        )?,
        context_window: layers.number(
            "--context-window",
            |l| l.context_window,
            "context_window",
            0,
        )?,
        compact_at: layers.pick(
            "--compact-at",
            |l| l.compact_at,
            "compact_at",
            share,
            defaults::COMPACT_AT,
        )?,
        max_retries: layers.number(
            "--max-retries",
            |l| l.max_retries,
            "max_retries",
            defaults::MAX_RETRIES,
        )?,
        stream_idle_timeout: layers.number(
            "--stream-idle-timeout",
            |l| l.stream_idle_timeout,
            "stream_idle_timeout",
            defaults::STREAM_IDLE_TIMEOUT,
        )?,
        thinking_budget: layers.number(
            "--thinking-budget",
            |l| l.thinking_budget,
            "thinking_budget",
            0,
        )?,
        approval: layers.pick(
            "--approval",
            |l| l.approval.map(Some),
            "approval",
            approval,
            None,
        )?,
        plan_file: layers::plan_file(layers)?,
        theme: theme(layers)?,
        plan_changes: layers::plan_changes(layers)?,
        plan_tool: layers::plan_tool(layers)?,
        sandbox_writable: safety.sandbox_writable,
        sandbox_network: safety.sandbox_network,
        sandbox_sockets: safety.sandbox_sockets,
        provider,
        model,
        base_url,
        api_key,
        wire,
        images,
        profile: chosen.map(|(name, _)| name),
        file: inputs.file.as_ref().map(|(p, _)| p.clone()),
        profiles,
        rules: safety.rules,
        prices: from_file(file_layer.as_ref(), |l| l.prices.clone()),
        mcp_tool_share: file_layer
            .as_ref()
            .and_then(|(_, l)| l.mcp_tool_share)
            .unwrap_or(mcp::BUDGET_SHARE),
        task: task_limits(file_layer.as_ref())?,
        hooks: hooks_config(file_layer.as_ref())?,
        notify: notify_settings(file_layer.as_ref()),
        web_allow: from_file(file_layer.as_ref(), |l| l.web_allow.clone()),
        acp_terminal: from_file(file_layer.as_ref(), |l| l.acp_terminal).unwrap_or_default(),
        mcp_servers: file_layer.map(|(_, l)| l.mcp_servers).unwrap_or_default(),
        file_values: file_values(inputs.file.as_ref(), chosen_name.as_deref()),
    };
    check_mcp_tool_share(&settings)?;
    check_share("compact_at", &settings.compact_at)?;
    Ok(settings)
}

/// Three numbers, each with where it came from.
type Three = (Sourced<u32>, Sourced<u32>, Sourced<u32>);

/// Model requests per turn, and when the plan nag comes and stops.
fn turn_limits(layers: Layers<'_>) -> Result<Three, ConfigError> {
    Ok((
        layers.number(
            "--max-turns",
            |l| l.max_turns,
            "max_turns",
            defaults::MAX_TURNS,
        )?,
        layers.number(
            "--nag-every",
            |l| l.nag_every,
            "nag_every",
            defaults::NAG_EVERY,
        )?,
        layers.number("--nag-max", |l| l.nag_max, "nag_max", defaults::NAG_MAX)?,
    ))
}

/// `bash`'s default timeout, and when a command still running moves to
/// the background (0: never).
fn bash_limits(layers: Layers<'_>) -> Result<(Sourced<u64>, Sourced<u64>), ConfigError> {
    let timeout = layers.number(
        "--bash-timeout",
        |l| l.bash_timeout,
        "bash_timeout",
        defaults::BASH_TIMEOUT,
    )?;
    let after = layers.number(
        "--auto-background-after",
        |l| l.auto_background_after,
        "auto_background_after",
        0,
    )?;
    Ok((timeout, after))
}

/// What `pick` takes of the file's layer; the default without a file.
fn from_file<T: Default>(
    file: Option<&(&std::path::Path, Layer)>,
    pick: impl Fn(&Layer) -> T,
) -> T {
    file.map(|(_, l)| pick(l)).unwrap_or_default()
}

/// The file's notification settings over the defaults.
fn notify_settings(file: Option<&(&std::path::Path, Layer)>) -> NotifySettings {
    let defaults = NotifySettings::default();
    let Some((_, layer)) = file else {
        return defaults;
    };
    NotifySettings {
        mode: layer.notify.unwrap_or(defaults.mode),
        method: layer.notify_method.unwrap_or(defaults.method),
        after_secs: layer.notify_after.unwrap_or(defaults.after_secs),
    }
}

/// The file's hooks; an event name that is none is an error naming it.
fn hooks_config(file: Option<&(&std::path::Path, Layer)>) -> Result<HooksConfig, ConfigError> {
    let Some((path, layer)) = file else {
        return Ok(HooksConfig::default());
    };
    let config = HooksConfig {
        entries: layer.hooks.clone(),
        from_claude: layer.hooks_from_claude.unwrap_or(false),
        file: Some(path.to_path_buf()),
    };
    match config.unknown_events(&HOOK_EVENTS).first() {
        None => Ok(config),
        Some(name) => Err(ConfigError::Value {
            name: "hooks",
            value: name.clone(),
            from: Source::File(path.to_path_buf()),
            message: format!("is not a hook event (one of {})", HOOK_EVENTS.join(", ")),
        }),
    }
}

/// The file's `[task]` limits over the defaults.
fn task_limits(file: Option<&(&std::path::Path, Layer)>) -> Result<TaskLimits, ConfigError> {
    let Some((path, layer)) = file else {
        return Ok(TaskLimits::default());
    };
    let Some(task) = &layer.task else {
        return Ok(TaskLimits::default());
    };
    task.limits().map_err(|name| ConfigError::Value {
        name,
        value: "0".into(),
        from: Source::File(path.to_path_buf()),
        message: "must be at least 1".into(),
    })
}

/// `mcp_tool_share` (read from the file only) is a share of the window.
fn check_mcp_tool_share(settings: &Settings) -> Result<(), ConfigError> {
    let share = settings.mcp_tool_share;
    if share > 0.0 && share <= 1.0 {
        return Ok(());
    }
    Err(ConfigError::Value {
        name: "mcp_tool_share",
        value: share.to_string(),
        from: settings.file.clone().map_or(Source::Default, Source::File),
        message: "a share of the context window: more than 0, at most 1".into(),
    })
}

/// The profile asked for (`--profile`, else `WAYPOINT_PROFILE`), its name
/// and its layer: it must be in the config file and may hold neither
/// profiles nor prices of its own.
fn profile<'a>(
    inputs: &Inputs<'_>,
    file: Option<&'a Layer>,
    profiles: &[String],
) -> Result<Option<(String, &'a Layer)>, ConfigError> {
    let asked = inputs.profile.clone();
    let from_env = || {
        let var = env_vars::env_vars("profile", "").pop()?;
        (inputs.env)(&var).filter(|p| !p.is_empty())
    };
    let Some(name) = asked.or_else(from_env) else {
        return Ok(None);
    };
    let Some(file) = file else {
        let looked_at = config_path(inputs.env);
        return Err(ConfigError::NoConfigForProfile { name, looked_at });
    };
    let Some(layer) = file.profile.get(&name) else {
        let available = profiles.to_vec();
        return Err(ConfigError::NoProfile { name, available });
    };
    if !layer.profile.is_empty()
        || !layer.prices.is_empty()
        || !layer.mcp_servers.is_empty()
        || layer.task.is_some()
    {
        return Err(ConfigError::NestedProfile(name));
    }
    Ok(Some((name, layer)))
}

/// `--theme` wins; then `NO_COLOR` (set and not empty) turns colour off;
/// then the profile or the file.
fn theme(layers: Layers<'_>) -> Result<Sourced<Theme>, ConfigError> {
    if let Some(value) = layers.flags.theme {
        let source = Source::Flag("--theme");
        return Ok(Sourced { value, source });
    }
    if let Some(var) = env_vars::env_vars("theme", "").pop()
        && (layers.env)(&var).is_some_and(|v| !v.is_empty())
    {
        let source = Source::Env(var);
        let value = Theme::NoColor;
        return Ok(Sourced { value, source });
    }
    let no_env = |_: &str| Err(String::new());
    layers.pick("--theme", |l| l.theme, "", no_env, Theme::Auto)
}

mod approvals;
pub mod claude;
pub mod defaults;
mod describe;
mod env_vars;
mod file;
mod hooks;
mod kinds;
mod layers;
mod mcp;
mod notify;
mod provider;
mod safety;
pub mod schema;
mod task;

use file::file_layer;
pub use file::{ConfigFile, config_path, load, read_file};
use layers::{Layers, approval, check_share, share};
use provider::{Connection, connection};

pub use kinds::{AcpTerminal, PlanChanges, ProviderKind, Theme, WireKind};

pub use approvals::{Approvals, Fingerprint, canonical};
pub use hooks::{HOOK_EVENTS, HookCommand, HookEntry, HooksConfig};
pub use mcp::{McpServerConfig, McpSettings, ProjectEntry};
pub use notify::{NotifyMethod, NotifyMode, NotifySettings};
pub use safety::SandboxLayer;
pub use task::{TaskLayer, TaskLimits};

pub use describe::mask;
pub use env_vars::ENV_VARS;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).cloned()
    }

    fn resolve_with(
        flags: Layer,
        profile: Option<&str>,
        env: &[(&str, &str)],
        file: Option<&str>,
    ) -> Result<Settings, ConfigError> {
        let env = env_of(env);
        resolve(Inputs {
            flags,
            profile: profile.map(str::to_string),
            env: &env,
            file: file.map(|t| (PathBuf::from("/cfg/config.toml"), t.to_string())),
        })
    }

    const FILE: &str = r#"
model = "claude-opus-4-1"
nag_every = 5
theme = "no-color"

[profile.local]
provider = "openai"
base_url = "http://localhost:11434/v1"
model = "qwen2.5-coder:7b"

[prices."qwen2.5-coder:7b"]
input = 0.0
output = 0.0
"#;

    #[test]
    fn defaults_apply_without_file_env_or_flags() {
        let s = resolve_with(Layer::default(), None, &[], None).unwrap();
        assert_eq!(s.provider.value, ProviderKind::Anthropic);
        assert_eq!(
            s.model,
            Sourced {
                value: DEFAULT_ANTHROPIC_MODEL.into(),
                source: Source::Default
            }
        );
        assert_eq!(s.stream_idle_timeout.value, 60);
        assert_eq!(s.api_key, None);
    }

    #[test]
    fn context_window_and_compact_at_from_file_env_and_flag() {
        let s = resolve_with(Layer::default(), None, &[], None).unwrap();
        assert_eq!((s.context_window.value, s.compact_at.value), (0, 0.8));
        let file = "context_window = 8000\ncompact_at = 0.5\n";
        let s = resolve_with(Layer::default(), None, &[], Some(file)).unwrap();
        assert_eq!((s.context_window.value, s.compact_at.value), (8000, 0.5));
        let env = [("WAYPOINT_CONTEXT_WINDOW", "64000")];
        let s = resolve_with(Layer::default(), None, &env, Some(file)).unwrap();
        assert_eq!(s.context_window.value, 64000);
        let flags = Layer {
            context_window: Some(32000),
            ..Layer::default()
        };
        let s = resolve_with(flags, None, &env, Some(file)).unwrap();
        assert_eq!(s.context_window.value, 32000);
        let bad = [("WAYPOINT_COMPACT_AT", "1.5")];
        assert!(resolve_with(Layer::default(), None, &bad, None).is_err());
        // From a flag or the file too, NaN included.
        for v in [0.0, 1.5, f64::NAN] {
            let flags = Layer {
                compact_at: Some(v),
                ..Layer::default()
            };
            let e = resolve_with(flags, None, &[], None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("compact_at") && e.contains("flag --compact-at"),
                "{e}"
            );
        }
        let e = resolve_with(Layer::default(), None, &[], Some("compact_at = 5.0\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("compact_at = 5 (from file"), "{e}");
    }

    #[test]
    fn thinking_budget_from_file_env_and_flag() {
        let s = resolve_with(Layer::default(), None, &[], None).unwrap();
        assert_eq!(s.thinking_budget.value, 0);
        let file = "thinking_budget = 2048\n";
        let s = resolve_with(Layer::default(), None, &[], Some(file)).unwrap();
        assert_eq!(s.thinking_budget.value, 2048);
        assert!(s.describe(None).contains("thinking_budget = 2048"));
        let env = [("WAYPOINT_THINKING_BUDGET", "4096")];
        let s = resolve_with(Layer::default(), None, &env, Some(file)).unwrap();
        assert_eq!(s.thinking_budget.value, 4096);
        let flags = Layer {
            thinking_budget: Some(8000),
            ..Layer::default()
        };
        let s = resolve_with(flags, None, &env, Some(file)).unwrap();
        assert_eq!(s.thinking_budget.source, Source::Flag("--thinking-budget"));
    }

    #[test]
    fn file_then_env_then_flag_win_in_order() {
        let s = resolve_with(Layer::default(), None, &[], Some(FILE)).unwrap();
        assert_eq!(s.model.value, "claude-opus-4-1");
        assert_eq!(s.model.source, Source::File("/cfg/config.toml".into()));
        assert_eq!(s.nag_every.value, 5);
        let s = resolve_with(
            Layer::default(),
            None,
            &[("ANTHROPIC_MODEL", "from-env"), ("WAYPOINT_NAG_EVERY", "7")],
            Some(FILE),
        )
        .unwrap();
        assert_eq!((s.model.value.as_str(), s.nag_every.value), ("from-env", 7));
        assert_eq!(s.model.source, Source::Env("ANTHROPIC_MODEL".into()));
        let flags = Layer {
            model: Some("from-flag".into()),
            ..Layer::default()
        };
        let s = resolve_with(flags, None, &[("ANTHROPIC_MODEL", "from-env")], Some(FILE)).unwrap();
        assert_eq!(
            s.model,
            Sourced {
                value: "from-flag".into(),
                source: Source::Flag("--model")
            }
        );
    }

    #[test]
    fn profiles_switch_provider_and_its_variables() {
        let s = resolve_with(
            Layer::default(),
            Some("local"),
            &[
                ("OPENAI_API_KEY", "sk-local-123456789"),
                ("ANTHROPIC_API_KEY", "nope"),
            ],
            Some(FILE),
        )
        .unwrap();
        assert_eq!(s.provider.value, ProviderKind::Openai);
        assert_eq!(s.base_url.value, "http://localhost:11434/v1");
        assert_eq!(s.model.source, Source::Profile("local".into()));
        assert_eq!(
            s.api_key.unwrap().source,
            Source::Env("OPENAI_API_KEY".into())
        );
        assert!(s.prices.contains_key("qwen2.5-coder:7b"));
        let s = resolve_with(
            Layer::default(),
            None,
            &[("WAYPOINT_PROFILE", "local")],
            Some(FILE),
        )
        .unwrap();
        assert_eq!(s.provider.value, ProviderKind::Openai);
    }

    #[test]
    fn a_profile_without_a_config_file_names_where_it_looked() {
        let e = resolve_with(
            Layer::default(),
            Some("fast"),
            &[("WAYPOINT_CONFIG", "/home/me/.config/waypoint/config.toml")],
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "profile `fast` was asked for, but there is no config file (looked at /home/me/.config/waypoint/config.toml); create it with a [profile.fast] table"
        );
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let e = resolve_with(Layer::default(), Some("fast"), &[], Some(FILE)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "profile `fast` is not in the config file; it has: local"
        );
        let e = resolve_with(Layer::default(), None, &[], Some("modle = 1")).unwrap_err();
        assert!(e.to_string().contains("unknown field `modle`"), "{e}");
        let e = resolve_with(
            Layer::default(),
            None,
            &[("WAYPOINT_NAG_EVERY", "often")],
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "WAYPOINT_NAG_EVERY=\"often\" is not valid: expected a whole number"
        );
        let e = resolve_with(
            Layer::default(),
            None,
            &[("WAYPOINT_PROVIDER", "gemini")],
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("expected anthropic, openai or scripted")
        );
    }

    #[test]
    fn the_wire_is_chosen_by_model_then_config_then_environment_then_flag() {
        let openai = |model: &str| Layer {
            provider: Some(ProviderKind::Openai),
            model: Some(model.into()),
            ..Layer::default()
        };
        let s = resolve_with(openai("gpt-5-codex"), None, &[], None).unwrap();
        assert_eq!(s.wire.value, WireKind::Auto);
        assert_eq!(s.wire.value.for_model(&s.model.value), WireKind::Responses);
        assert!(
            s.describe(None)
                .contains("wire = \"auto\"  # responses for this model")
        );
        let s = resolve_with(openai("gpt-4.1"), None, &[], None).unwrap();
        assert_eq!(s.wire.value.for_model(&s.model.value), WireKind::Chat);
        let file = "provider = \"openai\"\nwire = \"responses\"\n";
        let s = resolve_with(openai("gpt-4.1"), None, &[], Some(file)).unwrap();
        assert_eq!(s.wire.value.for_model("gpt-4.1"), WireKind::Responses);
        let s = resolve_with(
            openai("gpt-5-codex"),
            None,
            &[("WAYPOINT_WIRE", "chat")],
            Some(file),
        )
        .unwrap();
        assert_eq!(s.wire.value.for_model("gpt-5-codex"), WireKind::Chat);
        assert_eq!(s.wire.source, Source::Env("WAYPOINT_WIRE".into()));
        let err = resolve_with(openai("m"), None, &[("WAYPOINT_WIRE", "grpc")], None).unwrap_err();
        assert!(
            err.to_string().contains("expected auto, chat or responses"),
            "{err}"
        );
        let s = resolve_with(
            openai("moondream"),
            None,
            &[("WAYPOINT_IMAGES", "on")],
            None,
        )
        .unwrap();
        assert_eq!(s.images.value, Some(true));
        let file = "provider = \"openai\"\nimages = false\n";
        let s = resolve_with(openai("gpt-4.1"), None, &[], Some(file)).unwrap();
        assert_eq!(s.images.value, Some(false));
        assert!(s.describe(None).contains("images = false"));
        let err = resolve_with(openai("m"), None, &[("WAYPOINT_IMAGES", "maybe")], None);
        assert!(err.is_err());
        let file = "provider = \"openai\"\nwire = \"responses\"\n";
        let flagged = Layer {
            wire: Some(WireKind::Chat),
            ..openai("o3-pro")
        };
        let s = resolve_with(flagged, None, &[], Some(file)).unwrap();
        assert_eq!(s.wire.source, Source::Flag("--wire"));
    }

    #[test]
    fn a_key_or_url_for_one_provider_never_goes_to_another() {
        let file = "api_key = \"sk-ant-api03-0123456789abcdef\"\nmodel = \"claude-opus-4-1\"\n[profile.local]\nprovider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n";
        let flags = Layer {
            provider: Some(ProviderKind::Openai),
            base_url: Some("https://elsewhere.example/v1".into()),
            ..Layer::default()
        };
        let s = resolve_with(flags, None, &[], Some(file)).unwrap();
        assert_eq!(
            s.api_key, None,
            "the file's Anthropic key is not sent to an OpenAI endpoint"
        );
        assert_eq!(s.model.value, DEFAULT_OPENAI_MODEL);
        let s = resolve_with(Layer::default(), Some("local"), &[], Some(file)).unwrap();
        assert_eq!(
            (s.api_key, s.base_url.value.as_str()),
            (None, "http://localhost:11434/v1")
        );
        let s = resolve_with(Layer::default(), None, &[], Some(file)).unwrap();
        assert_eq!(
            s.api_key.unwrap().source,
            Source::File("/cfg/config.toml".into())
        );
    }

    #[test]
    fn a_parse_error_never_echoes_the_line() {
        let e = resolve_with(
            Layer::default(),
            None,
            &[],
            Some("model = \"x\"\napi_key = sk-ant-secret-value\n"),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("line 2"), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn a_config_file_named_by_the_environment_must_exist() {
        let env = env_of(&[("WAYPOINT_CONFIG", "/nonexistent/waypoint.toml")]);
        let e = load(&env).unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent/waypoint.toml")
                && e.to_string().contains("WAYPOINT_CONFIG")
        );
    }

    #[test]
    fn no_color_and_masked_keys_in_the_description() {
        let s = resolve_with(
            Layer::default(),
            None,
            &[
                ("NO_COLOR", "1"),
                ("ANTHROPIC_API_KEY", "sk-ant-api03-secretsecret-WXYZ"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(s.theme.value, Theme::NoColor);
        let text = s.describe(Some(Path::new("/cfg/config.toml")));
        assert!(text.contains("(not found; defaults apply)"));
        assert!(text.contains("api_key = \"sk-a…WXYZ\""), "{text}");
        assert!(!text.contains("secret"));
        assert!(text.contains("# env NO_COLOR"));
        assert_eq!(mask("short"), "…");
        assert_eq!(mask("sk-123456789abc"), "…", "short keys are hidden whole");
        assert_eq!(mask(""), "");
    }

    #[test]
    fn command_rules_come_from_the_file_and_the_profile_adds_its_own() {
        let file = r#"
allow = ["cargo test", "  "]
deny = ["rm -rf", "git push"]

[profile.strict]
deny = ["curl"]
"#;
        let s = resolve_with(Layer::default(), None, &[], Some(file)).unwrap();
        assert_eq!(s.rules.allow, ["cargo test"]);
        assert_eq!(s.rules.deny, ["rm -rf", "git push"]);
        let s = resolve_with(Layer::default(), Some("strict"), &[], Some(file)).unwrap();
        assert_eq!(s.rules.deny, ["rm -rf", "git push", "curl"]);
        assert!(
            s.describe(None)
                .contains(r#"deny = ["rm -rf", "git push", "curl"]"#)
        );
        let bad = resolve_with(Layer::default(), None, &[], Some("deny = \"rm\"")).unwrap_err();
        assert!(bad.to_string().contains("expected a sequence"), "{bad}");
    }

    #[test]
    fn the_whole_description_is_pinned() {
        let file = r#"
model = "claude-opus-4-1"
nag_every = 5
plan_file = "PLAN.md"
approval = "auto-edit"
allow = ["cargo test"]
deny = ["rm -rf"]
web_allow = ["localhost"]
notify_after = 5

[mcp_servers.docs]
url = "http://127.0.0.1:9/mcp"
headers = { Authorization = "Bearer secret-token" }

[profile.slow]
bash_timeout = 300
thinking_budget = 2048
"#;
        let env = [
            ("ANTHROPIC_API_KEY", "sk-ant-api03-secretsecret-WXYZ"),
            ("WAYPOINT_MAX_TURNS", "7"),
        ];
        let flags = Layer {
            compact_at: Some(0.5),
            context_window: Some(64_000),
            ..Layer::default()
        };
        let s = resolve_with(flags, Some("slow"), &env, Some(file)).unwrap();
        let text = s.describe(Some(Path::new("/cfg/config.toml")));
        assert!(
            !text.contains("secret-token"),
            "a table value was shown: {text}"
        );
        assert_eq!(
            text,
            r##"# config file: /cfg/config.toml
# profile: slow (profiles in the file: slow)
provider = "anthropic"                       # default
model = "claude-opus-4-1"                    # file /cfg/config.toml
base_url = "https://api.anthropic.com"       # default
api_key = "sk-a…WXYZ"                        # env ANTHROPIC_API_KEY
# images: by the model's name
wire = "auto"  # the openai provider's only  # default
max_tokens = 8192                            # default
max_turns = 7                                # env WAYPOINT_MAX_TURNS
nag_every = 5                                # file /cfg/config.toml
nag_max = 2                                  # default
bash_timeout = 300                           # profile slow
auto_background_after = 0  # off             # default
context_window = 64000                       # flag --context-window
compact_at = 0.5                             # flag --compact-at
output_cap = 30000                           # default
max_retries = 5                              # default
stream_idle_timeout = 60                     # default
thinking_budget = 2048                       # profile slow
theme = "auto"                               # default
approval = "auto-edit"                       # file /cfg/config.toml
plan_changes = "tell"                        # default
plan_tool = true                             # default
plan_file = "PLAN.md"                        # file /cfg/config.toml
mcp_tool_share = 0.1                         # default
notify = "unfocused"                         # default
notify_method = "auto"                       # default
notify_after = 5                             # file /cfg/config.toml
acp_terminal = "waypoint"                    # default
allow = ["cargo test"]                       # config file
deny = ["rm -rf"]                            # config file
# sandbox: not set
# prices: not set
# mcp_servers: set in the config file (docs)
# task: not set
# hooks: not set
# hooks_from_claude: not set
web_allow = ["localhost"]                    # config file
"##
        );
        let s = resolve_with(Layer::default(), None, &[], None).unwrap();
        assert_eq!(
            s.describe(None),
            r##"# config file: none (no config folder on this platform)
# profile: none (profiles in the file: none)
provider = "anthropic"                       # default
model = "claude-sonnet-4-5"                  # default
base_url = "https://api.anthropic.com"       # default
# api_key: not set
# images: by the model's name
wire = "auto"  # the openai provider's only  # default
max_tokens = 8192                            # default
max_turns = 100                              # default
nag_every = 3                                # default
nag_max = 2                                  # default
bash_timeout = 120                           # default
auto_background_after = 0  # off             # default
context_window = 0  # the model's window     # default
compact_at = 0.8                             # default
output_cap = 30000                           # default
max_retries = 5                              # default
stream_idle_timeout = 60                     # default
thinking_budget = 0                          # default
theme = "auto"                               # default
approval = "ask" in the app, "auto" headless # default
plan_changes = "tell"                        # default
plan_tool = true                             # default
mcp_tool_share = 0.1                         # default
notify = "unfocused"                         # default
notify_method = "auto"                       # default
notify_after = 60                            # default
acp_terminal = "waypoint"                    # default
# plan_file: not set
# sandbox: not set
# prices: not set
# mcp_servers: not set
# task: not set
# hooks: not set
# hooks_from_claude: not set
# web_allow: not set
# allow: not set
# deny: not set
"##
        );
    }

    #[test]
    fn the_theme_flag_beats_no_color_which_beats_the_file() {
        let file = Some("theme = \"auto\"\n");
        let no_color = [("NO_COLOR", "1")];
        let s = resolve_with(Layer::default(), None, &no_color, file).unwrap();
        assert_eq!(s.theme.value, Theme::NoColor);
        assert_eq!(s.theme.source, Source::Env("NO_COLOR".into()));
        let flags = Layer {
            theme: Some(Theme::Auto),
            ..Layer::default()
        };
        let s = resolve_with(flags, None, &no_color, file).unwrap();
        assert_eq!(s.theme.source, Source::Flag("--theme"));
        // An empty NO_COLOR is not set (no-color.org); the file then counts.
        let file = Some("theme = \"no-color\"\n");
        let s = resolve_with(Layer::default(), None, &[("NO_COLOR", "")], file).unwrap();
        assert_eq!(s.theme.value, Theme::NoColor);
        assert_eq!(
            s.theme.source,
            Source::File(PathBuf::from("/cfg/config.toml"))
        );
    }
}
