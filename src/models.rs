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
        name: "gpt-5-codex",
        context_window: 400_000,
    },
    KnownModel {
        provider: "openai",
        name: "gpt-5",
        context_window: 400_000,
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

/// The model's name without a gateway's `vendor/` before it, lowercased.
fn bare(name: &str) -> String {
    name.rsplit('/')
        .next()
        .unwrap_or(name)
        .trim()
        .to_ascii_lowercase()
}

/// Models that answer only on OpenAI's Responses API: the codex and pro
/// lines (`gpt-5-codex`, `gpt-5.1-codex-max`, `o3-pro`, `gpt-5-pro`).
/// `pro` counts only in OpenAI's own names (o-series, `gpt-*`): other
/// makers' pro models (`gemini-3-pro-preview`, `deepseek-v4-pro`) are
/// served on Chat Completions by every gateway.
pub fn prefers_responses(name: &str) -> bool {
    let name = bare(name);
    let openai = o_series(&name) || name.starts_with("gpt-");
    name.contains("codex") || (openai && name.split(['-', '_']).any(|w| w == "pro"))
}

/// `o1`, `o3-pro`, `o4-mini`: an `o` and a digit.
fn o_series(bare: &str) -> bool {
    bare.starts_with('o') && bare[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// OpenAI's reasoning models (o-series, gpt-5 and later, codex): on the
/// Responses wire they are asked for reasoning summaries and their
/// encrypted reasoning; others refuse the `reasoning` parameter.
pub fn reasons(name: &str) -> bool {
    let name = bare(name);
    let o_series = o_series(&name);
    let gpt_major = name
        .strip_prefix("gpt-")
        .and_then(|rest| rest.split(['.', '-']).next())
        .and_then(|major| major.parse::<u32>().ok())
        .is_some_and(|major| major >= 5);
    o_series || gpt_major || name.contains("codex")
}

/// Whether `model` of `provider` takes images: every Claude model; on the
/// OpenAI wires the vision lines (gpt-4o, gpt-4.1, gpt-5, o1/o3/o4,
/// codex) and open models named for it (`llava`, `*-vl`, `*vision*`,
/// `gemma3`, `pixtral`, `minicpm-v`, `qwen2.5vl`, `llama4`); the scripted
/// demo too. Other names (most local coding models) do not.
pub fn takes_images(provider: &str, model: &str) -> bool {
    let name = bare(model);
    match provider {
        "anthropic" | "scripted" => true,
        _ => {
            let lines = ["gpt-4o", "gpt-4.1", "chatgpt-4o", "gpt-4-turbo"];
            let marks = [
                "vision",
                "llava",
                "-vl",
                "vl-",
                "pixtral",
                "gemma3",
                "gemma-3",
                "minicpm-v",
                "qwen2.5vl",
                "llama4",
                "llama-4",
                "claude",
                "gemini",
            ];
            reasons(&name)
                || lines.iter().any(|l| name.starts_with(l))
                || marks.iter().any(|m| name.contains(m))
        }
    }
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

    #[test]
    fn vision_models_take_images() {
        for (provider, name) in [
            ("anthropic", "claude-sonnet-4-5"),
            ("openai", "gpt-4o-mini"),
            ("openai", "gpt-5-codex"),
            ("openai", "o4-mini"),
            ("openai", "qwen2.5vl:7b"),
            ("openai", "llava:13b"),
            ("openai", "meta-llama/llama-3.2-11b-vision-instruct"),
            ("openai", "openrouter/google/gemini-2.5-pro"),
        ] {
            assert!(takes_images(provider, name), "{name}");
        }
        for name in [
            "qwen2.5-coder:7b",
            "deepseek-reasoner",
            "gpt-3.5-turbo",
            "local",
        ] {
            assert!(!takes_images("openai", name), "{name}");
        }
    }

    #[test]
    fn codex_and_pro_models_take_the_responses_wire() {
        for name in [
            "gpt-5-codex",
            "gpt-5.1-codex-max",
            "o3-pro",
            "gpt-5-pro",
            "openai/codex-mini-latest",
        ] {
            assert!(prefers_responses(name), "{name}");
        }
        for name in [
            "gpt-4.1",
            "gpt-5",
            "o4-mini",
            "qwen2.5-coder",
            "deepseek-reasoner",
            "mistral-large-2411",
            "gpt-4o-mini-probe",
            // Other makers' pro models, served on Chat Completions.
            "google/gemini-3-pro-preview",
            "gemini-2.5-pro",
            "deepseek-v4-pro-0813",
            "openrouter/google/gemini-2.5-pro",
        ] {
            assert!(!prefers_responses(name), "{name}");
        }
        for name in ["o3", "o4-mini", "gpt-5", "gpt-5.1", "gpt-5-codex", "o1-pro"] {
            assert!(reasons(name), "{name}");
        }
        for name in ["gpt-4.1", "gpt-4o", "omni-moderation", "qwen3"] {
            assert!(!reasons(name), "{name}");
        }
    }
}
