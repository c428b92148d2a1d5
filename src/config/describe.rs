//! `waypoint config`: the effective settings as TOML, each value with the
//! layer it came from. Invariant: a key is never shown whole (`mask`).

use std::path::Path;

use super::{Settings, Source, Sourced, Theme};

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
        let mut out = self.file_lines(path);
        self.connection_lines(&mut out);
        self.limit_lines(&mut out);
        self.behaviour_lines(&mut out);
        self.other_lines(&mut out);
        out
    }

    /// Every other key of the file (see [`super::schema::keys`]): its value
    /// as the file (and the profile) wrote it, or that it is not set. So a
    /// key added to the settings types is shown without a line of its own.
    fn other_lines(&self, out: &mut String) {
        let shown = |out: &str, key: &str| {
            out.lines().any(|l| {
                l.starts_with(&format!("{key} ="))
                    || l.starts_with(&format!("# {key}:"))
                    || l.starts_with(&format!("[{key}"))
            })
        };
        for key in super::schema::keys() {
            let key = key.path;
            if key == "profile" || shown(out, &key) {
                continue;
            }
            match self.file_values.get(&key) {
                // A table may hold secrets (an MCP server's headers): only
                // its names are shown.
                Some(toml::Value::Table(table)) => {
                    let names: Vec<&str> = table.keys().map(String::as_str).collect();
                    out.push_str(&format!(
                        "# {key}: set in the config file ({})\n",
                        names.join(", ")
                    ));
                }
                Some(value) => {
                    let kv = format!("{key} = {}", inline(value));
                    out.push_str(&format!("{kv:<44} # config file\n"));
                }
                None => out.push_str(&format!("# {key}: not set\n")),
            }
        }
    }

    /// Which config file was read (or where it was looked for) and the profile.
    fn file_lines(&self, path: Option<&Path>) -> String {
        let file = match (path, &self.file) {
            (_, Some(f)) => f.display().to_string(),
            (Some(p), None) => format!("{} (not found; defaults apply)", p.display()),
            (None, None) => "none (no config folder on this platform)".to_string(),
        };
        let profiles = if self.profiles.is_empty() {
            "none".to_string()
        } else {
            self.profiles.join(", ")
        };
        format!(
            "# config file: {file}\n# profile: {} (profiles in the file: {profiles})\n",
            self.profile.as_deref().unwrap_or("none")
        )
    }

    /// The provider, model, URL and key (masked).
    fn connection_lines(&self, out: &mut String) {
        let provider = &self.provider;
        let quoted = format!("{:?}", provider.value.as_str());
        line(out, "provider", &quoted, &provider.source);
        let model = &self.model;
        line(out, "model", &format!("{:?}", model.value), &model.source);
        let url = &self.base_url;
        line(out, "base_url", &format!("{:?}", url.value), &url.source);
        match &self.api_key {
            Some(k) => line(out, "api_key", &format!("{:?}", mask(&k.value)), &k.source),
            None => out.push_str("# api_key: not set\n"),
        }
        match self.images.value {
            Some(on) => line(out, "images", &on.to_string(), &self.images.source),
            None => out.push_str("# images: by the model's name\n"),
        }
        let wire = self.wire.value;
        let used = wire.for_model(&self.model.value);
        let shown = if self.provider.value != super::ProviderKind::Openai {
            format!("{:?}  # the openai provider's only", wire.as_str())
        } else if wire == used {
            format!("{:?}", wire.as_str())
        } else {
            format!("{:?}  # {} for this model", wire.as_str(), used.as_str())
        };
        line(out, "wire", &shown, &self.wire.source);
    }

    /// The numbers: tokens, turns, nags, timeouts, the context window.
    fn limit_lines(&self, out: &mut String) {
        number(out, "max_tokens", &self.max_tokens);
        number(out, "max_turns", &self.max_turns);
        number(out, "nag_every", &self.nag_every);
        number(out, "nag_max", &self.nag_max);
        number(out, "bash_timeout", &self.bash_timeout);
        let after = match self.auto_background_after.value {
            0 => "0  # off".to_string(),
            secs => secs.to_string(),
        };
        let source = &self.auto_background_after.source;
        line(out, "auto_background_after", &after, source);
        // Valid TOML either way: 0 stands for the model's own window.
        let window = match self.context_window.value {
            0 => "0  # the model's window".to_string(),
            w => w.to_string(),
        };
        line(out, "context_window", &window, &self.context_window.source);
        number(out, "compact_at", &self.compact_at);
        number(out, "output_cap", &self.output_cap);
        number(out, "max_retries", &self.max_retries);
        number(out, "stream_idle_timeout", &self.stream_idle_timeout);
        number(out, "thinking_budget", &self.thinking_budget);
    }

    /// The theme, the approval mode, the plan file and the command rules.
    fn behaviour_lines(&self, out: &mut String) {
        let theme = match self.theme.value {
            Theme::Auto => "\"auto\"",
            Theme::NoColor => "\"no-color\"",
        };
        line(out, "theme", theme, &self.theme.source);
        let approval = match self.approval.value {
            Some(mode) => format!("\"{mode}\""),
            None => "\"ask\" in the app, \"auto\" headless".to_string(),
        };
        line(out, "approval", &approval, &self.approval.source);
        line(
            out,
            "plan_changes",
            &format!("\"{}\"", self.plan_changes.value.as_str()),
            &self.plan_changes.source,
        );
        line(
            out,
            "plan_tool",
            &self.plan_tool.value.to_string(),
            &self.plan_tool.source,
        );
        if let Some(path) = &self.plan_file.value {
            line(
                out,
                "plan_file",
                &format!("{path:?}"),
                &self.plan_file.source,
            );
        }
        let from = |key: &str| {
            if self.file_values.contains_key(key) {
                Source::File(self.file.clone().unwrap_or_default())
            } else {
                Source::Default
            }
        };
        let share = self.mcp_tool_share.to_string();
        line(out, "mcp_tool_share", &share, &from("mcp_tool_share"));
        let notify = &self.notify;
        let mode = format!("{:?}", format!("{:?}", notify.mode).to_lowercase());
        line(out, "notify", &mode, &from("notify"));
        let method = format!("{:?}", format!("{:?}", notify.method).to_lowercase());
        line(out, "notify_method", &method, &from("notify_method"));
        let after = notify.after_secs.to_string();
        line(out, "notify_after", &after, &from("notify_after"));
        let terminal = format!("{:?}", format!("{:?}", self.acp_terminal).to_lowercase());
        line(out, "acp_terminal", &terminal, &from("acp_terminal"));
        for (key, rules) in [("allow", &self.rules.allow), ("deny", &self.rules.deny)] {
            if !rules.is_empty() {
                let kv = format!("{key} = {rules:?}");
                out.push_str(&format!("{kv:<44} # config file\n"));
            }
        }
    }
}

/// A value as TOML writes it inline (a table's values are not shown).
fn inline(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(x) => x.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        toml::Value::Table(_) => "{ … }".to_string(),
    }
}

/// One `key = value` line, its source in a comment at column 46.
fn line(out: &mut String, key: &str, value: &str, source: &Source) {
    let kv = format!("{key} = {value}");
    out.push_str(&format!("{kv:<44} # {source}\n"));
}

/// A number's line.
fn number<T: std::fmt::Display>(out: &mut String, key: &str, value: &Sourced<T>) {
    line(out, key, &value.value.to_string(), &value.source);
}
