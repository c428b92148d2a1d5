//! The standard set of tools, in the stable order the model sees them.
//! Invariant: a name the registry does not know gets an error result that
//! lists the tools it does know, never a panic.

use serde_json::Value;

use super::Workspace;
use super::bash::Bash;
use super::fs::{EditFile, ReadFile, WriteFile};
use super::glob::Glob;
use super::todo::{TodoRead, TodoWrite};
use super::{Tool, ToolCtx, ToolDef, ToolEnv, ToolOutput, ToolSummary};
use crate::todo::SharedPlan;

/// The tools offered to the model.
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    /// The plan tools, then bash, the file tools and glob.
    pub fn standard() -> Self {
        Self {
            tools: vec![
                Box::new(TodoWrite),
                Box::new(TodoRead),
                Box::new(Bash),
                Box::new(ReadFile),
                Box::new(WriteFile),
                Box::new(EditFile),
                Box::new(Glob),
            ],
        }
    }

    /// What requests send, in the registry's order.
    pub fn definitions(&self) -> Vec<ToolDef> {
        self.tools
            .iter()
            .map(|t| ToolDef {
                name: t.name(),
                description: t.description(),
                input_schema: t.input_schema(),
            })
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.as_ref())
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
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
        ToolOutput::error(format!(
            "unknown tool `{name}`. Available tools: {}",
            self.names().join(", ")
        ))
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
                "glob"
            ]
        );
        assert!(r.get("bash").is_some_and(|t| t.access() == Access::Exec));
        assert!(
            r.get("read_file")
                .is_some_and(|t| t.access() == Access::Read)
        );
        assert!(
            r.get("edit_file")
                .is_some_and(|t| t.access() == Access::Write)
        );
        assert!(
            r.get("todo_write")
                .is_some_and(|t| t.access() == Access::Plan)
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
        // An edit is placed where its text is.
        assert_eq!(
            diff(
                "edit_file",
                json!({"path": "a.rs", "old_text": "three\n", "new_text": "3\n"})
            ),
            ("three\n".to_string(), 3)
        );
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
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Error: unknown tool `nope`. Available tools: todo_write, todo_read, bash, read_file, write_file, edit_file, glob"
        );
    }
}
