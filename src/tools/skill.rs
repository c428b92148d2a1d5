//! The `skill` tool: loads a skill's instructions (its `SKILL.md` body,
//! read again now) when the model decides a task needs it; only names
//! and descriptions are in the system prompt. A skill with a `## Plan`
//! checklist also seeds the plan (done by the engine after the call, as
//! a user revision). Offered only when the session has skills.

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::TypedTool;
use super::{Access, ToolCtx, ToolDetail, ToolOutput, ToolSpec, ToolSummary, summary_line};

/// The `skill` tool.
pub struct SkillTool;

/// A `skill` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillArgs {
    // The skill's name, as the system prompt lists it.
    #[serde(alias = "skill")]
    pub name: String,
    /// what the skill is to work on, if anything
    #[serde(alias = "args")]
    pub arguments: Option<String>,
}

impl TypedTool for SkillTool {
    type Args = SkillArgs;
    const PARALLEL: bool = true;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "skill",
            "Load a skill's instructions by name (the skills are listed in the system prompt). \
Call it before starting a task a skill is written for, then follow what it says.",
            schema,
            Access::Read,
        )
    }
    fn summary_of(&self, args: Option<&SkillArgs>) -> ToolSummary {
        ToolSummary {
            line: summary_line(args.map_or("", |a| a.name.as_str())),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: SkillArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { run(&args, &ctx.env.config.catalog) })
    }
}

/// A skill's instructions as the model reads them, or why not.
pub fn run(args: &SkillArgs, catalog: &crate::skills::Catalog) -> ToolOutput {
    let name = args.name.trim();
    let Some(skill) = catalog.skill(name) else {
        let names: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
        return ToolOutput::error(format!(
            "there is no skill `{name}`; the skills are: {}",
            names.join(", ")
        ));
    };
    match crate::skills::body(skill) {
        Ok(body) => ToolOutput {
            skill: Some(skill.name.clone()),
            ..ToolOutput::ok(loaded(
                skill,
                &body,
                args.arguments.as_deref().unwrap_or(""),
            ))
        },
        Err(why) => ToolOutput::error(format!("the skill `{name}` could not be read: {why}")),
    }
}

/// The text of a loaded skill: where it is (its folder may hold files
/// it names), its instructions, and the arguments.
pub fn loaded(skill: &crate::skills::Skill, body: &str, arguments: &str) -> String {
    let folder = skill
        .path
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut out = format!(
        "Skill `{}` (its folder: {folder}; files it names are there).\n\n{body}",
        skill.name
    );
    if let Some(note) = crate::skills::shell_note(body) {
        out.push_str("\n\n");
        out.push_str(&note);
    }
    if !arguments.trim().is_empty() {
        out.push_str(&format!("\n\nArguments: {}", arguments.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{Origin, Skill};
    use std::path::PathBuf;

    #[test]
    fn a_skills_inline_shell_is_named_as_not_run() {
        let skill = Skill {
            name: "ship".into(),
            description: "Ship it".into(),
            path: PathBuf::from("/skills/ship/SKILL.md"),
            origin: Origin::User,
        };
        let text = loaded(&skill, "Diff: !`git diff HEAD` then ship.", "");
        assert!(
            text.contains("Waypoint did not run them: `git diff HEAD`"),
            "{text}"
        );
        let plain = loaded(&skill, "Run `cargo test`!", "");
        assert!(!plain.contains("did not run"), "{plain}");
    }
}
