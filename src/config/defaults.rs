//! The settings' defaults, written once: what `resolve` takes when no
//! flag, variable, profile or file says otherwise, and what the engine's
//! and the tools' own `Default`s start from (a test or an embedder that
//! builds an engine without settings gets the same numbers). The
//! reference (`docs/src/reference/config.md`) shows them as `waypoint config` does.

/// Output tokens asked for per model request.
pub const MAX_TOKENS: u32 = 8192;
/// Model requests per turn before it is stopped.
pub const MAX_TURNS: u32 = 100;
/// Tool rounds without a plan update before the nag (0: never).
pub const NAG_EVERY: u32 = 3;
/// Nags in a row without a plan update before they stop (0: no limit).
pub const NAG_MAX: u32 = 2;
/// Bytes of a tool's output the model reads (head and tail kept).
pub const OUTPUT_CAP: usize = 30_000;
/// The share of the context window past which the conversation is
/// compacted.
pub const COMPACT_AT: f64 = 0.8;
/// Retries of a failed model request.
pub const MAX_RETRIES: u32 = 5;
/// Seconds a stream may stay silent before it is taken as cut.
pub const STREAM_IDLE_TIMEOUT: u64 = 60;
/// Seconds `bash` runs a command given no `timeout_secs`.
pub const BASH_TIMEOUT: u64 = 120;
