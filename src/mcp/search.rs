//! `mcp_search`: when the MCP tools' definitions would take more than the
//! context budget, only this tool is sent, and the model finds and loads
//! the MCP tools it needs with it. Invariants: a tool is loaded only by a
//! search that returned it (or named it with `select:`), and a loaded tool
//! is offered from the model's next step on until the session ends or its
//! server goes; a search never runs anything on a server.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::tools::{Access, Tool, ToolCtx, ToolOutput, ToolSpec, ToolSummary, summary_line};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "mcp_search";

/// Results of one search, when the model does not say.
const DEFAULT_RESULTS: usize = 5;
const MAX_RESULTS: usize = 20;

#[derive(Default)]
struct Shelf {
    tools: Vec<Arc<dyn Tool>>,
    loaded: BTreeSet<String>,
}

/// The MCP tools the search looks through, and those it loaded. Shared by
/// the servers' manager and the search tool.
#[derive(Clone, Default)]
pub struct Catalog(Arc<Mutex<Shelf>>);

impl Catalog {
    fn lock(&self) -> MutexGuard<'_, Shelf> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts `tools` on the shelf, to be searched.
    pub fn set(&self, tools: Vec<Arc<dyn Tool>>) {
        self.lock().tools = tools;
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
    fn search(&self, query: &str, max: usize) -> (Vec<ToolSpec>, usize) {
        let mut shelf = self.lock();
        let specs: Vec<ToolSpec> = shelf.tools.iter().map(|t| t.spec()).collect();
        let total = specs.len();
        let found: Vec<ToolSpec> = if let Some(names) = query.trim().strip_prefix("select:") {
            let names: Vec<&str> = names.split(',').map(str::trim).collect();
            specs
                .into_iter()
                .filter(|s| names.contains(&s.name.as_str()))
                .collect()
        } else {
            let terms: Vec<String> = query
                .split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(str::to_lowercase)
                .collect();
            let mut scored: Vec<(usize, ToolSpec)> = specs
                .into_iter()
                .map(|s| (score(&s, &terms), s))
                .filter(|(score, _)| *score > 0)
                .collect();
            // Best first; equal scores by name, so a search is repeatable.
            scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
            scored.into_iter().map(|(_, s)| s).collect()
        };
        let found: Vec<ToolSpec> = found.into_iter().take(max).collect();
        for spec in &found {
            shelf.loaded.insert(spec.name.clone());
        }
        (found, total)
    }
}

/// How well `spec` matches `terms`: a term in the name counts three, in
/// the description one.
fn score(spec: &ToolSpec, terms: &[String]) -> usize {
    let name = spec.name.to_lowercase();
    let about = spec.description.to_lowercase();
    terms
        .iter()
        .map(|t| {
            3 * usize::from(name.contains(t.as_str())) + usize::from(about.contains(t.as_str()))
        })
        .sum()
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

impl Tool for McpSearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec::builtin(
            SEARCH_TOOL,
            "Find tools of the connected MCP servers and load them. Their definitions are not all \
             sent (they would take too much of the context): search by what you need (words of \
             the tool's name or purpose), or load exact names with `select:NAME1,NAME2`. The \
             tools found are loaded: call them from your next step, by the names listed.",
            json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "Words of what the tool does or is called, or select:NAME1,NAME2"
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": "At most this many tools (default 5)"
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            Access::Read,
        )
    }

    fn summarize(&self, input: &Value) -> ToolSummary {
        let query = input
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ToolSummary {
            line: summary_line(&format!("search MCP tools: {query}")),
            ..ToolSummary::default()
        }
    }

    fn run<'a>(&'a self, input: &'a Value, _ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let Some(query) = input.get("query").and_then(Value::as_str) else {
                return ToolOutput::error("`query` (a string) is required");
            };
            if query.trim().is_empty() {
                return ToolOutput::error("`query` is empty: say what the tool should do");
            }
            let max = input
                .get("max_results")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_RESULTS, |n| (n as usize).clamp(1, MAX_RESULTS));
            let (found, total) = self.catalog.search(query, max);
            if found.is_empty() {
                return ToolOutput::ok(format!(
                    "No MCP tool matches `{query}` (of {total}). Try other words, or fewer."
                ));
            }
            let mut out = format!(
                "Loaded {} of {total} MCP tools; call them from your next step:\n",
                found.len()
            );
            for spec in &found {
                let about = spec.description.lines().next().unwrap_or_default();
                out.push_str(&format!("- {}: {about}\n", spec.name));
            }
            ToolOutput::ok(out.trim_end().to_string())
        })
    }
}
