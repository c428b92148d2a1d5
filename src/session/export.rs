//! A stored session as Markdown, for reading or sharing: the task, the final
//! plan with each item's history, the conversation with tool calls folded
//! into `<details>` blocks, and the token totals and cost. Invariant: the
//! text a model, a tool or a user wrote can never close the fence or the
//! HTML block it is put in (fences grow past the longest backtick run, and
//! summaries are escaped).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::load::Loaded;
use super::record::{Record, TurnOutcome};
use super::{short_id, size, utc};
use crate::chat::{ContentBlock, Usage};
use crate::events::ToolStatus;
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
        let Record::Plan {
            items: plan, at, ..
        } = record
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
        let Record::Plan {
            items,
            at,
            author,
            note,
        } = record
        else {
            continue;
        };
        let what = match (author, note) {
            (Author::User | Author::PlanFile, Some(note)) => cell(note),
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
    let records = &loaded.records;
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
    conversation(&mut out, records);
    let _ = writeln!(
        out,
        "\n---\n_Exported by Waypoint {} · {} records · {}_",
        env!("CARGO_PKG_VERSION"),
        records.len(),
        size(loaded.valid_len)
    );
    out
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
fn conversation(out: &mut String, records: &[Record<'_>]) {
    let _ = writeln!(out, "\n## Conversation");
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
            Record::ToolCall { id, summary, .. } => {
                if let Some(call) = calls.get_mut(id.as_ref()) {
                    call.1.clone_from(&summary.line);
                }
            }
            Record::ToolResult {
                id,
                name,
                content,
                status,
                duration_ms,
                ..
            } => {
                let line = calls
                    .get(id.as_ref())
                    .map(|(_, line)| line.as_str())
                    .unwrap_or_default();
                tool_result(out, name, line, *status, *duration_ms, content);
            }
            Record::Plan { items, .. } => {
                let (done, total) = crate::todo::progress(items);
                let _ = writeln!(out, "\n_plan updated: {done}/{total} completed_");
            }
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
            Record::TurnEnd {
                outcome, message, ..
            } if *outcome != TurnOutcome::Complete => {
                let why = message.as_deref().unwrap_or("the turn stopped");
                let _ = writeln!(out, "\n_{}_", why.trim());
            }
            _ => {}
        }
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
        if let Record::Usage { model, usage, .. } = r {
            by_model.entry(model.as_ref()).or_default().add(usage);
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
        }
    }

    fn plan(at: u64, items: Vec<TodoItem>) -> Record<'static> {
        Record::Plan {
            items: Cow::Owned(items),
            at,
            author: crate::todo::Author::Model,
            note: None,
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
    fn fences_outgrow_the_backticks_inside() {
        let f = fenced("a ```` b");
        assert!(f.starts_with("`````\n") && f.ends_with("\n`````"), "{f}");
        assert_eq!(escape_html("<b>&"), "&lt;b&gt;&amp;");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    /// A whole session of every kind of record, as a transcript holds it.
    fn pinned_session() -> Loaded {
        use crate::events::{CompactReason, ToolDetail, ToolSummary};
        let t0 = 1_764_770_000_000;
        let model = "claude-sonnet-4-5";
        let header = Header::new("0123456789abcdef", "/work/demo", "anthropic", model, t0);
        let call = ContentBlock::ToolUse {
            id: "t1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "echo hi > greet.sh"}),
        };
        let said = ContentBlock::Text {
            text: " I'll write it. ".into(),
        };
        let records: Vec<Record<'static>> = vec![
            Record::User {
                text: "Write a greeting\n".into(),
                prompt: true,
                at: t0 + 1_000,
            },
            Record::TurnStart {
                resumed: false,
                at: t0 + 1_000,
            },
            plan(
                t0 + 2_000,
                vec![
                    item("a", "Write greet.sh", TodoStatus::InProgress),
                    item("b", "Test it", TodoStatus::Pending),
                ],
            ),
            Record::Assistant {
                content: Cow::Owned(vec![said, call]),
                model: model.into(),
                at: t0 + 3_000,
            },
            Record::ToolCall {
                id: "t1".into(),
                name: "bash".into(),
                summary: Cow::Owned(ToolSummary {
                    line: "echo <hi> > greet.sh".into(),
                    detail: ToolDetail::Output,
                }),
                plan_item_id: Some("a".into()),
                plan_item: None,
                at: t0 + 3_000,
            },
            Record::ToolResult {
                id: "t1".into(),
                name: "bash".into(),
                content: "```\nhi\n".into(),
                is_error: false,
                status: ToolStatus::Ok,
                outcome: None,
                duration_ms: 1_234,
                exit_code: Some(0),
                at: t0 + 4_234,
            },
            Record::Usage {
                model: model.into(),
                usage: Usage {
                    input_tokens: 1_200,
                    output_tokens: 300,
                    cache_read_tokens: 800,
                    cache_write_tokens: 0,
                },
                context: None,
            },
            plan(
                t0 + 65_000,
                vec![
                    item("a", "Write greet.sh", TodoStatus::Completed),
                    item("c", "Tell | the user", TodoStatus::Pending),
                ],
            ),
            Record::Compaction {
                reason: CompactReason::Threshold,
                summary: None,
                before_tokens: 100_000,
                after_tokens: 5_000,
                fallback: false,
                messages: Cow::Owned(vec![]),
                at: t0 + 66_000,
            },
            Record::TurnEnd {
                outcome: TurnOutcome::Interrupted,
                stop_reason: None,
                message: Some("Interrupted by the user.".into()),
                error: None,
                open_items: 1,
                at: t0 + 67_000,
            },
        ];
        Loaded {
            path: "/s/0123456789abcdef.jsonl".into(),
            header,
            records,
            notes: vec!["a torn last line was skipped".into()],
            valid_len: 4_321,
        }
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
