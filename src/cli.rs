//! Command-line flags and environment, resolved into what the engine needs.
//! Invariant: flags override environment variables, which override defaults.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::headless::OutputFormat;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProviderKind {
    /// Anthropic Messages API (streaming).
    Anthropic,
    /// Offline: plays a scenario file (see --scenario; --demo uses the bundled one).
    Scripted,
}

#[derive(Debug, Parser)]
#[command(name = "waypoint", version, about = "A terminal coding agent with a live plan", long_about = None)]
pub struct Cli {
    /// Run one task headless and print the work as it goes (the prompt may also come on stdin).
    #[arg(short = 'p', long = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = "")]
    pub print: Option<String>,

    /// The prompt, when not given with -p.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Project folder the agent works in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// How headless mode prints: readable text or the engine's events as JSON lines.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,

    /// Model requests allowed for one task before it stops.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_turns: u32,

    /// Model name.
    #[arg(long, env = "ANTHROPIC_MODEL", value_name = "M")]
    pub model: Option<String>,

    /// Model provider.
    #[arg(long, value_enum, default_value = "anthropic")]
    pub provider: ProviderKind,

    /// API base URL.
    #[arg(long, env = "ANTHROPIC_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,

    /// Run the bundled offline demo scenario (no key, no network) in a fresh temporary workspace.
    #[arg(long)]
    pub demo: bool,

    /// Play this scenario file instead of calling a model (implies --provider scripted).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,

    /// Tool rounds without a plan update before the agent is reminded (0 = never).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub nag_every: u32,

    /// Default timeout of a bash command, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub bash_timeout: u64,

    /// Largest tool output sent to the model, in bytes (head and tail are kept).
    #[arg(long, value_name = "BYTES", default_value_t = 30_000)]
    pub output_cap: usize,

    /// Maximum tokens of one model reply.
    #[arg(long, value_name = "N", default_value_t = 8192)]
    pub max_tokens: u32,

    /// Retries of a failed model request (rate limits, overload, broken streams).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_retries: u32,

    /// First retry delay in milliseconds (doubles each retry; a server's retry-after wins).
    #[arg(long, value_name = "MS", default_value_t = 500, hide = true)]
    pub retry_base_ms: u64,

    /// Seconds of silence inside a stream before it counts as broken.
    #[arg(long, value_name = "SECS", default_value_t = 90)]
    pub stream_idle_timeout: u64,
}

impl Cli {
    pub fn provider(&self) -> ProviderKind {
        if self.demo || self.scenario.is_some() {
            ProviderKind::Scripted
        } else {
            self.provider
        }
    }

    pub fn bash_timeout(&self) -> Duration {
        Duration::from_secs(self.bash_timeout.clamp(1, 600))
    }
}
