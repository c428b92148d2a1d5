//! The Messages request body, written straight from the typed messages.
//! Invariant: byte for byte what serialising the whole request as one
//! `serde_json::Value` tree gave (the tests keep that writer and compare),
//! with the same three breakpoints; the messages before the previous
//! user message carry no breakpoint and are the same bytes in every later
//! request, so they are written once per conversation ([`PrefixCache`])
//! and a request costs what is new in it.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::llm::body::{Body, BodyWriter};
use crate::llm::prefix::PrefixCache;
use crate::llm::{ContentBlock, Message, ModelRequest, Role};

/// The JSON body of a streaming Messages request, serialised once and
/// reused by every retry.
pub fn request_body(model: &str, req: &ModelRequest<'_>) -> serde_json::Result<Bytes> {
    request_body_with(model, req, None)
}

/// [`request_body`] with extended thinking on when `thinking_budget` is
/// given: `max_tokens` must exceed the budget, so a smaller one gets the
/// budget added (the reply keeps its own room). Reasoning blocks of the
/// Chat Completions wire are left out.
pub fn request_body_with(
    model: &str,
    req: &ModelRequest<'_>,
    thinking_budget: Option<u32>,
) -> serde_json::Result<Bytes> {
    let req = ModelRequest {
        conversation: None,
        ..*req
    };
    write_body(model, &req, thinking_budget, &PrefixCache::default()).map(|b| b.to_bytes())
}

/// [`request_body_with`], the older messages' bytes taken from (and kept
/// in) `cache` when the request names its conversation.
pub(super) fn write_body(
    model: &str,
    req: &ModelRequest<'_>,
    thinking_budget: Option<u32>,
    cache: &PrefixCache,
) -> serde_json::Result<Body> {
    #[derive(Serialize)]
    struct Thinking {
        #[serde(rename = "type")]
        kind: &'static str,
        budget_tokens: u32,
    }
    let max_tokens = match thinking_budget {
        Some(budget) if req.max_tokens <= budget => budget.saturating_add(req.max_tokens),
        _ => req.max_tokens,
    };
    let messages = req.messages;
    // The newest message, and the user message before it: the previous
    // request's moving breakpoint, so a hit never needs the lookback.
    let newest = messages.len().checked_sub(1);
    let previous_user = newest.and_then(|n| (0..n).rev().find(|&i| messages[i].role == Role::User));
    let mut body = BodyWriter::default();
    let out = body.buf();
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut *out, model)?;
    out.extend_from_slice(b",\"max_tokens\":");
    serde_json::to_writer(&mut *out, &max_tokens)?;
    let mut tools = serde_json::to_value(req.tools)?;
    if req.system.is_empty() {
        // An empty text block is refused: the tools carry the breakpoint.
        if let Some(last) = tools.as_array_mut().and_then(|t| t.last_mut()) {
            mark(last);
        }
    } else {
        let mut block = serde_json::json!({"type": "text", "text": req.system});
        mark(&mut block);
        out.extend_from_slice(b",\"system\":");
        serde_json::to_writer(&mut *out, &Value::Array(vec![block]))?;
    }
    out.extend_from_slice(b",\"messages\":[");
    let sealed = previous_user.unwrap_or(0);
    cache.write(req.conversation, messages, sealed, &mut body, |m, o| {
        write_message(m, false, o)
    })?;
    for (i, m) in messages.iter().enumerate().skip(sealed) {
        let marked = Some(i) == newest || Some(i) == previous_user;
        write_message(m, marked, body.buf())?;
    }
    body.drop_last(b',');
    let out = body.buf();
    out.extend_from_slice(b"],\"tools\":");
    serde_json::to_writer(&mut *out, &tools)?;
    out.extend_from_slice(b",\"stream\":true");
    if let Some(budget_tokens) = thinking_budget {
        out.extend_from_slice(b",\"thinking\":");
        serde_json::to_writer(
            &mut *out,
            &Thinking {
                kind: "enabled",
                budget_tokens,
            },
        )?;
    }
    out.push(b'}');
    Ok(body.finish())
}

/// One message as the API takes it (reasoning of the other wire left
/// out) and a `,`, with a breakpoint on its last cacheable block when `marked`. It
/// goes through a `Value` so its keys come out in the order they always
/// did; a message is written once, so this costs what the message costs.
fn write_message(m: &Message, marked: bool, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let foreign = |b: &ContentBlock| matches!(b, ContentBlock::Reasoning { .. });
    let mut value = if m.content.iter().any(foreign) {
        serde_json::to_value(Message {
            role: m.role,
            content: m.content.iter().filter(|b| !foreign(b)).cloned().collect(),
        })?
    } else {
        serde_json::to_value(m)?
    };
    if marked
        && let Some(block) = value
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|blocks| blocks.iter_mut().rev().find(|b| cacheable(b)))
    {
        mark(block);
    }
    serde_json::to_writer(&mut *out, &value)?;
    out.push(b',');
    Ok(())
}

/// Puts an ephemeral cache breakpoint on a block (a JSON object).
fn mark(block: &mut Value) {
    if let Some(obj) = block.as_object_mut() {
        obj.insert(
            "cache_control".into(),
            serde_json::json!({"type": "ephemeral"}),
        );
    }
}

/// Whether a content block may carry `cache_control` (thinking blocks may
/// not, nor empty text).
fn cacheable(block: &Value) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some("thinking" | "redacted_thinking") => false,
        Some("text") => block
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.is_empty()),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Conversation;
    use crate::chat::ToolDef;

    /// The writer this module replaced: the whole request as one `Value`
    /// tree, breakpoints put in the tree. Kept to compare against.
    mod reference {
        use crate::llm::{ContentBlock, Message, ModelRequest};
        use bytes::Bytes;
        use serde::Serialize;
        use serde_json::Value;

        /// The JSON body of a streaming Messages request, serialised once and
        /// reused by every retry.
        pub(super) fn request_body_ref(
            model: &str,
            req: &ModelRequest<'_>,
        ) -> serde_json::Result<Bytes> {
            request_body_with_ref(model, req, None)
        }

        /// [`request_body`] with extended thinking on when `thinking_budget` is
        /// given: `max_tokens` must exceed the budget, so a smaller one gets the
        /// budget added (the reply keeps its own room). Reasoning blocks of the
        /// Chat Completions wire are left out.
        pub(super) fn request_body_with_ref(
            model: &str,
            req: &ModelRequest<'_>,
            thinking_budget: Option<u32>,
        ) -> serde_json::Result<Bytes> {
            #[derive(Serialize)]
            struct Thinking {
                #[serde(rename = "type")]
                kind: &'static str,
                budget_tokens: u32,
            }
            #[derive(Serialize)]
            struct Body<'a> {
                model: &'a str,
                max_tokens: u32,
                #[serde(skip_serializing_if = "Option::is_none")]
                system: Option<Value>,
                messages: Value,
                tools: Value,
                stream: bool,
                #[serde(skip_serializing_if = "Option::is_none")]
                thinking: Option<Thinking>,
            }
            let foreign = |b: &ContentBlock| matches!(b, ContentBlock::Reasoning { .. });
            let messages = if req.messages.iter().any(|m| m.content.iter().any(foreign)) {
                let kept = req.messages.iter().map(|m| Message {
                    role: m.role,
                    content: m.content.iter().filter(|b| !foreign(b)).cloned().collect(),
                });
                std::borrow::Cow::Owned(kept.collect())
            } else {
                std::borrow::Cow::Borrowed(req.messages)
            };
            let max_tokens = match thinking_budget {
                Some(budget) if req.max_tokens <= budget => budget.saturating_add(req.max_tokens),
                _ => req.max_tokens,
            };
            let mut tools = serde_json::to_value(req.tools)?;
            let mut messages = serde_json::to_value(&*messages)?;
            let system = if req.system.is_empty() {
                // An empty text block is refused: the tools carry the breakpoint.
                if let Some(last) = tools.as_array_mut().and_then(|t| t.last_mut()) {
                    mark(last);
                }
                None
            } else {
                let mut block = serde_json::json!({"type": "text", "text": req.system});
                mark(&mut block);
                Some(Value::Array(vec![block]))
            };
            if let Some(list) = messages.as_array_mut() {
                // The newest message, and the user message before it: the previous
                // request's moving breakpoint, so a hit never needs the lookback.
                let newest = list.len().checked_sub(1);
                let previous_user = newest.and_then(|n| {
                    (0..n)
                        .rev()
                        .find(|&i| list[i].get("role").and_then(Value::as_str) == Some("user"))
                });
                for i in [previous_user, newest].into_iter().flatten() {
                    if let Some(block) = list[i]
                        .get_mut("content")
                        .and_then(Value::as_array_mut)
                        .and_then(|blocks| blocks.iter_mut().rev().find(|b| cacheable(b)))
                    {
                        mark(block);
                    }
                }
            }
            let body = Body {
                model,
                max_tokens,
                system,
                messages,
                tools,
                stream: true,
                thinking: thinking_budget.map(|budget_tokens| Thinking {
                    kind: "enabled",
                    budget_tokens,
                }),
            };
            serde_json::to_vec(&body).map(Bytes::from)
        }

        /// Puts an ephemeral cache breakpoint on a block (a JSON object).
        fn mark(block: &mut Value) {
            if let Some(obj) = block.as_object_mut() {
                obj.insert(
                    "cache_control".into(),
                    serde_json::json!({"type": "ephemeral"}),
                );
            }
        }

        /// Whether a content block may carry `cache_control` (thinking blocks may
        /// not, nor empty text).
        fn cacheable(block: &Value) -> bool {
            match block.get("type").and_then(Value::as_str) {
                Some("thinking" | "redacted_thinking") => false,
                Some("text") => block
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty()),
                _ => true,
            }
        }
    }

    fn tools() -> Vec<ToolDef> {
        crate::tools::definitions()
    }

    #[test]
    fn every_request_of_a_growing_conversation_is_the_reference_body_byte_for_byte() {
        let tools = tools();
        for (system, budget) in [("You are Waypoint.", None), ("", Some(2048))] {
            let cache = PrefixCache::default();
            let (mut c, mut mirror) = (Conversation::default(), Conversation::default());
            for round in 0..60 {
                crate::llm::prefix::grow(&mut c, round);
                crate::llm::prefix::grow(&mut mirror, round);
                // Results read from the kept bytes are the same messages.
                assert_eq!(c.messages(), mirror.messages(), "round {round}");
                let req = ModelRequest {
                    system,
                    messages: c.messages(),
                    tools: &tools,
                    max_tokens: 1024,
                    conversation: Some(c.key()),
                    session: None,
                };
                let ours = write_body("claude-x", &req, budget, &cache)
                    .unwrap()
                    .to_bytes();
                let theirs = reference::request_body_with_ref("claude-x", &req, budget).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&ours),
                    String::from_utf8_lossy(&theirs),
                    "round {round}"
                );
                let fresh = request_body_with("claude-x", &req, budget).unwrap();
                assert_eq!(ours, fresh, "round {round}");
                crate::llm::prefix::keep(&cache, &mut c);
            }
            // What is kept is the sealed prefix only, not the whole body.
            assert!(cache.kept_bytes() > 0);
            let kept = crate::llm::prefix::kept_results(c.messages()).len();
            assert!(kept >= 5, "{kept} results kept");
        }
        // No tools, no messages.
        let req = ModelRequest {
            system: "",
            messages: &[],
            tools: &[],
            max_tokens: 5,
            conversation: None,
            session: None,
        };
        assert_eq!(
            request_body("m", &req).unwrap(),
            reference::request_body_ref("m", &req).unwrap()
        );
    }

    #[test]
    fn a_compacted_conversation_is_written_from_its_own_messages() {
        let tools = tools();
        let cache = PrefixCache::default();
        let mut c = Conversation::default();
        for round in 0..20 {
            crate::llm::prefix::grow(&mut c, round);
        }
        let req = |c: &Conversation| {
            write_body(
                "m",
                &ModelRequest {
                    system: "s",
                    messages: c.messages(),
                    tools: &tools,
                    max_tokens: 9,
                    conversation: Some(c.key()),
                    session: None,
                },
                None,
                &cache,
            )
            .unwrap()
            .to_bytes()
        };
        req(&c);
        // Compaction replaces the conversation: same length, other words.
        let mut summary = Conversation::default();
        summary.push_user_text("Summary of the work so far.");
        for round in 1..c.messages().len() {
            crate::llm::prefix::grow(&mut summary, round);
        }
        drop(c);
        let body = req(&summary);
        let expected = reference::request_body_ref(
            "m",
            &ModelRequest {
                system: "s",
                messages: summary.messages(),
                tools: &tools,
                max_tokens: 9,
                conversation: None,
                session: None,
            },
        )
        .unwrap();
        assert_eq!(body, expected);
    }
}
