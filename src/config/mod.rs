//! Settings: built-in defaults, overridden by the TOML config file (and a
//! named profile in it), overridden by environment variables, overridden by
//! flags. Invariant: every resolved value remembers where it came from, so
//! `waypoint config` can show it; keys are only ever printed masked.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::events::ApprovalMode;
use crate::pricing::Price;
use crate::safety::Rules;

/// One layer of optional settings: the file, a profile, or the flags.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub max_tokens: Option<u32>,
    pub max_turns: Option<u32>,
    pub nag_every: Option<u32>,
    /// Nags in a row without a plan update before they stop; 0 = no limit.
    pub nag_max: Option<u32>,
    pub bash_timeout: Option<u64>,
    pub output_cap: Option<usize>,
    /// The context window in tokens; 0 = the model's (or 128k).
    pub context_window: Option<u64>,
    /// The share of the window past which the conversation is compacted.
    pub compact_at: Option<f64>,
    pub max_retries: Option<u32>,
    pub stream_idle_timeout: Option<u64>,
    /// Extended thinking's token budget (Anthropic); 0 = off.
    pub thinking_budget: Option<u32>,
    pub theme: Option<Theme>,
    /// What tool calls may do without asking.
    pub approval: Option<ApprovalMode>,
    /// A Markdown copy of the live plan in the workspace.
    pub plan_file: Option<String>,
    /// `[sandbox]`: where sandboxed commands may also write, and the network.
    pub sandbox: Option<SandboxLayer>,
    /// Named profiles (only at the top level of the file).
    #[serde(default)]
    pub profile: BTreeMap<String, Layer>,
    /// Prices per model, USD per million tokens (only at the top level).
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// Shell commands allowed without asking (matched on parsed words).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Shell commands never run, whatever the mode. A profile's rules add
    /// to the top level's.
    #[serde(default)]
    pub deny: Vec<String>,
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
        "profile `{0}` may not contain `profile` or `prices` tables; put them at the top level"
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
    pub max_tokens: Sourced<u32>,
    pub max_turns: Sourced<u32>,
    pub nag_every: Sourced<u32>,
    pub nag_max: Sourced<u32>,
    pub bash_timeout: Sourced<u64>,
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
    /// Extra writable folders of the sandbox (home expanded).
    pub sandbox_writable: Vec<PathBuf>,
    pub sandbox_network: bool,
    pub profile: Option<String>,
    /// The file that was read, if it exists, and its profiles.
    pub file: Option<PathBuf>,
    pub profiles: Vec<String>,
    pub prices: BTreeMap<String, Price>,
    /// The `allow` and `deny` rules for shell commands (the file's and the
    /// profile's together).
    pub rules: Rules,
}

pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_ANTHROPIC_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_URL: &str = "https://api.openai.com/v1";

/// Where the config file is: `WAYPOINT_CONFIG`, else the platform's config folder.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("WAYPOINT_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "waypoint").map(|d| d.config_dir().join("config.toml"))
}

/// Reads the config file; a missing file is not an error.
pub fn read_file(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// A config file's path and its text.
pub type ConfigFile = (PathBuf, String);

/// Finds and reads the config file: `(where it is looked for, its path and text
/// if it exists)`. A file named by `WAYPOINT_CONFIG` must exist.
pub fn load(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<PathBuf>, Option<ConfigFile>), ConfigError> {
    let path = config_path(env);
    let Some(path) = path else {
        return Ok((None, None));
    };
    match read_file(&path)? {
        Some(text) => Ok((Some(path.clone()), Some((path, text)))),
        None if env("WAYPOINT_CONFIG").is_some_and(|p| !p.is_empty()) => Err(ConfigError::Read {
            path,
            message: "no such file (named by WAYPOINT_CONFIG)".into(),
        }),
        None => Ok((Some(path), None)),
    }
}

/// What the resolver reads; `env` is a lookup so tests need not touch the process environment.
pub struct Inputs<'a> {
    pub flags: Layer,
    pub profile: Option<String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The file's path and its text, when it exists.
    pub file: Option<ConfigFile>,
}

#[derive(Clone, Copy)]
struct Layers<'a> {
    flags: &'a Layer,
    env: &'a dyn Fn(&str) -> Option<String>,
    profile: Option<(&'a str, &'a Layer)>,
    file: Option<(&'a Path, &'a Layer)>,
}

impl Layers<'_> {
    /// The first layer that sets the value: flag, env vars (in order), profile, file, default.
    fn pick<T: Clone>(
        &self,
        flag: &'static str,
        get: impl Fn(&Layer) -> Option<T>,
        env_vars: &[&str],
        parse: impl Fn(&str) -> Result<T, String>,
        default: T,
    ) -> Result<Sourced<T>, ConfigError> {
        if let Some(v) = get(self.flags) {
            return Ok(Sourced {
                value: v,
                source: Source::Flag(flag),
            });
        }
        for var in env_vars {
            if let Some(raw) = (self.env)(var).filter(|v| !v.trim().is_empty()) {
                let value = parse(raw.trim()).map_err(|message| ConfigError::Env {
                    var: var.to_string(),
                    value: raw.clone(),
                    message,
                })?;
                return Ok(Sourced {
                    value,
                    source: Source::Env(var.to_string()),
                });
            }
        }
        if let Some((name, layer)) = self.profile
            && let Some(v) = get(layer)
        {
            return Ok(Sourced {
                value: v,
                source: Source::Profile(name.to_string()),
            });
        }
        if let Some((path, layer)) = self.file
            && let Some(v) = get(layer)
        {
            return Ok(Sourced {
                value: v,
                source: Source::File(path.to_path_buf()),
            });
        }
        Ok(Sourced {
            value: default,
            source: Source::Default,
        })
    }
}

fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| "expected a whole number".to_string())
}

const SHARE: &str = "expected a number above 0 and at most 1";

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(SHARE.to_string()),
    }
}

fn text(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

pub fn resolve(inputs: Inputs<'_>) -> Result<Settings, ConfigError> {
    let file_layer = match &inputs.file {
        Some((path, text)) => Some((
            path.as_path(),
            toml::from_str::<Layer>(text).map_err(|e| ConfigError::Parse {
                path: path.clone(),
                message: parse_message(text, &e),
            })?,
        )),
        None => None,
    };
    let profiles: Vec<String> = file_layer
        .as_ref()
        .map(|(_, l)| l.profile.keys().cloned().collect())
        .unwrap_or_default();
    let profile_name = inputs
        .profile
        .clone()
        .or_else(|| (inputs.env)("WAYPOINT_PROFILE").filter(|p| !p.is_empty()));
    let profile = match &profile_name {
        Some(name) => {
            if file_layer.is_none() {
                return Err(ConfigError::NoConfigForProfile {
                    name: name.clone(),
                    looked_at: config_path(inputs.env),
                });
            }
            let layer = file_layer
                .as_ref()
                .and_then(|(_, l)| l.profile.get(name))
                .ok_or_else(|| ConfigError::NoProfile {
                    name: name.clone(),
                    available: profiles.clone(),
                })?;
            if !layer.profile.is_empty() || !layer.prices.is_empty() {
                return Err(ConfigError::NestedProfile(name.clone()));
            }
            Some((name.as_str(), layer))
        }
        None => None,
    };
    let safety::Safety {
        rules,
        sandbox_writable,
        sandbox_network,
    } = safety::resolve(file_layer.as_ref().map(|(_, l)| l), profile, inputs.env);
    let layers = Layers {
        flags: &inputs.flags,
        env: inputs.env,
        profile,
        file: file_layer.as_ref().map(|(p, l)| (*p, l)),
    };
    let provider = layers.pick(
        "--provider",
        |l| l.provider,
        &["WAYPOINT_PROVIDER"],
        |s| ProviderKind::parse(s).ok_or_else(|| "expected anthropic, openai or scripted".into()),
        ProviderKind::Anthropic,
    )?;
    let (prefix, default_model, default_url) = match provider.value {
        ProviderKind::Openai => ("OPENAI", DEFAULT_OPENAI_MODEL, DEFAULT_OPENAI_URL),
        ProviderKind::Anthropic | ProviderKind::Scripted => {
            ("ANTHROPIC", DEFAULT_ANTHROPIC_MODEL, DEFAULT_ANTHROPIC_URL)
        }
    };
    // Model, URL and key from the file or a profile count only where that layer
    // is for the provider in use (a layer without `provider` is for the default,
    // anthropic), so one provider's key never goes to another's server.
    let top_provider = file_layer
        .as_ref()
        .and_then(|(_, l)| l.provider)
        .unwrap_or(ProviderKind::Anthropic);
    let conn = Layers {
        profile: layers
            .profile
            .filter(|(_, l)| l.provider.unwrap_or(top_provider) == provider.value),
        file: layers.file.filter(|_| top_provider == provider.value),
        ..layers
    };
    let model_var = format!("{prefix}_MODEL");
    let url_var = format!("{prefix}_BASE_URL");
    let key_var = format!("{prefix}_API_KEY");
    let model = conn.pick(
        "--model",
        |l| l.model.clone(),
        &["WAYPOINT_MODEL", &model_var],
        text,
        default_model.into(),
    )?;
    let base_url = conn.pick(
        "--base-url",
        |l| l.base_url.clone(),
        &[&url_var],
        text,
        default_url.into(),
    )?;
    let api_key = conn.pick("", |l| l.api_key.clone(), &[&key_var], text, String::new())?;
    let api_key = (!api_key.value.is_empty()).then_some(api_key);
    let theme = match (
        inputs.flags.theme,
        (inputs.env)("NO_COLOR").filter(|v| !v.is_empty()),
    ) {
        (Some(t), _) => Sourced {
            value: t,
            source: Source::Flag("--theme"),
        },
        (None, Some(_)) => Sourced {
            value: Theme::NoColor,
            source: Source::Env("NO_COLOR".into()),
        },
        (None, None) => layers.pick(
            "--theme",
            |l| l.theme,
            &[],
            |_| Err(String::new()),
            Theme::Auto,
        )?,
    };
    let settings = Settings {
        max_tokens: layers.pick(
            "--max-tokens",
            |l| l.max_tokens,
            &["WAYPOINT_MAX_TOKENS"],
            number,
            8192,
        )?,
        max_turns: layers.pick(
            "--max-turns",
            |l| l.max_turns,
            &["WAYPOINT_MAX_TURNS"],
            number,
            100,
        )?,
        nag_every: layers.pick(
            "--nag-every",
            |l| l.nag_every,
            &["WAYPOINT_NAG_EVERY"],
            number,
            3,
        )?,
        nag_max: layers.pick("--nag-max", |l| l.nag_max, &["WAYPOINT_NAG_MAX"], number, 2)?,
        bash_timeout: layers.pick(
            "--bash-timeout",
            |l| l.bash_timeout,
            &["WAYPOINT_BASH_TIMEOUT"],
            number,
            120,
        )?,
        output_cap: layers.pick(
            "--output-cap",
            |l| l.output_cap,
            &["WAYPOINT_OUTPUT_CAP"],
            number,
            30_000,
        )?,
        context_window: layers.pick(
            "--context-window",
            |l| l.context_window,
            &["WAYPOINT_CONTEXT_WINDOW"],
            number,
            0,
        )?,
        compact_at: layers.pick(
            "--compact-at",
            |l| l.compact_at,
            &["WAYPOINT_COMPACT_AT"],
            share,
            0.8,
        )?,
        max_retries: layers.pick(
            "--max-retries",
            |l| l.max_retries,
            &["WAYPOINT_MAX_RETRIES"],
            number,
            5,
        )?,
        stream_idle_timeout: layers.pick(
            "--stream-idle-timeout",
            |l| l.stream_idle_timeout,
            &["WAYPOINT_STREAM_IDLE_TIMEOUT"],
            number,
            60,
        )?,
        thinking_budget: layers.pick(
            "--thinking-budget",
            |l| l.thinking_budget,
            &["WAYPOINT_THINKING_BUDGET"],
            number,
            0,
        )?,
        approval: layers.pick(
            "--approval",
            |l| l.approval.map(Some),
            &["WAYPOINT_APPROVAL"],
            |s| {
                ApprovalMode::parse(s)
                    .map(Some)
                    .ok_or_else(|| "expected read-only, ask, auto-edit, auto or yolo".to_string())
            },
            None,
        )?,
        plan_file: layers.pick(
            "--plan-file",
            |l| l.plan_file.clone().map(Some),
            &["WAYPOINT_PLAN_FILE"],
            |s| text(s).map(Some),
            None,
        )?,
        sandbox_writable,
        sandbox_network,
        provider,
        model,
        base_url,
        api_key,
        theme,
        profile: profile_name,
        file: inputs.file.as_ref().map(|(p, _)| p.clone()),
        profiles,
        rules,
        prices: file_layer.map(|(_, l)| l.prices).unwrap_or_default(),
    };
    // A share from any layer is checked (the environment's already was):
    // NaN, 0 or more than 1 would compact at every round or never.
    let at = &settings.compact_at;
    if !(at.value > 0.0 && at.value <= 1.0) {
        return Err(ConfigError::Value {
            name: "compact_at",
            value: at.value.to_string(),
            from: at.source.clone(),
            message: SHARE.into(),
        });
    }
    Ok(settings)
}

/// The parser's message and the line and column, but never the line itself:
/// it may hold a key.
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {col}: {message}")
        }
        None => message.to_string(),
    }
}

mod describe;
mod kinds;
mod safety;

pub use kinds::{ProviderKind, Theme};

pub use safety::SandboxLayer;

pub use describe::mask;

#[cfg(test)]
mod tests {
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
        assert_eq!(
            text,
            r##"# config file: /cfg/config.toml
# profile: slow (profiles in the file: slow)
provider = "anthropic"                       # default
model = "claude-opus-4-1"                    # file /cfg/config.toml
base_url = "https://api.anthropic.com"       # default
api_key = "sk-a…WXYZ"                        # env ANTHROPIC_API_KEY
max_tokens = 8192                            # default
max_turns = 7                                # env WAYPOINT_MAX_TURNS
nag_every = 5                                # file /cfg/config.toml
nag_max = 2                                  # default
bash_timeout = 300                           # profile slow
context_window = 64000                       # flag --context-window
compact_at = 0.5                             # flag --compact-at
output_cap = 30000                           # default
max_retries = 5                              # default
stream_idle_timeout = 60                     # default
thinking_budget = 2048                       # profile slow
theme = "auto"                               # default
approval = "auto-edit"                       # file /cfg/config.toml
plan_file = "PLAN.md"                        # file /cfg/config.toml
allow = ["cargo test"]                       # config file
deny = ["rm -rf"]                            # config file
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
max_tokens = 8192                            # default
max_turns = 100                              # default
nag_every = 3                                # default
nag_max = 2                                  # default
bash_timeout = 120                           # default
context_window = 0  # the model's window     # default
compact_at = 0.8                             # default
output_cap = 30000                           # default
max_retries = 5                              # default
stream_idle_timeout = 60                     # default
thinking_budget = 0                          # default
theme = "auto"                               # default
approval = "ask" in the app, "auto" headless # default
"##
        );
    }
}
