//! Models Waypoint knows by name: their provider and context window, for
//! `/model` and the context window (meter, compaction). Invariant: a model missing here
//! still works; only the facts shown about it are unknown.

/// A model listed by `/model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownModel {
    pub provider: &'static str,
    pub name: &'static str,
    /// Tokens the model reads at most (prompt and tools included).
    pub context_window: u64,
}

pub const KNOWN: &[KnownModel] = &[
    KnownModel {
        provider: "anthropic",
        name: "claude-sonnet-4-5",
        context_window: 200_000,
    },
    KnownModel {
        provider: "anthropic",
        name: "claude-opus-4-1",
        context_window: 200_000,
    },
    KnownModel {
        provider: "anthropic",
        name: "claude-haiku-4-5",
        context_window: 200_000,
    },
    KnownModel {
        provider: "anthropic",
        name: "claude-sonnet-4",
        context_window: 200_000,
    },
    KnownModel {
        provider: "openai",
        name: "gpt-4.1",
        context_window: 1_047_576,
    },
    KnownModel {
        provider: "openai",
        name: "gpt-4.1-mini",
        context_window: 1_047_576,
    },
    KnownModel {
        provider: "openai",
        name: "gpt-4o",
        context_window: 128_000,
    },
    KnownModel {
        provider: "openai",
        name: "gpt-4o-mini",
        context_window: 128_000,
    },
];

/// The known model called `name`, a dated name (`…-20250929`) included.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    KNOWN.iter().find(|m| {
        name == m.name
            || name
                .strip_prefix(m.name)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    })
}

/// `200k`, `1M`: a context window as people say it.
pub fn format_window(tokens: u64) -> String {
    if tokens >= 1_000_000 {
        format!("{}M", tokens / 1_000_000)
    } else {
        format!("{}k", tokens / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_names_are_the_model() {
        assert_eq!(
            known("claude-sonnet-4-5-20250929").map(|m| m.context_window),
            Some(200_000)
        );
        assert!(known("gpt-4.1-nano").is_none());
        assert_eq!(format_window(1_047_576), "1M");
        assert_eq!(format_window(128_000), "128k");
    }
}
