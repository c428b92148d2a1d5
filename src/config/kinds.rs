//! The settings that are a choice among a few kinds: the provider and the
//! colour theme. Invariant: each kind has one canonical lowercase name.

use serde::Deserialize;

#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages API (streaming).
    Anthropic,
    /// OpenAI-compatible Chat Completions: OpenAI, Ollama, llama.cpp, vLLM, LM Studio.
    Openai,
    /// Offline: plays a scenario file (see --scenario; --demo uses the bundled one).
    Scripted,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 3] = [
        ProviderKind::Anthropic,
        ProviderKind::Openai,
        ProviderKind::Scripted,
    ];

    /// The provider a name stands for (any case, spaces around ignored).
    pub fn parse(name: &str) -> Option<ProviderKind> {
        let wanted = name.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|k| k.as_str() == wanted)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::Scripted => "scripted",
        }
    }
}

#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    /// The terminal's own ANSI colours.
    Auto,
    /// No colours: symbols and bold/reverse only.
    NoColor,
}

/// The wire format of the `openai` provider.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WireKind {
    /// By the model: Responses for the codex and pro lines, else Chat Completions.
    Auto,
    /// Chat Completions (`/chat/completions`): OpenAI and every compatible server.
    Chat,
    /// OpenAI's Responses API (`/responses`), stateless with encrypted reasoning.
    Responses,
}

impl WireKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WireKind::Auto => "auto",
            WireKind::Chat => "chat",
            WireKind::Responses => "responses",
        }
    }

    pub fn parse(name: &str) -> Option<WireKind> {
        let wanted = name.trim().to_ascii_lowercase();
        [WireKind::Auto, WireKind::Chat, WireKind::Responses]
            .into_iter()
            .find(|k| k.as_str() == wanted)
    }

    /// The wire `model` is spoken to on: `Auto` decided by its name.
    pub fn for_model(self, model: &str) -> WireKind {
        match self {
            WireKind::Auto if crate::models::prefers_responses(model) => WireKind::Responses,
            WireKind::Auto => WireKind::Chat,
            chosen => chosen,
        }
    }
}

/// What the model's changes to an approved plan need (plan mode's
/// agreement): adding, dropping or rewording items.
#[derive(
    schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum PlanChanges {
    /// The user signs each change off first (headless: refused).
    Ask,
    /// Made, and shown as a change to the agreement.
    #[default]
    Tell,
    /// Made like any plan revision.
    Free,
}

impl PlanChanges {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanChanges::Ask => "ask",
            PlanChanges::Tell => "tell",
            PlanChanges::Free => "free",
        }
    }

    pub fn parse(name: &str) -> Option<PlanChanges> {
        let wanted = name.trim().to_ascii_lowercase();
        [PlanChanges::Ask, PlanChanges::Tell, PlanChanges::Free]
            .into_iter()
            .find(|k| k.as_str() == wanted)
    }
}

/// Where `waypoint acp` runs a `bash` command that does not run in the
/// sandbox (one the user approved, or any in yolo mode).
#[derive(schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcpTerminal {
    /// Waypoint's own contained runner, its output shown in the tool call.
    #[default]
    Waypoint,
    /// A terminal of the editor's (when the client offers terminals), shown live there.
    Editor,
}
