//! Item scope (plan mode, issue 45): an approved plan's item may declare
//! the files it writes and the commands it runs. While it is in progress,
//! in `ask` mode a write inside its files and a command its commands cover
//! run without asking (the user approved them with the plan); in `ask` and
//! `auto-edit` a write outside its files is asked, naming the item.
//! Invariants: the scope is the one the user approved (the item's in the
//! agreement, by id): the model's later rewrites of `files` or `commands`
//! neither widen nor narrow it, and items added after approval have none;
//! an ask rule is never silenced, and the gate's refusals (deny rules,
//! headless) stand whatever this stage says (see [`super::Verdict::bend`]).

use std::path::Path;

use futures_util::future::BoxFuture;

use super::{Before, Call, CallStage, Said, StageCx, Verdict};
use crate::events::ApprovalMode;
use crate::safety::access::Says;
use crate::todo::{ItemScope, TodoItem, TodoStatus};
use crate::tools::{Access, Target};

/// The stage: no state of its own (the scope is the plan's).
#[derive(Default)]
pub(in crate::agent) struct Scope;

impl CallStage for Scope {
    fn name(&self) -> &'static str {
        "item-scope"
    }

    fn before<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Before> {
        Box::pin(std::future::ready(judge(cx, call)))
    }
}

/// The item in progress (its number in the plan, its content) and the
/// scope the user approved for it, if it declared one.
fn running_scope(cx: &StageCx<'_>) -> Option<(usize, String, ItemScope)> {
    let state = cx.plan.lock();
    let agreed = state.agreed.as_ref()?;
    let (at, item) = state
        .manager
        .items()
        .iter()
        .enumerate()
        .find(|(_, i)| i.status == TodoStatus::InProgress)?;
    let scope = agreed.iter().find(|a| a.id == item.id)?.scope.clone();
    (!scope.is_empty()).then(|| (at + 1, item.content.clone(), scope))
}

/// What the running item's scope says of `call`.
fn judge(cx: &StageCx<'_>, call: &Call<'_>) -> Before {
    let mode = cx.mode();
    if !matches!(mode, ApprovalMode::Ask | ApprovalMode::AutoEdit) {
        return Before::go_on();
    }
    let Some(access) = cx.tools.spec(call.name).map(|spec| spec.access) else {
        return Before::go_on();
    };
    // What the call acts on, as the tool says (its input's aliases too).
    let given = match (access, cx.tools.target(call.name, call.input)) {
        (Access::Write, Target::File(path)) => path,
        (Access::Exec, Target::Command(line)) => line,
        _ => return Before::go_on(),
    };
    let Some((number, content, scope)) = running_scope(cx) else {
        return Before::go_on();
    };
    let workspace = &cx.host.shared.workspace;
    let rules = &cx.host.config.tools.rules;
    if access == Access::Exec {
        let covered = mode == ApprovalMode::Ask
            && rules.asks(given).is_none()
            && covers_command(&scope.commands, given, workspace.root());
        return allowed(covered);
    }
    if scope.files.is_empty() {
        return Before::go_on();
    }
    let resolved = workspace.resolve(given).ok();
    let inside = resolved
        .as_ref()
        .is_some_and(|p| covers_path(&scope.files, workspace.relative(p)));
    if !inside {
        return Before::ask(format!(
            "{} {} is outside item {number}'s scope ({}: {})",
            call.name,
            crate::text::clean_line(given),
            crate::text::clean_line(&content),
            scope.files.join(", ")
        ));
    }
    let asked = resolved
        .as_ref()
        .is_some_and(|p| matches!(rules.access.edit.says_path(p), Says::Ask(_)));
    allowed(mode == ApprovalMode::Ask && !asked)
}

/// The narrowing of a sandboxed command while an item that declared its
/// files is in progress, unless the item's declared commands cover it
/// (approved with the plan, they write as usual); none in plan mode.
pub(in crate::agent) fn narrowing(
    cx: &StageCx<'_>,
    call: &Call<'_>,
) -> Option<crate::safety::Narrowing> {
    if cx.mode() == ApprovalMode::Plan {
        return None;
    }
    let Target::Command(line) = cx.tools.target(call.name, call.input) else {
        return None;
    };
    let (number, content, scope) = running_scope(cx)?;
    let root = cx.host.shared.workspace.root();
    if scope.files.is_empty() || covers_command(&scope.commands, line, root) {
        return None;
    }
    let commands = if scope.commands.is_empty() {
        String::new()
    } else {
        format!(
            "; its declared commands ({}) write as usual",
            scope.commands.join(", ")
        )
    };
    Some(crate::safety::Narrowing {
        paths: crate::safety::narrowed::paths_of(root, &scope.files),
        hint: format!(
            "item {number}'s scope ({}: {}) narrows what commands may write to its files while it is in progress{commands}",
            crate::text::clean_line(&content),
            scope.files.join(", ")
        ),
    })
}

/// Runs unasked when `covered`, else goes on.
fn allowed(covered: bool) -> Before {
    if covered {
        Before {
            verdict: Verdict::Allow,
            input: None,
        }
    } else {
        Before::go_on()
    }
}

/// Whether the workspace-relative `path` is one of `files`: a glob
/// (`src/parser/**`, `*` not crossing `/`) matches it, a plain path names
/// the file or the directory it lies under.
pub fn covers_path(files: &[String], path: &Path) -> bool {
    let Some(path) = path.to_str() else {
        return false;
    };
    files.iter().any(|entry| {
        let entry = entry.trim().trim_start_matches("./");
        if entry.contains(['*', '?', '[', '{']) {
            globset::GlobBuilder::new(entry)
                .literal_separator(true)
                .build()
                .is_ok_and(|glob| glob.compile_matcher().is_match(path))
        } else {
            let entry = entry.trim_end_matches('/');
            !entry.is_empty()
                && (path == entry
                    || path
                        .strip_prefix(entry)
                        .is_some_and(|rest| rest.starts_with('/')))
        }
    })
}

/// Whether every command of `line` (run in `root`) is covered by one of
/// `commands`, matched as allow rules are (see [`crate::safety::rules`]).
pub fn covers_command(commands: &[String], line: &str, root: &Path) -> bool {
    if commands.is_empty() {
        return false;
    }
    let rules = crate::safety::rules::Rules {
        allow: commands.to_vec(),
        ..Default::default()
    };
    rules.check_in(line, Some(root)) == crate::safety::rules::Verdict::Allowed
}

/// The agreement after an accepted change: `items` as they are now, each
/// with the scope the user approved for it (none for an item added since).
pub fn with_approved_scope(agreed: &[TodoItem], items: &[TodoItem]) -> Vec<TodoItem> {
    items
        .iter()
        .map(|item| TodoItem {
            scope: agreed
                .iter()
                .find(|a| a.id == item.id)
                .map(|a| a.scope.clone())
                .unwrap_or_default(),
            ..item.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_glob_or_a_path_names_the_files_of_an_item() {
        let scope = files(&["src/parser/**", "./README.md", "docs/", "src/*.rs"]);
        let inside = |p: &str| covers_path(&scope, Path::new(p));
        assert!(inside("src/parser/mod.rs"));
        assert!(inside("src/parser/deep/x.rs"));
        assert!(inside("README.md"));
        assert!(inside("docs/src/plan.md"));
        assert!(inside("src/lib.rs"));
        assert!(!inside("src/lexer/mod.rs"), "`*` does not cross `/`");
        assert!(!inside("README.md.bak"));
        assert!(!inside("docsx/a.md"));
        assert!(!inside("src/parserx/a.rs"));
        assert!(!covers_path(&[], Path::new("README.md")));
        assert!(!covers_path(&files(&[""]), Path::new("README.md")));
    }

    #[test]
    fn commands_match_like_allow_rules() {
        let root = Path::new("/nonexistent-root");
        let scope = files(&["cargo test", "echo"]);
        assert!(covers_command(&scope, "cargo test --lib", root));
        assert!(covers_command(&scope, "echo hi && cargo test", root));
        assert!(!covers_command(&scope, "cargo build", root));
        assert!(
            !covers_command(&scope, "cargo test; rm -rf src", root),
            "every command of the line must be covered"
        );
        assert!(!covers_command(&scope, "echo hi > /etc/passwd", root));
        assert!(!covers_command(&[], "echo hi", root));
    }

    #[test]
    fn the_agreement_keeps_the_approved_scope() {
        let item = |id: &str, files: &[&str]| TodoItem {
            id: id.into(),
            content: format!("Item {id}"),
            status: TodoStatus::Pending,
            active_form: format!("Doing {id}"),
            scope: ItemScope {
                files: files.iter().map(|s| s.to_string()).collect(),
                commands: Vec::new(),
                check: None,
            },
        };
        let agreed = vec![item("1", &["src/a.rs"])];
        let now = vec![item("1", &["src/**"]), item("2", &["**"])];
        let kept = with_approved_scope(&agreed, &now);
        assert_eq!(kept[0].scope.files, ["src/a.rs"]);
        assert!(kept[1].scope.is_empty());
    }
}
