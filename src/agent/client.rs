//! Where the engine's model clients come from: a [`ClientFactory`] the
//! engine owns, asked again when the settings are reloaded or the model is
//! switched. Invariant: a failed build changes nothing; the engine keeps the
//! client it has.

use std::sync::Arc;

use crate::llm::{LlmError, ModelClient};

/// Which model to build a client for; `None` means what the settings say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelChoice {
    pub provider: Option<String>,
    pub model: Option<String>,
}

/// Builds model clients for the engine.
pub trait ClientFactory: Send + Sync {
    /// A client for `choice`; with `reload`, the settings (the config file
    /// too) are read again first.
    fn build(&self, choice: &ModelChoice, reload: bool) -> Result<Arc<dyn ModelClient>, LlmError>;
}

/// A factory that only ever has one client (tests, benchmarks): reloading
/// gives it back, switching to another model is refused.
pub struct FixedClient(pub Arc<dyn ModelClient>);

impl ClientFactory for FixedClient {
    fn build(&self, choice: &ModelChoice, _reload: bool) -> Result<Arc<dyn ModelClient>, LlmError> {
        let same_provider = choice
            .provider
            .as_deref()
            .is_none_or(|p| p == self.0.provider());
        let same_model = choice.model.as_deref().is_none_or(|m| m == self.0.model());
        if same_provider && same_model {
            return Ok(self.0.clone());
        }
        Err(LlmError::Config(format!(
            "this engine runs with one fixed model client ({} {}); it cannot switch to {}{}",
            self.0.provider(),
            self.0.model(),
            choice
                .provider
                .as_deref()
                .map(|p| format!("{p} "))
                .unwrap_or_default(),
            choice.model.as_deref().unwrap_or(self.0.model()),
        )))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::llm::scripted::{Scenario, ScriptedClient};

    #[test]
    fn a_fixed_client_reloads_itself_and_refuses_another_model() {
        let client: Arc<dyn ModelClient> = Arc::new(ScriptedClient::new(
            Scenario::parse(r#"{"turns": []}"#).unwrap(),
        ));
        let f = FixedClient(client.clone());
        let again = f.build(&ModelChoice::default(), true).unwrap();
        assert!(Arc::ptr_eq(&again, &client));
        let other = ModelChoice {
            provider: None,
            model: Some("gpt-x".into()),
        };
        let err = f.build(&other, false).err().unwrap();
        assert!(matches!(err, LlmError::Config(_)));
        assert!(err.to_string().contains("cannot switch to gpt-x"), "{err}");
    }
}
