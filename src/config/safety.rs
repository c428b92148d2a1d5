//! The safety settings from the config file: the command rules and the
//! sandbox's extra folders and network switch. A profile adds rules and
//! folders to the top level's and may turn the network off or on.

use std::path::PathBuf;

use serde::Deserialize;

use super::Layer;
use crate::safety::Rules;

/// The `[sandbox]` table.
#[derive(schemars::JsonSchema, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxLayer {
    /// Folders sandboxed commands may write to, besides the workspace, the
    /// temp folder, `~/.cargo` and `~/.cache` (`~/` is the home folder).
    pub writable: Option<Vec<String>>,
    /// TCP allowed (default true); off needs Landlock ABI 4.
    pub network: Option<bool>,
    /// Variables naming a socket of the user's session (`SSH_AUTH_SOCK`,
    /// `TMUX`, …) passed to commands, their sockets left reachable.
    pub sockets: Option<Vec<String>>,
}

pub struct Safety {
    pub rules: Rules,
    pub sandbox_writable: Vec<PathBuf>,
    pub sandbox_network: bool,
    pub sandbox_sockets: Vec<String>,
}

pub fn resolve(
    file: Option<&Layer>,
    profile: Option<(&str, &Layer)>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Safety {
    let layers = || file.into_iter().chain(profile.map(|(_, l)| l));
    let home = env("HOME").map(PathBuf::from);
    let sandbox_writable = layers()
        .filter_map(|l| l.sandbox.as_ref()?.writable.as_ref())
        .flatten()
        .map(|w| match (w.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(w),
        })
        .collect();
    // The profile's switch wins over the file's.
    let sandbox_network = layers()
        .filter_map(|l| l.sandbox.as_ref()?.network)
        .next_back()
        .unwrap_or(true);
    let sandbox_sockets = layers()
        .filter_map(|l| l.sandbox.as_ref()?.sockets.as_ref())
        .flatten()
        .cloned()
        .collect();
    let list = |pick: fn(&Layer) -> &Vec<String>| -> Vec<String> {
        layers()
            .flat_map(pick)
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect()
    };
    Safety {
        rules: Rules {
            allow: list(|l| &l.allow),
            deny: list(|l| &l.deny),
            ..Rules::default()
        },
        sandbox_writable,
        sandbox_network,
        sandbox_sockets,
    }
}
