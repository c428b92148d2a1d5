//! Compaction: when the conversation nears the context window, the model
//! summarises the work so far and the conversation is rebuilt as the task,
//! that summary, the plan rendered from the plan store, and the last turns
//! verbatim. Invariants: the plan always comes from [`TodoManager::render`]
//! (never from the summary), the rebuilt conversation keeps every
//! `tool_use` answered by its `tool_result` (it validates), and no request
//! is sent larger than the window: when summarising fails, the oldest tool
//! outputs are dropped instead (each replaced by a one-line marker).
//!
//! [`TodoManager::render`]: crate::todo::TodoManager::render

use tokio_util::sync::CancellationToken;

use std::borrow::Cow;

use super::thread::Thread;
use super::{AgentConfig, Session};
use crate::chat::Conversation;
use crate::events::{CompactReason, Event};
use crate::llm::{ContentBlock, LlmError, Message, ModelRequest, Role, StreamEvent};
use crate::session::{Record, now_ms};
use crate::tools::cap_with;

/// The window used when neither the settings nor the model list know one.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// How a rebuilt conversation marks the summary.
pub const SUMMARY_HEADER: &str = "[Summary of earlier work in this session, written when the conversation was compacted to fit the context window. The messages it summarises are gone.]";

/// How a rebuilt conversation introduces the plan.
pub const PLAN_HEADER: &str = "[The current plan, from the plan store; it is complete and authoritative. Continue it with todo_write, keeping the same ids.]";

const SUMMARY_INSTRUCTION: &str = "The conversation is about to be compacted to fit the context window. \
Write a concise summary of the work so far for your own later use: the decisions made and why, \
the files read or changed, the commands that worked and those that failed (with the reason), \
what you learned about the code, and the open questions. Do not restate the plan; it is kept separately. \
Do not call tools; answer with the summary only.";

/// Tokens for `bytes` of text, by the usual four bytes a token.
pub fn tokens_of(bytes: usize) -> u64 {
    u64::try_from(bytes / 4).unwrap_or(u64::MAX)
}

pub use crate::chat::conversation::{message_bytes, messages_bytes};

/// True when the provider refused the request because the prompt is longer
/// than the model's window (each wire classifies its own errors).
pub fn is_too_long(e: &LlmError) -> bool {
    matches!(e, LlmError::ContextTooLong(_))
}

/// Cuts a tool result that alone would take more than a quarter of the
/// window to its head and tail, with a marker naming the full size.
pub fn fit_result(content: String, window: u64) -> String {
    let limit = usize::try_from(window).unwrap_or(usize::MAX); // a quarter of the window, in bytes
    if content.len() <= limit {
        return content;
    }
    cap_with(&content, limit, |total, dropped| {
        format!(
            "[… output cut to fit the context window: {total} bytes in full, {dropped} bytes not shown …]"
        )
    })
}

/// Replaces the oldest tool outputs by a one-line marker until the messages
/// take at most `target_bytes` (oldest first, so the latest stay whole as
/// long as possible). Pairs stay valid: a result is shortened, never removed.
pub fn drop_old_outputs(messages: &mut [Message], target_bytes: usize) {
    let mut total = messages_bytes(messages);
    for m in messages.iter_mut() {
        if total <= target_bytes {
            return;
        }
        for b in m.content.iter_mut() {
            if total <= target_bytes {
                return;
            }
            if let ContentBlock::ToolResult { content, .. } = b
                && !content.as_str().starts_with("[output dropped")
            {
                let marker = format!(
                    "[output dropped to fit the context window: {} bytes]",
                    content.len()
                );
                total = total.saturating_sub(content.len()) + marker.len();
                *content = marker.into();
            }
        }
    }
}

/// The plan as a compacted conversation carries it: for the model's own
/// todo tool, or (without it) as the plan the user keeps.
pub fn plan_block(plan: &crate::todo::TodoManager, tool: bool) -> String {
    if tool {
        format!("{PLAN_HEADER}\n\n{}", plan.render())
    } else {
        super::user_plan::plan_block(plan.items())
    }
}

/// The task: the first message's first text (the user's words; notes and
/// reminders follow in blocks of their own).
pub fn task_of(messages: &[Message]) -> Option<String> {
    messages
        .first()
        .and_then(Message::first_text)
        .map(str::to_string)
}

/// Rebuilds the conversation: the task, the summary, the plan (`plan`:
/// its whole block, header included, see [`plan_block`]), and the
/// longest tail of whole turns (starting at an assistant message, so each
/// `tool_use` there keeps its result) that fits in `tail_bytes`.
pub fn rebuild(
    old: &[Message],
    summary: Option<&str>,
    plan: &str,
    tail_bytes: usize,
) -> Vec<Message> {
    let task = task_of(old).unwrap_or_else(|| "(the original task was not kept)".into());
    let mut head = vec![ContentBlock::Text { text: task }];
    if let Some(summary) = summary {
        head.push(ContentBlock::Text {
            text: format!("{SUMMARY_HEADER}\n\n{summary}"),
        });
    }
    head.push(ContentBlock::Text {
        text: plan.to_string(),
    });
    let mut start = old.len();
    let mut used = 0usize;
    for i in (1..old.len()).rev() {
        used += message_bytes(&old[i]);
        if used > tail_bytes {
            break;
        }
        if old[i].role == Role::Assistant {
            start = i;
        }
    }
    let mut out = vec![Message {
        role: Role::User,
        content: head,
    }];
    out.extend_from_slice(&old[start..]);
    out
}

impl Session {
    /// Compacts the conversation (see the module docs). Never fails: when
    /// the summary cannot be had, it falls back to dropping old outputs.
    pub(super) async fn compact(
        &mut self,
        reason: CompactReason,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) {
        super::hooks::Moments(self.voice())
            .pre_compact(reason == CompactReason::User, focus.as_deref(), cancel)
            .await;
        let before = self.thread.estimate(&self.host.config);
        self.emit(Event::CompactionBegin { reason });
        let window = self.thread.window(&self.host.config);
        let window_bytes = usize::try_from(window.saturating_mul(4)).unwrap_or(usize::MAX);
        let summary_tokens = u32::try_from((window / 8).max(256)).unwrap_or(u32::MAX);
        let summary = self
            .summarise(focus, window_bytes, summary_tokens, cancel)
            .await;
        let plan = plan_block(&self.thread.plan.lock().manager, self.host.config.plan.tool);
        // What fits after compaction: about a third of the threshold, half of it the tail.
        let target = (window_bytes as f64 * self.host.config.compact_at * 0.4) as usize;
        let target = target.saturating_sub(self.thread.fixed_bytes(&self.host.config));
        let fallback = summary.is_none();
        let messages = match &summary {
            Some(summary) => rebuild(
                self.thread.conversation.messages(),
                Some(summary),
                &plan,
                target / 2,
            ),
            None => {
                let mut messages = self.thread.conversation.messages().to_vec();
                drop_old_outputs(&mut messages, target);
                if messages_bytes(&messages) > target {
                    // Still too long (long texts): keep the task, the plan and what tail fits.
                    rebuild(&messages, None, &plan, target / 2)
                } else {
                    let mut conversation = Conversation::from_messages(messages);
                    // The plan is re-sent whole in the next request (rebuild
                    // puts it in; here it follows the shortened history).
                    if conversation
                        .messages()
                        .last()
                        .is_some_and(|m| m.role == Role::User)
                    {
                        conversation.push_user_text(plan);
                    }
                    conversation.messages().to_vec()
                }
            }
        };
        let conversation = Conversation::from_messages(messages);
        let replaced = conversation.validate().is_ok();
        if replaced {
            self.thread.conversation = conversation;
        } else {
            tracing::error!("compaction built an invalid conversation; kept the old one");
        }
        self.thread.last_prompt = None;
        let after = self.thread.estimate(&self.host.config);
        self.thread.compacted_to = Some(after);
        if replaced {
            // The new conversation whole: replaying it needs nothing before it.
            let warning = self.host.transcript.record(&Record::Compaction {
                reason,
                summary: summary.as_deref().map(Cow::Borrowed),
                before_tokens: before,
                after_tokens: after,
                fallback,
                messages: Cow::Borrowed(self.thread.conversation.messages()),
                at: now_ms(),
            });
            self.host.warn_unsaved(warning);
        }
        self.emit(Event::CompactionEnd {
            before_tokens: before,
            after_tokens: after,
            fallback,
        });
        // `SessionStart` hooks see the compacted session before the next message.
        super::shared::lock(&self.thread.left).source = Some("compact");
    }

    /// Asks the model for a summary, streamed as `SummaryDelta`; `None` on
    /// error, interrupt or a summary too long to help.
    async fn summarise(
        &mut self,
        focus: Option<String>,
        window_bytes: usize,
        max_tokens: u32,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let mut instruction = SUMMARY_INSTRUCTION.to_string();
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            instruction.push_str(&format!(
                "\n\nThe user asks the summary to focus on: {focus}"
            ));
        }
        let mut asking = self.thread.conversation.clone();
        asking.push_user_text(instruction);
        let mut messages = asking.messages().to_vec();
        // The summary request itself must fit: old outputs go first.
        let room = window_bytes
            .saturating_sub(self.host.config.system_prompt.len())
            .saturating_sub(max_tokens as usize * 4)
            .saturating_mul(9)
            / 10;
        drop_old_outputs(&mut messages, room);
        if messages_bytes(&messages) > room {
            return None;
        }
        let session = self.host.transcript.id();
        let request = ModelRequest {
            system: &self.host.config.system_prompt,
            messages: &messages,
            tools: &[],
            max_tokens,
            conversation: None,
            session: Some(&session),
        };
        let events = self.host.events.clone();
        let mut on_stream = move |ev: StreamEvent| {
            if let StreamEvent::TextDelta(text) = ev {
                let _ = events.send(Event::SummaryDelta { text });
            }
        };
        let result = tokio::select! {
            r = self.thread.client.stream(&request, &mut on_stream) => r,
            _ = cancel.cancelled() => return None,
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(e) => {
                tracing::warn!(error = %e, "summary request failed; dropping old outputs instead");
                return None;
            }
        };
        // The summary was a request like any other: its tokens count.
        self.count_usage(&reply.usage);
        let text: String = reply
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.trim().to_string();
        if text.is_empty() || text.len() > window_bytes / 4 {
            return None;
        }
        Some(text)
    }
}

impl Thread {
    /// The context window: the setting, else the model's, else the default.
    pub(super) fn window(&self, config: &AgentConfig) -> u64 {
        config
            .context_window
            .filter(|w| *w > 0)
            .or_else(|| crate::models::known(self.client.model()).map(|m| m.context_window))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// The fixed part of every request: the system prompt and the tools.
    fn fixed_bytes(&self, config: &AgentConfig) -> usize {
        config.system_prompt.len() + self.offered.bytes
    }

    /// The next request's prompt tokens: the last reported ones plus a
    /// quarter of the bytes added since, and never less than bytes/4.
    pub(super) fn estimate(&self, config: &AgentConfig) -> u64 {
        let conv = self.conversation.bytes();
        let by_bytes = tokens_of(conv + self.fixed_bytes(config));
        match self.last_prompt {
            Some((tokens, at)) => by_bytes.max(tokens + tokens_of(conv.saturating_sub(at))),
            None => by_bytes,
        }
    }

    /// True when the next request would pass `compact_at` of the window
    /// and the conversation grew since the last compaction (a prompt that
    /// compaction cannot shrink, say a huge system prompt, is not compacted
    /// again every round).
    pub(super) fn over_threshold(&self, config: &AgentConfig) -> bool {
        let window = self.window(config);
        let limit = (window as f64 * config.compact_at) as u64;
        let estimate = self.estimate(config);
        let grown = self
            .compacted_to
            .is_none_or(|after| estimate > after + window / 20);
        estimate > limit && grown && self.conversation.messages().len() > 2
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rounds(n: usize, output: usize) -> Vec<Message> {
        let mut m = vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: "the task".into(),
            }],
        }];
        for i in 0..n {
            m.push(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: format!("t{i}"),
                    name: "bash".into(),
                    input: json!({"command": "ls"}).into(),
                }],
            });
            m.push(Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: format!("t{i}"),
                    content: "x".repeat(output).into(),
                    is_error: false,
                }],
            });
        }
        m
    }

    #[test]
    fn without_the_todo_tool_a_compacted_plan_is_the_users() {
        let mut plan = crate::todo::TodoManager::new();
        plan.update(&serde_json::json!([{"content": "a", "status": "pending", "activeForm": "A"}]))
            .unwrap();
        let own = plan_block(&plan, true);
        assert!(own.starts_with(PLAN_HEADER) && own.contains("todo_write"));
        let users = plan_block(&plan, false);
        assert!(users.starts_with(super::super::user_plan::PLAN_HEADER));
        assert!(!users.contains("todo_write") && users.contains("1. [ ] a"));
    }

    #[test]
    fn rebuild_keeps_task_summary_plan_and_whole_pairs() {
        let old = rounds(20, 1000);
        let out = rebuild(
            &old,
            Some("did things"),
            &format!("{PLAN_HEADER}\n\n1. [ ] a"),
            3000,
        );
        let conv = Conversation::from_messages(out.clone());
        assert_eq!(conv.validate(), Ok(()));
        let head = serde_json::to_string(&out[0]).unwrap();
        assert!(head.contains("the task") && head.contains("did things"));
        assert!(head.contains(PLAN_HEADER) && head.contains("1. [ ] a"));
        // Two whole rounds fit in 3000 bytes, the last ones.
        assert_eq!(out.len(), 1 + 4);
        assert_eq!(out.last(), old.last());
    }

    #[test]
    fn fallback_drops_oldest_outputs_first_and_keeps_pairs() {
        let mut m = rounds(10, 1000);
        drop_old_outputs(&mut m, 6000);
        assert_eq!(Conversation::from_messages(m.clone()).validate(), Ok(()));
        assert!(messages_bytes(&m) <= 6000);
        let first = serde_json::to_string(&m[2]).unwrap();
        assert!(first.contains("[output dropped to fit the context window: 1000 bytes]"));
        let last = serde_json::to_string(&m[20]).unwrap();
        assert!(!last.contains("output dropped"));
    }

    #[test]
    fn a_huge_result_is_cut_at_a_quarter_of_the_window() {
        let out = fit_result("a".repeat(50_000), 8000);
        assert!(out.len() < 8200);
        assert!(out.contains("50000 bytes in full"));
        assert_eq!(fit_result("short".into(), 8000), "short");
    }

    #[test]
    fn too_long_errors_are_recognised() {
        assert!(is_too_long(&LlmError::ContextTooLong(
            "prompt is too long: 210000 tokens > 200000 maximum".into()
        )));
        // Words alone no longer decide: the wire classifies.
        assert!(!is_too_long(&LlmError::Http {
            status: 400,
            message: "invalid x-api-key".into(),
        }));
    }
}
