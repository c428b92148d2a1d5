//! A stored session as Markdown, for reading or sharing: the task, the final
//! plan with each item's history, the conversation with tool calls folded
//! into `<details>` blocks, and the token totals and cost. Invariant: the
//! text a model, a tool or a user wrote can never close the fence or the
//! HTML block it is put in (fences grow past the longest backtick run, and
//! summaries are escaped).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::load::Loaded;
use super::record::Record;
use super::{short_id, size, utc};
use crate::chat::{ContentBlock, Usage};
use crate::events::{Event, ThreadId, ToolStatus};
use crate::pricing::{self, Price};
use crate::todo::ledger::format_ms;
use crate::todo::{Author, Ledger, PlanDiff, TodoItem, TodoStatus};

/// One plan item's life, from the plan revisions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemHistory {
    pub id: String,
    pub content: String,
    pub status: Option<TodoStatus>,
    pub added: u64,
    pub started: Option<u64>,
    pub completed: Option<u64>,
    /// Dropped from the plan (not in the last revision) at this time.
    pub removed: Option<u64>,
}

/// Every item that was ever in the plan, in the order it first appeared.
pub fn plan_history(records: &[Record<'_>]) -> Vec<ItemHistory> {
    let mut items: Vec<ItemHistory> = Vec::new();
    for record in records {
        let Some(Event::PlanUpdated {
            items: plan, at, ..
        }) = record.as_event()
        else {
            continue;
        };
        for item in plan.iter() {
            let i = match items.iter().position(|h| h.id == item.id) {
                Some(i) => i,
                None => {
                    items.push(ItemHistory {
                        id: item.id.clone(),
                        added: *at,
                        ..ItemHistory::default()
                    });
                    items.len() - 1
                }
            };
            let h = &mut items[i];
            h.content.clone_from(&item.content);
            h.status = Some(item.status);
            h.removed = None;
            match item.status {
                TodoStatus::InProgress => {
                    h.started.get_or_insert(*at);
                }
                TodoStatus::Completed => {
                    h.completed.get_or_insert(*at);
                }
                TodoStatus::Pending => {}
            }
        }
        for h in &mut items {
            if h.removed.is_none() && !plan.iter().any(|i: &TodoItem| i.id == h.id) {
                h.removed = Some(*at);
            }
        }
    }
    items
}

/// The plan's revisions, one line each: number, time, author, what changed.
fn revisions(out: &mut String, records: &[Record<'_>]) {
    let mut before: &[TodoItem] = &[];
    let mut lines = Vec::new();
    for record in records {
        let Some(Event::PlanUpdated {
            items,
            at,
            author,
            note,
            ..
        }) = record.as_event()
        else {
            continue;
        };
        let what = match (author, note) {
            (Author::User | Author::PlanFile | Author::Skill, Some(note)) => cell(note),
            _ => cell(&PlanDiff::between(before, items).summary()),
        };
        lines.push(format!(
            "{}. {} — {}: {what}",
            lines.len() + 1,
            utc(*at),
            author.as_str()
        ));
        before = items;
    }
    let _ = writeln!(out, "\n### Plan revisions\n");
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
}

/// The session as Markdown; `prices` are the config's overrides.
pub fn markdown(loaded: &Loaded, prices: &BTreeMap<String, Price>) -> String {
    let (root, children) = by_thread(&loaded.records);
    let records = &root;
    let mut out = String::new();
    header(&mut out, loaded, prices);
    if let Some(task) = records.iter().find_map(|r| match r {
        Record::User {
            text, prompt: true, ..
        } => Some(text),
        _ => None,
    }) {
        let _ = writeln!(out, "\n## Task\n\n{}", task.trim());
    }
    plan_table(&mut out, records, prices);
    goal(&mut out, records);
    conversation(&mut out, records, "## Conversation");
    subagents(&mut out, records, &children, prices);
    let _ = writeln!(
        out,
        "\n---\n_Exported by Waypoint {} · {} records · {}_",
        env!("CARGO_PKG_VERSION"),
        loaded.lines,
        size(loaded.valid_len)
    );
    out
}

/// The goal's last report, when the session had one: its state, each
/// item's evidence, what it spent, what is left.
fn goal(out: &mut String, records: &[Record<'_>]) {
    let Some(report) = records.iter().rev().find_map(|r| match r.as_event() {
        Some(Event::GoalUpdated { report }) => Some(report),
        _ => None,
    }) else {
        return;
    };
    let _ = writeln!(out, "\n## Goal\n");
    for line in report.lines() {
        let _ = writeln!(out, "    {line}");
    }
}

/// The title and the session's facts: id, workspace, model, times, tokens, notes.
fn header(out: &mut String, loaded: &Loaded, prices: &BTreeMap<String, Price>) {
    let h = &loaded.header;
    let records = &loaded.records;
    let _ = writeln!(out, "# Waypoint session {}\n", short_id(&h.id));
    let _ = writeln!(out, "- Session: `{}`", h.id);
    let _ = writeln!(out, "- Workspace: `{}`", h.workspace);
    let _ = writeln!(out, "- Model: {} ({})", h.model, h.provider);
    let _ = writeln!(out, "- Started: {}", utc(h.started_ms));
    if let Some(last) = records.iter().rev().find_map(Record::at) {
        let _ = writeln!(out, "- Last active: {}", utc(last));
    }
    let _ = writeln!(out, "- Tokens: {}", totals(records, prices));
    for note in &loaded.notes {
        let _ = writeln!(out, "- Note: {note}");
    }
}

/// The plan as a table, one row per item that was ever in it (with its
/// times, tool calls, tokens and cost), then its revisions; nothing when
/// the session had no plan.
fn plan_table(out: &mut String, records: &[Record<'_>], prices: &BTreeMap<String, Price>) {
    let history = plan_history(records);
    if history.is_empty() {
        return;
    }
    let done = history
        .iter()
        .filter(|h| h.removed.is_none() && h.status == Some(TodoStatus::Completed))
        .count();
    let total = history.iter().filter(|h| h.removed.is_none()).count();
    let _ = writeln!(out, "\n## Plan ({done}/{total} completed)\n");
    let mut ledger = Ledger::new();
    for record in records.iter() {
        record.feed(&mut ledger);
    }
    let _ = writeln!(
        out,
        "| # | Item | Status | Added | Started | Completed | Time | Tool calls | Tokens in/out | Cost |"
    );
    let _ = writeln!(
        out,
        "|---|------|--------|-------|---------|-----------|------|------------|---------------|------|"
    );
    let time = |t: Option<u64>| t.map_or_else(|| "–".to_string(), utc);
    for (n, item) in history.iter().enumerate() {
        let status = match (item.removed, item.status) {
            (Some(_), _) => "removed",
            (None, Some(s)) => s.as_str(),
            (None, None) => "",
        };
        let stats = ledger.get(&item.id, prices).unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} | {status} | {} | {} | {} | {} | {} | {}/{} | {} |",
            n + 1,
            cell(&item.content),
            utc(item.added),
            time(item.started),
            time(item.completed),
            format_ms(stats.time_ms),
            stats.tool_calls,
            crate::units::tokens(stats.input_tokens),
            crate::units::tokens(stats.output_tokens),
            stats
                .cost_usd
                .map_or_else(|| "–".to_string(), pricing::format_cost),
        );
    }
    revisions(out, records);
}

/// The conversation in order: the user's prompts, the assistant's text,
/// each tool call folded into a `<details>` block, plan updates,
/// compactions, and turns that stopped early.
fn conversation(out: &mut String, records: &[Record<'_>], title: &str) {
    let _ = writeln!(out, "\n{title}");
    // Per call id: the tool's name and its summary line (the input until
    // the summary is recorded).
    let mut calls: BTreeMap<String, (String, String)> = BTreeMap::new();
    for record in records {
        match record {
            Record::User {
                text,
                prompt: true,
                at,
            } => {
                let _ = writeln!(out, "\n### User · {}\n\n{}", utc(*at), text.trim());
            }
            Record::Assistant { content, .. } => assistant(out, content, &mut calls),
            Record::Compaction {
                before_tokens,
                after_tokens,
                fallback,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "\n---\n_{}_",
                    crate::units::compaction(*before_tokens, *after_tokens, *fallback)
                );
            }
            Record::Event { envelope, .. } => event(out, &envelope.event, &mut calls),
            Record::Images { images, .. } => {
                // Named, not embedded: the export stays readable text.
                for image in images.iter() {
                    let _ = writeln!(
                        out,
                        "\n_[image: {}, {} bytes]_",
                        image.media_type,
                        image.len()
                    );
                }
            }
            _ => {}
        }
    }
}

/// What an event adds to the conversation: a call's result (folded),
/// a plan update, a turn that stopped early.
fn event(out: &mut String, event: &Event, calls: &mut BTreeMap<String, (String, String)>) {
    match event {
        Event::ToolCallBegin { id, summary, .. } => {
            if let Some(call) = calls.get_mut(id) {
                call.1.clone_from(&summary.line);
            }
        }
        Event::ToolCallEnd {
            id,
            name,
            status,
            duration_ms,
            output,
            ..
        } => {
            let line = calls
                .get(id)
                .map(|(_, line)| line.as_str())
                .unwrap_or_default();
            tool_result(out, name, line, *status, *duration_ms, output);
        }
        Event::PlanUpdated { items, .. } => {
            let (done, total) = crate::todo::progress(items);
            let _ = writeln!(out, "\n_plan updated: {done}/{total} completed_");
        }
        Event::TurnAborted { message, .. } => {
            let why = Some(message.as_str())
                .filter(|m| !m.is_empty())
                .unwrap_or("the turn stopped");
            let _ = writeln!(out, "\n_{}_", why.trim());
        }
        _ => {}
    }
}

/// A reply's text (if any), and its tool calls noted in `calls` for their results.
fn assistant(
    out: &mut String,
    content: &[ContentBlock],
    calls: &mut BTreeMap<String, (String, String)>,
) {
    let text: Vec<&str> = content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.trim()),
            _ => None,
        })
        .collect();
    if !text.is_empty() {
        let _ = writeln!(out, "\n### Assistant\n\n{}", text.join("\n\n"));
    }
    for b in content {
        if let ContentBlock::ToolUse { id, name, input } = b {
            calls.insert(id.clone(), (name.clone(), input.to_string()));
        }
    }
}

/// A tool call's result, folded: the mark, name and summary line in the
/// `<summary>` (escaped), the output in a fence it cannot close.
fn tool_result(
    out: &mut String,
    name: &str,
    line: &str,
    status: ToolStatus,
    duration_ms: u64,
    content: &str,
) {
    let mark = match status {
        ToolStatus::Ok => "✓",
        ToolStatus::Error => "✘",
        ToolStatus::Interrupted => "⏹",
    };
    let _ = writeln!(
        out,
        "\n<details><summary>{mark} {} <code>{}</code> ({:.1} s)</summary>\n\n{}\n</details>",
        escape_html(name),
        escape_html(&crate::text::clean_line(line)),
        duration_ms as f64 / 1000.0,
        fenced(content),
    );
}

/// `12.3k in (80% cached) / 1.2k out · $0.0123` over every model.
fn totals(records: &[Record<'_>], prices: &BTreeMap<String, Price>) -> String {
    let mut by_model: BTreeMap<&str, Usage> = BTreeMap::new();
    for r in records {
        if let Some(Event::Usage { model, request, .. }) = r.as_event() {
            by_model
                .entry(model.as_str())
                .or_default()
                .add(&request.plausible());
        }
    }
    let mut all = Usage::default();
    let mut cost = Some(0.0);
    for (model, usage) in &by_model {
        all.add(usage);
        cost = match (cost, pricing::price_of(model, prices)) {
            (Some(c), Some(p)) => Some(c + pricing::cost(p, usage)),
            _ => None,
        };
    }
    let mut line = format!("{} in", crate::units::tokens(all.prompt_tokens()));
    if let Some(pct) = all.cached_percent() {
        let _ = write!(line, " ({pct}% cached)");
    }
    let _ = write!(line, " / {} out", crate::units::tokens(all.output_tokens));
    if let Some(cost) = cost.filter(|_| !by_model.is_empty()) {
        let _ = write!(line, " · {}", pricing::format_cost(cost));
    }
    line
}

/// A child thread's records, and the parent's call that started it.
type Child<'a> = (Option<String>, Vec<Record<'a>>);

/// The root thread's records, and each child's (its wrapped records
/// unwrapped), by thread.
fn by_thread<'a>(records: &[Record<'a>]) -> (Vec<Record<'a>>, BTreeMap<ThreadId, Child<'a>>) {
    let mut root = Vec::new();
    let mut children: BTreeMap<ThreadId, Child<'a>> = BTreeMap::new();
    for record in records {
        let thread = record.thread();
        if thread.is_root() {
            root.push(record.clone());
            continue;
        }
        let child = children.entry(thread).or_default();
        match record {
            Record::Thread { record, .. } => child.1.push((**record).clone()),
            Record::Event { envelope, .. } => {
                if child.0.is_none() {
                    child.0.clone_from(&envelope.parent_call);
                }
                child.1.push(record.clone());
            }
            _ => {}
        }
    }
    (root, children)
}

/// Each subagent: its task, its account, its last plan and its own
/// conversation.
fn subagents(
    out: &mut String,
    root: &[Record<'_>],
    children: &BTreeMap<ThreadId, Child<'_>>,
    prices: &BTreeMap<String, Price>,
) {
    if children.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Subagents");
    for (thread, (call, records)) in children {
        let label = root
            .iter()
            .find_map(|r| match r.as_event() {
                Some(Event::ToolCallBegin { id, summary, .. }) if Some(id) == call.as_ref() => {
                    Some(crate::text::clean_line(&summary.line).into_owned())
                }
                _ => None,
            })
            .unwrap_or_else(|| "a task".to_string());
        let _ = writeln!(out, "\n### {label} ({thread})\n");
        let done = root.iter().find_map(|r| match r.as_event() {
            Some(Event::TaskDone {
                child,
                model,
                usage,
                tool_calls,
                duration_ms,
                ..
            }) if child == thread => Some((model, usage, *tool_calls, *duration_ms)),
            _ => None,
        });
        match done {
            Some((model, usage, calls, ms)) => {
                let cost = pricing::price_of(model, prices)
                    .map(|p| format!(" · {}", pricing::format_cost(pricing::cost(p, usage))))
                    .unwrap_or_default();
                let tokens = crate::units::tokens(usage.prompt_tokens() + usage.output_tokens);
                let _ = writeln!(
                    out,
                    "- Account: {} · {tokens} tokens{cost} · {}",
                    crate::units::plural(calls as usize, "tool call"),
                    format_ms(ms)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "- Account: it did not finish (the session stopped while it ran)"
                );
            }
        }
        let plan = records.iter().rev().find_map(|r| match r.as_event() {
            Some(Event::PlanUpdated { items, .. }) => Some(items),
            _ => None,
        });
        if let Some(items) = plan {
            let (done, total) = crate::todo::progress(items);
            let _ = writeln!(out, "- Plan ({done}/{total} completed):");
            for item in items {
                let mark = match item.status {
                    TodoStatus::Completed => "x",
                    TodoStatus::InProgress => ">",
                    TodoStatus::Pending => " ",
                };
                let _ = writeln!(out, "  - [{mark}] {}", cell(&item.content));
            }
        }
        conversation(out, records, "#### Its conversation");
    }
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    crate::text::clean_line(text).replace('|', "\\|")
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let body = crate::text::clean(text);
    format!("{fence}\n{}\n{fence}", body.trim_end())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::session::Header;
    use std::borrow::Cow;

    fn item(id: &str, content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            id: id.into(),
            content: content.into(),
            status,
            active_form: format!("Doing {content}"),
            scope: Default::default(),
        }
    }

    fn plan(at: u64, items: Vec<TodoItem>) -> Record<'static> {
        let event = Event::PlanUpdated {
            items,
            rendered: String::new(),
            diff: PlanDiff::default(),
            revision: 0,
            author: Author::Model,
            at,
            note: None,
        };
        Record::Event {
            at,
            envelope: Cow::Owned(crate::events::Envelope::root(1, event)),
        }
    }

    #[test]
    fn item_history_follows_the_revisions() {
        use TodoStatus::*;
        let records = vec![
            plan(
                10,
                vec![item("1", "Write", Pending), item("2", "Test", Pending)],
            ),
            plan(
                20,
                vec![item("1", "Write", InProgress), item("2", "Test", Pending)],
            ),
            plan(
                30,
                vec![item("1", "Write", Completed), item("3", "Docs", InProgress)],
            ),
        ];
        let h = plan_history(&records);
        assert_eq!(h.len(), 3);
        assert_eq!(
            (h[0].added, h[0].started, h[0].completed),
            (10, Some(20), Some(30))
        );
        assert_eq!(h[1].removed, Some(30));
        assert_eq!((h[2].added, h[2].started), (30, Some(30)));
    }

    #[test]
    fn images_are_named_not_embedded() {
        let image = crate::chat::ImageSource {
            kind: "base64".into(),
            media_type: "image/png".into(),
            data: "A".repeat(400),
        };
        let records = [Record::Images {
            images: vec![image].into(),
            at: 0,
        }];
        let mut out = String::new();
        conversation(&mut out, &records, "## Conversation");
        assert!(out.contains("_[image: image/png, 300 bytes]_"), "{out}");
        assert!(!out.contains("AAAA"));
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        let f = fenced("a ```` b");
        assert!(f.starts_with("`````\n") && f.ends_with("\n`````"), "{f}");
        assert_eq!(escape_html("<b>&"), "&lt;b&gt;&amp;");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    /// A whole session of every kind of record, as a transcript of
    /// format 1 holds it (so the export reads it upgraded).
    fn pinned_session() -> Loaded {
        use serde_json::json;
        let t0: u64 = 1_764_770_000_000;
        let model = "claude-sonnet-4-5";
        let header = Header::new("0123456789abcdef", "/work/demo", "anthropic", model, t0);
        let plan =
            |at: u64, items: serde_json::Value| json!({"type": "plan", "items": items, "at": at});
        let item = |id: &str, content: &str, status: &str| json!({"id": id, "content": content, "status": status, "activeForm": format!("Doing {content}")});
        let lines = [
            json!({"type": "user", "text": "Write a greeting\n", "prompt": true, "at": t0 + 1_000}),
            json!({"type": "turn_start", "resumed": false, "at": t0 + 1_000}),
            plan(
                t0 + 2_000,
                json!([
                    item("a", "Write greet.sh", "in_progress"),
                    item("b", "Test it", "pending")
                ]),
            ),
            json!({"type": "assistant", "model": model, "at": t0 + 3_000, "content": [
                {"type": "text", "text": " I'll write it. "},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "echo hi > greet.sh"}},
            ]}),
            json!({"type": "tool_call", "id": "t1", "name": "bash", "plan_item_id": "a", "at": t0 + 3_000,
                "summary": {"line": "echo <hi> > greet.sh", "detail": {"kind": "output"}}}),
            json!({"type": "tool_result", "id": "t1", "name": "bash", "content": "```\nhi\n", "status": "ok",
                "duration_ms": 1_234, "exit_code": 0, "at": t0 + 4_234}),
            json!({"type": "usage", "model": model, "usage": {"input_tokens": 1_200, "output_tokens": 300,
                "cache_read_tokens": 800, "cache_write_tokens": 0}}),
            plan(
                t0 + 65_000,
                json!([
                    item("a", "Write greet.sh", "completed"),
                    item("c", "Tell | the user", "pending")
                ]),
            ),
            json!({"type": "compaction", "reason": "threshold", "before_tokens": 100_000, "after_tokens": 5_000,
                "fallback": false, "messages": [], "at": t0 + 66_000}),
            json!({"type": "turn_end", "outcome": "interrupted", "message": "Interrupted by the user.",
                "open_items": 1, "at": t0 + 67_000}),
        ];
        let mut text = serde_json::to_string(&header).unwrap();
        for line in lines {
            text.push('\n');
            text.push_str(&line.to_string());
        }
        text.push('\n');
        let mut loaded = crate::session::load::parse(
            std::path::Path::new("/s/0123456789abcdef.jsonl"),
            text.as_bytes(),
        )
        .unwrap();
        loaded.notes = vec!["a torn last line was skipped".into()];
        loaded.valid_len = 4_321;
        loaded
    }

    #[test]
    fn the_whole_export_is_pinned() {
        let text = markdown(&pinned_session(), &BTreeMap::new());
        let text = text.replace(env!("CARGO_PKG_VERSION"), "VERSION");
        assert_eq!(
            text,
            r##"# Waypoint session 01234567

- Session: `0123456789abcdef`
- Workspace: `/work/demo`
- Model: claude-sonnet-4-5 (anthropic)
- Started: 2025-12-03 13:53 UTC
- Last active: 2025-12-03 13:54 UTC
- Tokens: 2.0k in (40% cached) / 300 out · $0.0083
- Note: a torn last line was skipped

## Task

Write a greeting

## Plan (1/2 completed)

| # | Item | Status | Added | Started | Completed | Time | Tool calls | Tokens in/out | Cost |
|---|------|--------|-------|---------|-----------|------|------------|---------------|------|
| 1 | Write greet.sh | completed | 2025-12-03 13:53 UTC | 2025-12-03 13:53 UTC | 2025-12-03 13:54 UTC | 1m 03s | 1 | 2.0k/300 | $0.0083 |
| 2 | Test it | removed | 2025-12-03 13:53 UTC | – | – | 0s | 0 | 0/0 | – |
| 3 | Tell \| the user | pending | 2025-12-03 13:54 UTC | – | – | 0s | 0 | 0/0 | – |

### Plan revisions

1. 2025-12-03 13:53 UTC — model: +2 added, ▶ "Write greet.sh" started
2. 2025-12-03 13:54 UTC — model: +1 added, -1 removed, ✗ "Test it" dropped, ✓ "Write greet.sh" completed

## Conversation

### User · 2025-12-03 13:53 UTC

Write a greeting

_plan updated: 0/2 completed_

### Assistant

I'll write it.

<details><summary>✓ bash <code>echo &lt;hi&gt; &gt; greet.sh</code> (1.2 s)</summary>

````
```
hi
````
</details>

_plan updated: 1/2 completed_

---
_context compacted: 100k → 5k tokens_

_Interrupted by the user._

---
_Exported by Waypoint VERSION · 10 records · 4 KB_
"##
        );
    }
}
