//! The provider in use and where its requests go. Invariant: a model, URL
//! or key from the file or a profile counts only where that layer is for
//! the provider in use, so one provider's key never goes to another's
//! server.

use super::layers::{Layers, text};
use super::{
    ConfigError, DEFAULT_ANTHROPIC_MODEL, DEFAULT_ANTHROPIC_URL, DEFAULT_OPENAI_MODEL,
    DEFAULT_OPENAI_URL, ProviderKind, Sourced, WireKind,
};

/// The provider in use and where its requests go: model, URL and key.
pub(super) struct Connection {
    pub(super) provider: Sourced<ProviderKind>,
    pub(super) model: Sourced<String>,
    pub(super) base_url: Sourced<String>,
    pub(super) api_key: Option<Sourced<String>>,
    pub(super) wire: Sourced<WireKind>,
    pub(super) images: Sourced<Option<bool>>,
}

/// The provider, then its model, URL and key. Those three from the file or
/// a profile count only where that layer is for the provider in use (a
/// layer without `provider` is for the default, anthropic), so one
/// provider's key never goes to another's server.
pub(super) fn connection(layers: Layers<'_>) -> Result<Connection, ConfigError> {
    let provider = layers.pick(
        "--provider",
        |l| l.provider,
        "provider",
        |s| ProviderKind::parse(s).ok_or_else(|| "expected anthropic, openai or scripted".into()),
        ProviderKind::Anthropic,
    )?;
    let (prefix, default_model, default_url) = match provider.value {
        ProviderKind::Openai => ("OPENAI", DEFAULT_OPENAI_MODEL, DEFAULT_OPENAI_URL),
        ProviderKind::Anthropic | ProviderKind::Scripted => {
            ("ANTHROPIC", DEFAULT_ANTHROPIC_MODEL, DEFAULT_ANTHROPIC_URL)
        }
    };
    let top_provider = layers
        .file
        .and_then(|(_, l)| l.provider)
        .unwrap_or(ProviderKind::Anthropic);
    let conn = Layers {
        profile: layers
            .profile
            .filter(|(_, l)| l.provider.unwrap_or(top_provider) == provider.value),
        file: layers.file.filter(|_| top_provider == provider.value),
        prefix,
        ..layers
    };
    let model = conn.pick(
        "--model",
        |l| l.model.clone(),
        "model",
        text,
        default_model.into(),
    )?;
    let base_url = conn.pick(
        "--base-url",
        |l| l.base_url.clone(),
        "base_url",
        text,
        default_url.into(),
    )?;
    let api_key = conn.pick("", |l| l.api_key.clone(), "api_key", text, String::new())?;
    let wire = conn.pick(
        "--wire",
        |l| l.wire,
        "wire",
        |s| WireKind::parse(s).ok_or_else(|| "expected auto, chat or responses".into()),
        WireKind::Auto,
    )?;
    let images = conn.pick(
        "",
        |l| l.images.map(Some),
        "images",
        |s| match s.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Some(true)),
            "0" | "false" | "no" | "off" => Ok(Some(false)),
            _ => Err("expected true or false".into()),
        },
        None,
    )?;
    Ok(Connection {
        provider,
        model,
        base_url,
        wire,
        images,
        api_key: (!api_key.value.is_empty()).then_some(api_key),
    })
}
