//! The MCP servers as their events told the status line: each one's
//! state by name. Invariant: a server is counted once, by its latest state.

use std::collections::BTreeMap;

use crate::events::McpStatus;

/// How the MCP tools are sent, as the engine last said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolsMode {
    pub offered: usize,
    pub deferred: usize,
    pub tokens: u64,
    pub budget: u64,
}

#[derive(Debug, Default)]
pub struct McpView {
    servers: BTreeMap<String, McpStatus>,
    pub mode: Option<ToolsMode>,
}

impl McpView {
    pub fn set(&mut self, name: &str, status: McpStatus) {
        self.servers.insert(name.to_string(), status);
    }

    /// (ready, counted) while any server that should run is not ready
    /// (a disabled one is not counted); `None` once all are (or none is
    /// configured): the status line says nothing then.
    pub fn pending(&self) -> Option<(usize, usize)> {
        let counted = || {
            self.servers
                .values()
                .filter(|s| !matches!(s, McpStatus::Disabled))
        };
        let ready = counted()
            .filter(|s| matches!(s, McpStatus::Ready { .. }))
            .count();
        let all = counted().count();
        (ready < all).then_some((ready, all))
    }

    /// Whether a server failed.
    pub fn any_failed(&self) -> bool {
        self.servers
            .values()
            .any(|s| matches!(s, McpStatus::Failed { .. }))
    }

    pub fn servers(&self) -> impl Iterator<Item = (&str, &McpStatus)> {
        self.servers.iter().map(|(n, s)| (n.as_str(), s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_counts_the_latest_state_of_each_server() {
        let mut v = McpView::default();
        assert_eq!(v.pending(), None);
        v.set("a", McpStatus::Starting);
        v.set("b", McpStatus::Starting);
        assert_eq!(v.pending(), Some((0, 2)));
        v.set(
            "a",
            McpStatus::Ready {
                tools: 3,
                schema_tokens: 100,
            },
        );
        assert_eq!(v.pending(), Some((1, 2)));
        v.set(
            "b",
            McpStatus::Failed {
                error: "x".into(),
                stderr: String::new(),
            },
        );
        assert!(v.any_failed());
        assert_eq!(v.pending(), Some((1, 2)));
        v.set(
            "b",
            McpStatus::Ready {
                tools: 1,
                schema_tokens: 10,
            },
        );
        assert_eq!(v.pending(), None);
        v.set("c", McpStatus::Disabled);
        assert_eq!(v.pending(), None);
        v.set(
            "d",
            McpStatus::NeedsApproval {
                command: "x".into(),
            },
        );
        assert_eq!(v.pending(), Some((2, 3)));
    }
}
