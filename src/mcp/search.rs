//! `mcp_search`: when the MCP tools' definitions would take more than the
//! context budget, only this tool is sent, and the model finds and loads
//! the MCP tools it needs with it. Invariants: a tool is loaded only by a
//! search that returned it (or named it with `select:`), and a loaded tool
//! is offered from the model's next step on until the session ends or its
//! server goes; a search never runs anything on a server.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::tools::args::TypedTool;
use crate::tools::{Access, ToolCtx, ToolOutput, ToolSpec, ToolSummary, summary_line};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "mcp_search";

/// Results of one search, when the model does not say.
const DEFAULT_RESULTS: usize = 5;
const MAX_RESULTS: usize = 20;

/// One tool as the search sees it.
pub struct Entry {
    pub name: String,
    pub server: String,
    /// Its description's first line.
    pub about: String,
    /// Name and description in lower case, to match words against.
    name_lower: String,
    about_lower: String,
}

impl Entry {
    pub fn new(name: &str, server: &str, description: &str) -> Self {
        Self {
            name: name.to_string(),
            server: server.to_string(),
            about: description.lines().next().unwrap_or_default().to_string(),
            name_lower: name.to_lowercase(),
            about_lower: description.to_lowercase(),
        }
    }

    /// How well it matches `terms`: a term in the name counts three, in
    /// the description one.
    fn score(&self, terms: &[String]) -> usize {
        terms
            .iter()
            .map(|t| {
                3 * usize::from(self.name_lower.contains(t.as_str()))
                    + usize::from(self.about_lower.contains(t.as_str()))
            })
            .sum()
    }
}

#[derive(Default)]
struct Shelf {
    entries: Vec<Entry>,
    loaded: BTreeSet<String>,
}

/// What one search found (its tools loaded now), or the servers to say
/// when nothing matched.
struct Found {
    tools: Vec<(String, String)>,
    total: usize,
    servers: String,
}

/// The MCP tools the search looks through, and those it loaded. Shared by
/// the servers' manager and the search tool.
#[derive(Clone, Default)]
pub struct Catalog(Arc<Mutex<Shelf>>);

impl Catalog {
    fn lock(&self) -> MutexGuard<'_, Shelf> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts `entries` on the shelf, to be searched (when the tools of the
    /// servers changed).
    pub fn set(&self, entries: Vec<Entry>) {
        self.lock().entries = entries;
    }

    /// How many tools searches loaded (it only grows).
    pub fn loaded_count(&self) -> usize {
        self.lock().loaded.len()
    }

    /// The names of the tools searches loaded.
    pub fn loaded(&self) -> BTreeSet<String> {
        self.lock().loaded.clone()
    }

    /// The tools matching `query`, best first (at most `max`), loaded.
    fn search(&self, query: &str, max: usize) -> Found {
        let mut shelf = self.lock();
        let mut found: Vec<&Entry> = if let Some(names) = query.trim().strip_prefix("select:") {
            let names: Vec<&str> = names.split(',').map(str::trim).collect();
            shelf
                .entries
                .iter()
                .filter(|e| names.contains(&e.name.as_str()))
                .collect()
        } else {
            let terms: Vec<String> = query
                .split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(str::to_lowercase)
                .collect();
            let mut scored: Vec<(usize, &Entry)> = shelf
                .entries
                .iter()
                .map(|e| (e.score(&terms), e))
                .filter(|(score, _)| *score > 0)
                .collect();
            // Best first; equal scores by name, so a search is repeatable.
            scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
            scored.into_iter().map(|(_, e)| e).collect()
        };
        found.truncate(max);
        let tools: Vec<(String, String)> = found
            .iter()
            .map(|e| (e.name.clone(), e.about.clone()))
            .collect();
        let mut servers: std::collections::BTreeMap<&str, usize> = Default::default();
        for e in &shelf.entries {
            *servers.entry(e.server.as_str()).or_default() += 1;
        }
        let servers = servers
            .iter()
            .map(|(s, n)| format!("{s} ({n})"))
            .collect::<Vec<_>>()
            .join(", ");
        let total = shelf.entries.len();
        for (name, _) in &tools {
            shelf.loaded.insert(name.clone());
        }
        Found {
            tools,
            total,
            servers,
        }
    }
}

/// The search tool.
pub struct McpSearch {
    catalog: Catalog,
}

impl McpSearch {
    pub fn new(catalog: Catalog) -> Self {
        Self { catalog }
    }
}

/// What `mcp_search` takes.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words of what the tool does or is called, or select:NAME1,NAME2
    pub query: String,
    /// At most this many tools (default 5)
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<u64>,
}

impl TypedTool for McpSearch {
    type Args = SearchArgs;

    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            SEARCH_TOOL,
            "Find tools of the connected MCP servers and load them. Their definitions are not all \
             sent (they would take too much of the context): search by what you need (words of \
             the tool's name or purpose), or load exact names with `select:NAME1,NAME2`. The \
             tools found are loaded: call them from your next step, by the names listed.",
            schema,
            Access::Read,
        )
    }

    fn summary_of(&self, args: Option<&SearchArgs>) -> ToolSummary {
        let query = args.map_or("", |a| a.query.as_str());
        ToolSummary {
            line: summary_line(&format!("search MCP tools: {query}")),
            ..ToolSummary::default()
        }
    }

    fn call<'a>(&'a self, args: SearchArgs, _ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let query = args.query.as_str();
            if query.trim().is_empty() {
                return ToolOutput::error("`query` is empty: say what the tool should do");
            }
            let max = args.max_results.map_or(DEFAULT_RESULTS, |n| {
                usize::try_from(n)
                    .unwrap_or(MAX_RESULTS)
                    .clamp(1, MAX_RESULTS)
            });
            let found = self.catalog.search(query, max);
            if found.tools.is_empty() {
                return ToolOutput::ok(format!(
                    "No MCP tool matches `{query}` (of {}). Try other words, or fewer. The servers (tools): {}.",
                    found.total, found.servers
                ));
            }
            let mut out = format!(
                "Loaded {} of {} MCP tools; call them from your next step:\n",
                found.tools.len(),
                found.total
            );
            for (name, about) in &found.tools {
                out.push_str(&format!("- {name}: {about}\n"));
            }
            ToolOutput::ok(out.trim_end().to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let c = Catalog::default();
        c.set(vec![
            Entry::new(
                "mcp__gh__create_issue",
                "gh",
                "Create an issue\nin a repository",
            ),
            Entry::new(
                "mcp__gh__list_issues",
                "gh",
                "List the issues of a repository",
            ),
            Entry::new("mcp__db__query", "db", "Run a read-only SQL query"),
        ]);
        c
    }

    #[test]
    fn words_find_by_name_first_and_what_is_found_is_loaded() {
        let c = catalog();
        let found = c.search("issue", 5);
        let names: Vec<&str> = found.tools.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["mcp__gh__create_issue", "mcp__gh__list_issues"]);
        assert_eq!(found.tools[0].1, "Create an issue");
        assert_eq!(c.loaded_count(), 2);
        // A word of the description only counts less than one of the name.
        let found = c.search("sql issues", 1);
        assert_eq!(found.tools[0].0, "mcp__gh__list_issues");
    }

    #[test]
    fn select_loads_exact_names_and_no_match_names_the_servers() {
        let c = catalog();
        let found = c.search("select:mcp__db__query, nope", 5);
        assert_eq!(found.tools.len(), 1);
        assert!(c.loaded().contains("mcp__db__query"));
        let none = c.search("weather", 5);
        assert!(none.tools.is_empty());
        assert_eq!((none.total, none.servers.as_str()), (3, "db (1), gh (2)"));
        assert_eq!(c.loaded_count(), 1);
    }
}
