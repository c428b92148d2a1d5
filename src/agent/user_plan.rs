//! The user's plan without the model's todo tool (`plan_tool = false`):
//! the model is not offered `todo_write`/`todo_read`, so the plan the user
//! keeps (typed with `/plan add`, read from the plan file, approved) is
//! re-sent to it as context (see [`super::phases`]) and its items advance
//! from the model's replies: a line `Done: N` (or `Done: N, M`) completes
//! the open items named, each as a revision by [`Author::Reply`], and the
//! next pending item is started when none is in progress. Invariants: a
//! reply never adds, removes or rewords an item; a number that names no
//! open item changes nothing; a reply without such a line leaves the plan
//! as it was.

use super::voice::Voice;
use crate::events::{Event, PLAN_MODE_WORK, PLAN_MODE_WORK_REPLY};
use crate::todo::{Author, PlanEdit, TodoItem, TodoStatus};

/// What the block re-sent each turn starts with.
pub const PLAN_HEADER: &str = "[The plan the user keeps; you cannot edit it. When you finish an item, end your reply with a line \"Done: N\" (its number).]";

/// The system prompt's plan section when the model has no todo tool.
pub const PROMPT_SECTION: &str = "The user keeps the plan of the work; you have no tool to edit it. It is sent with \
their messages, its items numbered. Work through it in order; when you finish an item, end your reply with a line \
\"Done: N\" (its number; \"Done: N, M\" for several).";

/// The default prompt's plan section, which names `todo_write`.
const TOOL_SECTION: &str = "Keep a live plan with todo_write for any task of several steps: the user watches it. Mark an item
in_progress before you start it and completed as soon as it is done; keep the plan true at all times.";

/// `prompt` with its plan section for a model without the todo tool:
/// the default's replaced, else the section added at the end.
/// Plan mode's request (in the `<safety>` block when the session starts
/// in plan mode) asks for the proposal in the reply instead.
pub fn system_prompt(prompt: &str) -> String {
    let prompt = prompt.replace(PLAN_MODE_WORK, PLAN_MODE_WORK_REPLY);
    if prompt.contains(TOOL_SECTION) {
        return prompt.replacen(TOOL_SECTION, PROMPT_SECTION, 1);
    }
    format!("{}\n\n{PROMPT_SECTION}", prompt.trim_end())
}

/// The items of the Markdown checklist a reply ends with (its proposal in
/// plan mode): the last run of `- [ ] item` lines (blank lines between
/// them allowed; text after it, such as a question, is no matter), each
/// item's text trimmed; none when the reply has no such line.
pub fn checklist(text: &str) -> Vec<String> {
    let mut run = Vec::new();
    let mut broken = false;
    for line in text.lines().map(str::trim) {
        if let Some(item) = line.strip_prefix("- [ ] ") {
            if broken {
                run.clear();
                broken = false;
            }
            let item = item.trim();
            if !item.is_empty() {
                run.push(item.to_string());
            }
        } else if !line.is_empty() {
            broken = true;
        }
    }
    run
}

/// The block the model reads each turn: the header, then every item
/// numbered with its status (`[x]` done, `[>]` in progress, `[ ]` to do).
pub fn plan_block(items: &[TodoItem]) -> String {
    let mut out = String::from(PLAN_HEADER);
    for (n, item) in items.iter().enumerate() {
        let mark = match item.status {
            TodoStatus::Completed => "[x]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Pending => "[ ]",
        };
        out.push_str(&format!("\n{}. {mark} {}", n + 1, item.content));
    }
    out
}

/// The item numbers the reply's `Done: N` / `Done: N, M` lines name, in
/// order, each once; a line with anything else is not one of them.
pub fn done_numbers(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("Done:") else {
            continue;
        };
        let numbers: Option<Vec<usize>> = rest
            .split(',')
            .map(|n| n.trim().parse::<usize>().ok().filter(|n| *n > 0))
            .collect();
        for n in numbers.unwrap_or_default() {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The edits `numbers` make to `items`: each open item named completed,
/// then, when none is left in progress, the first pending one started.
pub fn edits(items: &[TodoItem], numbers: &[usize]) -> Vec<PlanEdit> {
    let mut after = items.to_vec();
    let mut out = Vec::new();
    for &n in numbers {
        let Some(item) = after.get_mut(n - 1) else {
            continue;
        };
        if item.status == TodoStatus::Completed {
            continue;
        }
        item.status = TodoStatus::Completed;
        out.push(PlanEdit::Status {
            n,
            status: TodoStatus::Completed,
        });
    }
    let running = after.iter().any(|i| i.status == TodoStatus::InProgress);
    if !out.is_empty()
        && !running
        && let Some(i) = after.iter().position(|i| i.status == TodoStatus::Pending)
    {
        out.push(PlanEdit::Status {
            n: i + 1,
            status: TodoStatus::InProgress,
        });
    }
    out
}

/// Applies the reply's `Done:` `numbers` (those its hooks let complete)
/// to the root's plan: each change a revision by [`Author::Reply`],
/// announced and recorded at once. The hooks are
/// [`super::reply_done`]'s.
pub(super) fn advance(voice: Voice<'_>, numbers: &[usize]) {
    if numbers.is_empty() {
        return;
    }
    let items = voice.thread.plan.items();
    for edit in edits(&items, numbers) {
        let event = super::plan::apply_user_edit(&voice.thread.plan, &edit, Author::Reply);
        if let Event::Error { message, .. } = &event {
            tracing::warn!(%message, "a reply's Done line changed nothing");
        }
        voice.host.events.send(event);
    }
    voice.settle_user_changes();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            id: content.to_string(),
            content: content.to_string(),
            status,
            active_form: content.to_string(),
            scope: Default::default(),
        }
    }

    #[test]
    fn done_lines_are_read_exactly() {
        let reply = "I fixed it.\nDone: 1\n";
        assert_eq!(done_numbers(reply), vec![1]);
        assert_eq!(done_numbers("Done: 2, 3\n  Done: 2"), vec![2, 3]);
        for not in [
            "Done",
            "Done: one",
            "Done: 0",
            "done: 1",
            "Done: 1 and 2",
            "I am Done: 1",
            "Done: 1,",
        ] {
            assert_eq!(done_numbers(not), Vec::<usize>::new(), "{not:?}");
        }
    }

    #[test]
    fn a_done_item_is_completed_and_the_next_started() {
        use TodoStatus::*;
        let items = [
            item("a", InProgress),
            item("b", Pending),
            item("c", Pending),
        ];
        assert_eq!(
            edits(&items, &[1]),
            vec![
                PlanEdit::Status {
                    n: 1,
                    status: Completed
                },
                PlanEdit::Status {
                    n: 2,
                    status: InProgress
                },
            ]
        );
        // An item in progress stays the one in progress.
        let items = [item("a", Pending), item("b", InProgress)];
        assert_eq!(
            edits(&items, &[1]),
            vec![PlanEdit::Status {
                n: 1,
                status: Completed
            }]
        );
        // Done already, or no such item: nothing.
        let items = [item("a", Completed), item("b", Pending)];
        assert!(edits(&items, &[1, 7]).is_empty());
    }

    #[test]
    fn the_block_numbers_every_item() {
        use TodoStatus::*;
        let block = plan_block(&[
            item("a", Completed),
            item("b", InProgress),
            item("c", Pending),
        ]);
        assert_eq!(
            block,
            format!("{PLAN_HEADER}\n1. [x] a\n2. [>] b\n3. [ ] c")
        );
    }

    #[test]
    fn the_proposal_is_the_checklist_the_reply_ends_with() {
        let reply = "I read the code.\n\n- [ ] not this\nThe plan:\n\n- [ ] Write greet.sh\n- [ ]   Test it  \n\nShall I go on?";
        assert_eq!(checklist(reply), ["Write greet.sh", "Test it"]);
        // No `- [ ] ` line: no proposal.
        assert!(checklist("Nothing to do.\n- [x] done\n* [ ] star").is_empty());
    }

    #[test]
    fn the_prompt_says_it_once() {
        let prompt = crate::agent::DEFAULT_SYSTEM_PROMPT;
        let without = system_prompt(prompt);
        assert!(!without.contains("todo_write"), "{without}");
        assert_eq!(without.matches("\"Done: N\"").count(), 1);
        assert!(system_prompt("Be brief.").ends_with(PROMPT_SECTION));
        // Plan mode asks for the proposal as a checklist in the reply.
        let planning = system_prompt(&format!("<safety>\n{PLAN_MODE_WORK}\n</safety>"));
        assert!(planning.contains(PLAN_MODE_WORK_REPLY), "{planning}");
        assert!(!planning.contains("todo_write"), "{planning}");
        let refused =
            crate::events::plan_mode_refusal_for("`write_file` cannot change files", false);
        assert!(refused.ends_with(PLAN_MODE_WORK_REPLY), "{refused}");
    }
}
