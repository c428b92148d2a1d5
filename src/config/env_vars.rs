//! The environment variables each setting is read from, written once: the
//! resolver reads a key's variables from [`ENV_VARS`], and the reference
//! page (`docs/src/reference/config.md`) lists them from it, so the two
//! cannot disagree.

/// Stands for the provider in use's prefix (`ANTHROPIC`, `OPENAI`).
pub const PROVIDER: &str = "{PROVIDER}";

/// The prefixes `{PROVIDER}` takes, one per provider's own variables.
pub const PREFIXES: &[&str] = &["ANTHROPIC", "OPENAI"];

/// Each key of the config file read from the environment, and its
/// variables in the order they are tried (the first set one wins).
pub const ENV_VARS: &[(&str, &[&str])] = &[
    ("provider", &["WAYPOINT_PROVIDER"]),
    ("profile", &["WAYPOINT_PROFILE"]),
    ("model", &["WAYPOINT_MODEL", "{PROVIDER}_MODEL"]),
    ("base_url", &["{PROVIDER}_BASE_URL"]),
    ("api_key", &["{PROVIDER}_API_KEY"]),
    ("wire", &["WAYPOINT_WIRE"]),
    ("images", &["WAYPOINT_IMAGES"]),
    ("max_tokens", &["WAYPOINT_MAX_TOKENS"]),
    ("max_turns", &["WAYPOINT_MAX_TURNS"]),
    ("nag_every", &["WAYPOINT_NAG_EVERY"]),
    ("nag_max", &["WAYPOINT_NAG_MAX"]),
    ("plan_changes", &["WAYPOINT_PLAN_CHANGES"]),
    ("plan_tool", &["WAYPOINT_PLAN_TOOL"]),
    ("bash_timeout", &["WAYPOINT_BASH_TIMEOUT"]),
    ("auto_background_after", &["WAYPOINT_AUTO_BACKGROUND_AFTER"]),
    ("output_cap", &["WAYPOINT_OUTPUT_CAP"]),
    ("context_window", &["WAYPOINT_CONTEXT_WINDOW"]),
    ("compact_at", &["WAYPOINT_COMPACT_AT"]),
    ("max_retries", &["WAYPOINT_MAX_RETRIES"]),
    ("stream_idle_timeout", &["WAYPOINT_STREAM_IDLE_TIMEOUT"]),
    ("thinking_budget", &["WAYPOINT_THINKING_BUDGET"]),
    ("approval", &["WAYPOINT_APPROVAL"]),
    ("plan_file", &["WAYPOINT_PLAN_FILE"]),
    ("theme", &["NO_COLOR"]),
];

/// The variables of `key`, with `{PROVIDER}` made `prefix`; none for a key
/// not read from the environment.
pub fn env_vars(key: &str, prefix: &str) -> Vec<String> {
    ENV_VARS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, vars)| vars.iter().map(|v| v.replace(PROVIDER, prefix)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_variable_takes_the_provider_in_use() {
        assert_eq!(
            env_vars("model", "OPENAI"),
            ["WAYPOINT_MODEL", "OPENAI_MODEL"]
        );
        assert_eq!(env_vars("max_tokens", "X"), ["WAYPOINT_MAX_TOKENS"]);
        assert!(env_vars("allow", "X").is_empty());
    }

    /// Each key of the table is a key of the file.
    #[test]
    fn every_key_with_variables_is_a_key_of_the_file() {
        let schema = super::super::schema::schema();
        for (key, _) in ENV_VARS {
            assert!(schema["properties"].get(key).is_some(), "{key}");
        }
    }
}
