//! `waypoint config`: the effective settings as TOML, each value with the
//! layer it came from. Invariant: a key is never shown whole (`mask`).

use std::path::Path;

use super::{Settings, Source, Theme};

/// `sk-ant-api03-abcdef…` → `sk-a…cdef`: enough to recognise, not to use.
/// Keys shorter than 16 characters are hidden entirely.
pub fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 16 {
        return "…".repeat(usize::from(!chars.is_empty()));
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

impl Settings {
    /// The effective configuration as TOML, each value with its source (keys masked).
    pub fn describe(&self, path: Option<&Path>) -> String {
        let mut out = String::new();
        match (path, &self.file) {
            (_, Some(f)) => out.push_str(&format!("# config file: {}\n", f.display())),
            (Some(p), None) => out.push_str(&format!(
                "# config file: {} (not found; defaults apply)\n",
                p.display()
            )),
            (None, None) => {
                out.push_str("# config file: none (no config folder on this platform)\n")
            }
        }
        let profiles = if self.profiles.is_empty() {
            "none".to_string()
        } else {
            self.profiles.join(", ")
        };
        out.push_str(&format!(
            "# profile: {} (profiles in the file: {profiles})\n",
            self.profile.as_deref().unwrap_or("none")
        ));
        let line = |out: &mut String, key: &str, value: String, source: &Source| {
            let kv = format!("{key} = {value}");
            out.push_str(&format!("{kv:<44} # {source}\n"));
        };
        line(
            &mut out,
            "provider",
            format!("{:?}", self.provider.value.as_str()),
            &self.provider.source,
        );
        line(
            &mut out,
            "model",
            format!("{:?}", self.model.value),
            &self.model.source,
        );
        line(
            &mut out,
            "base_url",
            format!("{:?}", self.base_url.value),
            &self.base_url.source,
        );
        match &self.api_key {
            Some(k) => line(
                &mut out,
                "api_key",
                format!("{:?}", mask(&k.value)),
                &k.source,
            ),
            None => out.push_str("# api_key: not set\n"),
        }
        line(
            &mut out,
            "max_tokens",
            self.max_tokens.value.to_string(),
            &self.max_tokens.source,
        );
        line(
            &mut out,
            "max_turns",
            self.max_turns.value.to_string(),
            &self.max_turns.source,
        );
        line(
            &mut out,
            "nag_every",
            self.nag_every.value.to_string(),
            &self.nag_every.source,
        );
        line(
            &mut out,
            "nag_max",
            self.nag_max.value.to_string(),
            &self.nag_max.source,
        );
        line(
            &mut out,
            "bash_timeout",
            self.bash_timeout.value.to_string(),
            &self.bash_timeout.source,
        );
        line(
            &mut out,
            "context_window",
            // Valid TOML either way: 0 stands for the model's own window.
            match self.context_window.value {
                0 => "0  # the model's window".to_string(),
                w => w.to_string(),
            },
            &self.context_window.source,
        );
        line(
            &mut out,
            "compact_at",
            self.compact_at.value.to_string(),
            &self.compact_at.source,
        );
        line(
            &mut out,
            "output_cap",
            self.output_cap.value.to_string(),
            &self.output_cap.source,
        );
        line(
            &mut out,
            "max_retries",
            self.max_retries.value.to_string(),
            &self.max_retries.source,
        );
        line(
            &mut out,
            "stream_idle_timeout",
            self.stream_idle_timeout.value.to_string(),
            &self.stream_idle_timeout.source,
        );
        let budget = &self.thinking_budget;
        line(
            &mut out,
            "thinking_budget",
            budget.value.to_string(),
            &budget.source,
        );
        let theme = match self.theme.value {
            Theme::Auto => "\"auto\"",
            Theme::NoColor => "\"no-color\"",
        };
        line(&mut out, "theme", theme.to_string(), &self.theme.source);
        let approval = match self.approval.value {
            Some(mode) => format!("\"{mode}\""),
            None => "\"ask\" in the app, \"auto\" headless".to_string(),
        };
        line(&mut out, "approval", approval, &self.approval.source);
        if let Some(path) = &self.plan_file.value {
            line(
                &mut out,
                "plan_file",
                format!("{path:?}"),
                &self.plan_file.source,
            );
        }
        for (key, rules) in [("allow", &self.rules.allow), ("deny", &self.rules.deny)] {
            if !rules.is_empty() {
                let value = format!("{rules:?}");
                out.push_str(&format!(
                    "{:<44} # config file\n",
                    format!("{key} = {value}")
                ));
            }
        }
        out
    }
}
