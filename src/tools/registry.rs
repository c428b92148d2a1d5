//! The tools offered to the model: the standard set first, in a stable
//! order, then whatever is added while the session runs (an MCP server's
//! tools, a subagent tool), appended at the end so the provider's prompt
//! cache of the earlier ones survives. Invariant: a name the registry does
//! not know gets an error result that lists the tools it does know, never
//! a panic.

use std::sync::Arc;

use serde_json::Value;

use super::Workspace;
use super::bash::Bash;
use super::fs::{EditFile, ReadFile, WriteFile};
use super::glob::Glob;
use super::todo::{TodoRead, TodoWrite};
use super::{
    Failure, Target, Tool, ToolCtx, ToolDef, ToolEnv, ToolHost, ToolOutput, ToolSpec, ToolSummary,
};
use crate::todo::SharedPlan;

/// A registered tool and its spec, read once.
struct Entry {
    spec: ToolSpec,
    tool: Arc<dyn Tool>,
}

/// The tools offered to the model.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<Entry>,
    /// Counts changes to the set, so a session rebuilds its definitions
    /// only when they changed.
    generation: u64,
}

/// Builds a [`ToolRegistry`].
#[derive(Default)]
pub struct ToolRegistryBuilder {
    registry: ToolRegistry,
}

impl ToolRegistryBuilder {
    /// Adds the standard tools: the plan tools, then bash, the file tools
    /// and glob.
    pub fn standard(mut self) -> Self {
        let tools: [Arc<dyn Tool>; 12] = [
            Arc::new(TodoWrite),
            Arc::new(TodoRead),
            Arc::new(Bash),
            Arc::new(ReadFile),
            Arc::new(WriteFile),
            Arc::new(EditFile),
            Arc::new(Glob),
            Arc::new(super::grep::Grep),
            Arc::new(super::web_fetch::WebFetch),
            Arc::new(super::jobs::JobOutput),
            Arc::new(super::jobs::JobKill),
            Arc::new(super::task::Task),
        ];
        for tool in tools {
            self.registry.add(tool);
        }
        self
    }

    /// Adds `tool` after those added before (a name already taken keeps
    /// its first tool).
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Self {
        self.registry.add(tool);
        self
    }

    pub fn build(self) -> ToolRegistry {
        self.registry
    }
}

impl ToolRegistry {
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::default()
    }

    /// The standard tools and nothing else.
    pub fn standard() -> Self {
        Self::builder().standard().build()
    }

    /// Adds `tool` at the end; false when its name is taken (the first
    /// tool of a name keeps it: a model must not find a call going
    /// elsewhere than it did).
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> bool {
        let spec = tool.spec();
        if self.spec(&spec.name).is_some() {
            tracing::warn!(tool = %spec.name, "a tool of this name is registered already");
            return false;
        }
        self.tools.push(Entry { spec, tool });
        self.generation += 1;
        true
    }

    /// A registry of this one's tools that `keep` says yes to, in order
    /// (a subagent's tools).
    pub fn subset(&self, keep: impl Fn(&ToolSpec) -> bool) -> ToolRegistry {
        let mut out = ToolRegistry::default();
        for entry in self.tools.iter().filter(|e| keep(&e.spec)) {
            out.add(entry.tool.clone());
        }
        out
    }

    /// Removes the tools `keep` says no to (an MCP server that went away);
    /// the others keep their order.
    pub fn retain(&mut self, keep: impl Fn(&ToolSpec) -> bool) {
        let before = self.tools.len();
        self.tools.retain(|e| keep(&e.spec));
        if self.tools.len() != before {
            self.generation += 1;
        }
    }

    /// Changes with every change to the set of tools.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What requests send, in the registry's order.
    pub fn definitions(&self) -> Vec<ToolDef> {
        self.tools.iter().map(|e| e.spec.definition()).collect()
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.tools.iter().find(|e| e.spec.name == name)
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.entry(name).map(|e| e.tool.as_ref())
    }

    /// The spec of the tool `name`.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).map(|e| &e.spec)
    }

    /// Whether `name` runs a subagent.
    pub fn is_agent(&self, name: &str) -> bool {
        self.spec(name)
            .is_some_and(|s| s.origin == super::Origin::Agent)
    }

    /// Whether a call of `name` may write files (or run what does).
    pub fn may_write(&self, name: &str) -> bool {
        self.spec(name).is_some_and(|s| {
            matches!(
                s.access,
                super::Access::Write | super::Access::Exec | super::Access::External
            )
        })
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|e| e.spec.name.as_str()).collect()
    }

    /// Whether a call of `name` may run beside the reply's other such
    /// calls (an unknown tool may not).
    pub fn parallel(&self, name: &str, input: &Value) -> bool {
        self.get(name).is_some_and(|t| t.parallel(input))
    }

    /// What a call of `name` acts on ([`Target::Nothing`] for an unknown tool).
    pub fn target<'v>(&self, name: &str, input: &'v Value) -> Target<'v> {
        self.get(name).map_or(Target::Nothing, |t| t.target(input))
    }

    /// How a call is shown; an unknown tool gets an empty line.
    pub fn summarize(&self, name: &str, input: &Value) -> ToolSummary {
        self.get(name)
            .map(|t| t.summarize(input))
            .unwrap_or_default()
    }

    /// How a call is shown, with what the workspace adds: a file change's
    /// diff against the file as it is (an overwrite shows what it replaces,
    /// an edit where it is); see [`super::fs::locate`].
    pub fn describe(&self, name: &str, input: &Value, workspace: &Workspace) -> ToolSummary {
        let mut summary = self.summarize(name, input);
        super::fs::locate(name, &mut summary.detail, workspace);
        summary
    }

    /// The result for a call of a tool that does not exist.
    pub fn unknown(&self, name: &str) -> ToolOutput {
        ToolOutput::failed(
            Failure::UnknownTool,
            format!(
                "unknown tool `{name}`. Available tools: {}",
                self.names().join(", ")
            ),
        )
    }

    /// Runs the call `name`, or answers that no such tool exists.
    pub async fn run(&self, name: &str, input: &Value, ctx: ToolCtx<'_>) -> ToolOutput {
        match self.get(name) {
            Some(tool) => tool.run(input, ctx).await,
            None => self.unknown(name),
        }
    }
}

/// The standard tools' definitions.
pub fn definitions() -> Vec<ToolDef> {
    ToolRegistry::standard().definitions()
}

/// Runs a call of the standard tools outside a session: the plan tools act
/// on an empty plan of their own.
pub async fn run_workspace_tool(name: &str, input: &Value, env: &ToolEnv<'_>) -> ToolOutput {
    let plan = SharedPlan::default();
    let ctx = ToolCtx {
        env: *env,
        plan: &plan,
        host: ToolHost::detached(),
    };
    ToolRegistry::standard().run(name, input, ctx).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::events::ToolDetail;
    use crate::tools::Access;
    use crate::tools::test_support::Fixture;
    use serde_json::json;

    #[test]
    fn standard_order_and_lookup() {
        let r = ToolRegistry::standard();
        assert_eq!(
            r.names(),
            [
                "todo_write",
                "todo_read",
                "bash",
                "read_file",
                "write_file",
                "edit_file",
                "glob",
                "grep",
                "web_fetch",
                "job_output",
                "job_kill",
                "task"
            ]
        );
        assert!(r.spec("bash").is_some_and(|t| t.access == Access::Exec));
        assert!(
            r.spec("read_file")
                .is_some_and(|t| t.access == Access::Read)
        );
        assert!(
            r.spec("edit_file")
                .is_some_and(|t| t.access == Access::Write)
        );
        assert!(
            r.spec("todo_write")
                .is_some_and(|t| t.access == Access::Plan)
        );
        assert!(r.get("nope").is_none());
    }

    #[test]
    fn summaries_carry_their_detail() {
        let r = ToolRegistry::standard();
        let edit = r.summarize(
            "edit_file",
            &json!({"path": "a.rs", "old_text": "a", "new_text": "b"}),
        );
        assert_eq!(edit.line, "a.rs");
        assert_eq!(
            edit.detail,
            ToolDetail::Diff {
                path: "a.rs".into(),
                old: "a".into(),
                new: "b".into(),
                first: 0,
            }
        );
        let write = r.summarize("write_file", &json!({"path": "b", "content": "x"}));
        assert_eq!(
            write.detail,
            ToolDetail::Diff {
                path: "b".into(),
                old: String::new(),
                new: "x".into(),
                first: 0,
            }
        );
        let plan = r.summarize("todo_write", &json!({"todos": [{}, {}]}));
        assert_eq!(
            (plan.line.as_str(), plan.detail),
            ("2 items", ToolDetail::Plan)
        );
        let long = r.summarize("bash", &json!({"command": "x".repeat(100) + "\nsecond"}));
        assert_eq!(long.line.chars().count(), 80);
        assert_eq!(long.detail, ToolDetail::Output);
    }

    #[test]
    fn a_described_change_is_seen_against_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.rs"), "one\ntwo\nthree\nfour\n").unwrap();
        let r = ToolRegistry::standard();
        let diff = |name: &str, input: Value| match r.describe(name, &input, &ws).detail {
            ToolDetail::Diff { old, first, .. } => (old, first),
            other => panic!("{other:?}"),
        };
        // An edit is placed where its text is, with up to three lines
        // around it (the whole file here).
        assert_eq!(
            diff(
                "edit_file",
                json!({"path": "a.rs", "old_text": "three\n", "new_text": "3\n"})
            ),
            ("one\ntwo\nthree\nfour\n".to_string(), 1)
        );
        let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("b.rs"), &lines).unwrap();
        let edit = json!({"path": "b.rs", "old_text": "ne 10", "new_text": "ne ten"});
        let ToolDetail::Diff {
            old, new, first, ..
        } = r.describe("edit_file", &edit, &ws).detail
        else {
            panic!("not a diff");
        };
        assert_eq!(first, 7);
        assert_eq!(
            old,
            "line 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\n"
        );
        assert_eq!(new, old.replace("line 10", "line ten"));
        // Text the file does not hold: place unknown.
        assert_eq!(
            diff(
                "edit_file",
                json!({"path": "a.rs", "old_text": "nine", "new_text": "9"})
            )
            .1,
            0
        );
        // Overwriting shows what is replaced; a new file is all new.
        assert_eq!(
            diff("write_file", json!({"path": "a.rs", "content": "x"})),
            ("one\ntwo\nthree\nfour\n".to_string(), 1)
        );
        assert_eq!(
            diff("write_file", json!({"path": "new.rs", "content": "x"})),
            (String::new(), 0)
        );
        // Outside the workspace or too big: as the call gave it.
        assert_eq!(
            diff("write_file", json!({"path": "../escape", "content": "x"})),
            (String::new(), 0)
        );
        std::fs::write(dir.path().join("big.txt"), "y".repeat(70_000)).unwrap();
        assert_eq!(
            diff("write_file", json!({"path": "big.txt", "content": "x"})),
            (String::new(), 0)
        );
    }

    #[tokio::test]
    async fn an_unknown_tool_lists_the_known_ones() {
        let f = Fixture::new();
        let out = run_workspace_tool("nope", &json!({}), &f.env()).await;
        assert_eq!(
            out.outcome,
            crate::tools::ToolOutcome::Failed {
                failure: crate::tools::Failure::UnknownTool
            }
        );
        assert_eq!(
            out.content,
            "Error: unknown tool `nope`. Available tools: todo_write, todo_read, bash, read_file, write_file, edit_file, glob, grep, web_fetch, job_output, job_kill, task"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod open {
    use std::sync::Arc;

    use futures_util::future::BoxFuture;
    use serde_json::{Value, json};

    use super::ToolRegistry;
    use crate::tools::{Access, Origin, Target, Tool, ToolCtx, ToolOutput, ToolSpec, ToolSummary};

    /// A tool from elsewhere (as an MCP server's would be).
    struct Echo(&'static str);

    impl Tool for Echo {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                origin: Origin::Mcp {
                    server: "test".into(),
                },
                ..ToolSpec::builtin(self.0, "Echoes.", json!({"type": "object"}), Access::Exec)
            }
        }
        fn target<'v>(&self, input: &'v Value) -> Target<'v> {
            Target::Command(input.get("line").and_then(Value::as_str).unwrap_or(""))
        }
        fn summarize(&self, _input: &Value) -> ToolSummary {
            ToolSummary::default()
        }
        fn run<'a>(&'a self, input: &'a Value, _ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
            Box::pin(async move { ToolOutput::ok(input.to_string()) })
        }
    }

    #[test]
    fn tools_added_later_come_last_and_a_taken_name_stays_taken() {
        let mut r = ToolRegistry::builder()
            .standard()
            .with(Arc::new(Echo("echo")))
            .build();
        let before = r.definitions();
        let generation = r.generation();
        assert!(r.add(Arc::new(Echo("echo2"))));
        assert!(!r.add(Arc::new(Echo("bash"))), "bash is taken");
        let after = r.definitions();
        // The earlier definitions are untouched (the prompt cache holds).
        assert_eq!(&after[..before.len()], before.as_slice());
        assert_eq!(after.last().unwrap().name, "echo2");
        assert!(r.generation() > generation);
        assert_eq!(r.spec("bash").unwrap().origin, Origin::Builtin);
        assert_eq!(
            r.target("echo", &json!({"line": "ls"})),
            Target::Command("ls")
        );
        assert_eq!(
            r.target("bash", &json!({"command": "rm -rf /"})),
            Target::Command("rm -rf /")
        );
        assert_eq!(r.target("glob", &json!({"pattern": "*"})), Target::Nothing);
        r.retain(|s| !s.name.starts_with("echo"));
        assert_eq!(r.definitions(), ToolRegistry::standard().definitions());
        let explore = r.subset(|s| s.access == crate::tools::Access::Read);
        assert_eq!(
            explore.names(),
            [
                "todo_read",
                "read_file",
                "glob",
                "grep",
                "job_output",
                "job_kill"
            ]
        );
    }
}
