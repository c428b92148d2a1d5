//! Picking one setting from the layers: the flag, then the environment
//! variables, then the profile, then the file, then the default; each value
//! keeps the layer it came from. Also the parsers of the environment's
//! text, and the check of a share from any layer.

use std::path::Path;

use super::env_vars::env_vars;
use super::{ConfigError, Layer, Source, Sourced};
use crate::events::ApprovalMode;

/// The layers of one resolution, highest first.
#[derive(Clone, Copy)]
pub(super) struct Layers<'a> {
    pub(super) flags: &'a Layer,
    pub(super) env: &'a dyn Fn(&str) -> Option<String>,
    pub(super) profile: Option<(&'a str, &'a Layer)>,
    pub(super) file: Option<(&'a Path, &'a Layer)>,
    /// The provider in use's prefix of its variables (`ANTHROPIC`).
    pub(super) prefix: &'static str,
}

impl Layers<'_> {
    /// The first layer that sets the value of `key`: flag, its env vars
    /// (in the order of [`super::ENV_VARS`]), profile, file, default.
    pub(super) fn pick<T: Clone>(
        &self,
        flag: &'static str,
        get: impl Fn(&Layer) -> Option<T>,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
        default: T,
    ) -> Result<Sourced<T>, ConfigError> {
        if let Some(v) = get(self.flags) {
            return Ok(Sourced {
                value: v,
                source: Source::Flag(flag),
            });
        }
        for var in env_vars(key, self.prefix) {
            if let Some(raw) = (self.env)(&var).filter(|v| !v.trim().is_empty()) {
                let value = parse(raw.trim()).map_err(|message| ConfigError::Env {
                    var: var.clone(),
                    value: raw.clone(),
                    message,
                })?;
                return Ok(Sourced {
                    value,
                    source: Source::Env(var),
                });
            }
        }
        if let Some((name, layer)) = self.profile
            && let Some(v) = get(layer)
        {
            return Ok(Sourced {
                value: v,
                source: Source::Profile(name.to_string()),
            });
        }
        if let Some((path, layer)) = self.file
            && let Some(v) = get(layer)
        {
            return Ok(Sourced {
                value: v,
                source: Source::File(path.to_path_buf()),
            });
        }
        Ok(Sourced {
            value: default,
            source: Source::Default,
        })
    }
}

impl Layers<'_> {
    /// A whole number: the flag, the variables of `key`, the profile, the
    /// file or `default`.
    pub(super) fn number<T: Clone + std::str::FromStr>(
        &self,
        flag: &'static str,
        get: impl Fn(&Layer) -> Option<T>,
        key: &str,
        default: T,
    ) -> Result<Sourced<T>, ConfigError> {
        self.pick(flag, get, key, number, default)
    }
}

pub(super) fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| "expected a whole number".to_string())
}

pub(super) const SHARE: &str = "expected a number above 0 and at most 1";

pub(super) fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(SHARE.to_string()),
    }
}

pub(super) fn text(s: &str) -> Result<String, String> {
    Ok(s.to_string())
}

pub(super) fn approval(s: &str) -> Result<Option<ApprovalMode>, String> {
    ApprovalMode::parse(s)
        .map(Some)
        .ok_or_else(|| "expected read-only, plan, ask, auto-edit, auto or yolo".to_string())
}

/// A share from any layer is checked (the environment's already was):
/// NaN, 0 or more than 1 would compact at every round or never.
pub(super) fn check_share(name: &'static str, at: &Sourced<f64>) -> Result<(), ConfigError> {
    if at.value > 0.0 && at.value <= 1.0 {
        return Ok(());
    }
    Err(ConfigError::Value {
        name,
        value: at.value.to_string(),
        from: at.source.clone(),
        message: SHARE.into(),
    })
}

/// `plan_changes`: what the model's changes to an approved plan need.
pub(super) fn plan_changes(layers: Layers<'_>) -> Result<Sourced<super::PlanChanges>, ConfigError> {
    layers.pick(
        "--plan-changes",
        |l| l.plan_changes,
        "plan_changes",
        |s| super::PlanChanges::parse(s).ok_or_else(|| "expected ask, tell or free".to_string()),
        super::PlanChanges::Tell,
    )
}

/// `plan_file`: the plan's Markdown copy in the workspace.
pub(super) fn plan_file(layers: Layers<'_>) -> Result<Sourced<Option<String>>, ConfigError> {
    layers.pick(
        "--plan-file",
        |l| l.plan_file.clone().map(Some),
        "plan_file",
        |s| text(s).map(Some),
        None,
    )
}

/// `plan_tool`: whether the model gets the todo tools.
pub(super) fn plan_tool(layers: Layers<'_>) -> Result<Sourced<bool>, ConfigError> {
    layers.pick(
        "--plan-tool",
        |l| l.plan_tool,
        "plan_tool",
        |s| match s.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err("expected true or false".into()),
        },
        true,
    )
}
