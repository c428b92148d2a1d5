//! Building a server's tools for the registry: all of them at a turn
//! boundary, those of servers that became ready at a round boundary.
//! Invariant: a tool of the same start with the same definition is kept as
//! it was (and keeps its place).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::{Built, Inner, State};
use crate::mcp::McpTool;

impl Inner {
    /// The tools of every ready server, as its config offers them; a tool
    /// of the same start with the same definition is kept as it was.
    pub(super) fn rebuild_tools(&mut self) {
        let mut tools = BTreeMap::new();
        for name in self.slots.keys() {
            tools.extend(self.build(name));
        }
        // A tool of the same name from an older start (or with another
        // definition) is replaced.
        for (name, new) in &tools {
            if let Some(old) = self.tools.get(name)
                && !Arc::ptr_eq(&old.tool, &new.tool)
                && self.attached.remove(name).is_some()
            {
                self.replaced.insert(name.clone());
            }
        }
        self.tools = tools;
    }

    /// Adds the tools of the ready servers none of whose tools are built
    /// (they became ready since the last sync); the others wait for the
    /// turn boundary. Nothing is added when it would tip the tools past
    /// `budget` (that changes how all of them are sent). Whether any was.
    pub(super) fn join_ready(&mut self, budget: u64) -> bool {
        let built: BTreeSet<&str> = self.tools.values().map(|b| b.server.as_str()).collect();
        let new: Vec<(String, Built)> = self
            .slots
            .keys()
            .filter(|name| !built.contains(name.as_str()))
            .flat_map(|name| self.build(name))
            .collect();
        if new.is_empty() {
            return false;
        }
        let before: u64 = self.tools.values().map(|b| b.tokens).sum();
        let after = before + new.iter().map(|(_, b)| b.tokens).sum::<u64>();
        if before <= budget && after > budget {
            return false;
        }
        self.tools.extend(new);
        true
    }

    /// The tools of server `name` when it is ready (a tool of the same
    /// start with the same definition is kept as it was).
    fn build(&self, name: &str) -> Vec<(String, Built)> {
        let Some(slot) = self.slots.get(name) else {
            return Vec::new();
        };
        let State::Ready { running } = &slot.state else {
            return Vec::new();
        };
        let Some(peer) = running.peer() else {
            return Vec::new();
        };
        let mut tools = Vec::new();
        for def in running.tools.iter().filter(|t| slot.config.offers(&t.name)) {
            let full = crate::mcp::name::tool_name(name, &def.name);
            // The definition as requests send it: its size is its cost,
            // its hash tells a changed one.
            let text = serde_json::to_string(def).unwrap_or_default();
            let print = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                text.hash(&mut h);
                h.finish()
            };
            let kept = self
                .tools
                .get(&full)
                .filter(|b| b.generation == slot.generation && b.print == print)
                .map(|b| b.tool.clone());
            let tool = kept.unwrap_or_else(|| {
                let tool =
                    McpTool::new(name, def.clone(), peer.clone(), slot.config.tool_timeout());
                Arc::new(tool.with_progress(running.progress()))
            });
            let built = Built {
                server: name.to_string(),
                tool,
                tokens: (text.len() / 4) as u64,
                generation: slot.generation,
                print,
                description: def.description.as_deref().unwrap_or_default().to_string(),
            };
            tools.push((full, built));
        }
        tools
    }
}
