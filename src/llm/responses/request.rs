//! The Responses request: the conversation (kept in the Anthropic block
//! shape) translated to typed input items. Invariant: an assistant message
//! written by this wire goes back as the output items it came as, in their
//! order (each reasoning item whole, with its `encrypted_content`; each
//! function call with its item id and `call_id`), and every
//! `function_call_output` follows the call it answers; reasoning of the
//! other wires is not sent here.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::chat::Text;
use crate::chat::ToolDef;
use crate::llm::body::{Body, BodyWriter};
use crate::llm::prefix::PrefixCache;
use crate::llm::{ContentBlock, Message, ModelRequest, ReasoningField, Role};

/// What a request says besides the conversation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Options<'a> {
    pub model: &'a str,
    /// `prompt_cache_key`: the session's id.
    pub cache_key: &'a str,
    /// The model reasons: ask for its encrypted reasoning.
    pub reasoning: bool,
    /// And for summaries of it (shown dimmed).
    pub summaries: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Vec<Part<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Cow<'a, str>>,
    },
    FunctionCall {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Cow<'a, str>>,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a Text,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText { text: &'a str },
    OutputText { text: &'a str },
    InputImage { image_url: String },
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct Reasoning {
    summary: &'static str,
}

/// The JSON body of a streaming Responses request, written straight from
/// the typed items; every message but the last is written once per
/// conversation and kept in `cache` (see [`PrefixCache`]).
pub(super) fn request_body(
    opts: Options<'_>,
    req: &ModelRequest<'_>,
    cache: &PrefixCache,
) -> serde_json::Result<Body> {
    #[derive(Serialize)]
    struct Tail<'a> {
        tool_choice: &'static str,
        parallel_tool_calls: bool,
        stream: bool,
        store: bool,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        include: &'static [&'static str],
        prompt_cache_key: &'a str,
        max_output_tokens: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
    }
    let mut body = BodyWriter::default();
    let out = body.buf();
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut *out, opts.model)?;
    if !req.system.is_empty() {
        out.extend_from_slice(b",\"instructions\":");
        serde_json::to_writer(&mut *out, req.system)?;
    }
    out.extend_from_slice(b",\"input\":[");
    cache.write_list(req.conversation, req.messages, &mut body, write_message)?;
    let out = body.buf();
    if !req.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":");
        let tools: Vec<WireTool> = req.tools.iter().map(wire_tool).collect();
        serde_json::to_writer(&mut *out, &tools)?;
    }
    let tail = serde_json::to_vec(&Tail {
        tool_choice: "auto",
        parallel_tool_calls: true,
        stream: true,
        store: false,
        include: if opts.reasoning {
            &["reasoning.encrypted_content"]
        } else {
            &[]
        },
        prompt_cache_key: opts.cache_key,
        max_output_tokens: req.max_tokens,
        reasoning: (opts.reasoning && opts.summaries).then_some(Reasoning { summary: "auto" }),
    })?;
    out.push(b',');
    out.extend_from_slice(tail.get(1..).unwrap_or_default());
    Ok(body.finish())
}

/// A message's input items, each followed by `,`.
fn write_message(m: &Message, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let mut put = |item: &Out<'_>| -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, item)?;
        out.push(b',');
        Ok(())
    };
    match m.role {
        Role::User => {
            for b in &m.content {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } = b
                {
                    put(&Out::Item(Item::FunctionCallOutput {
                        call_id: tool_use_id,
                        output: content,
                    }))?;
                }
            }
            let texts = texts(m);
            let mut content = Vec::new();
            if !texts.is_empty() {
                content.push(Part::InputText { text: &texts });
            }
            content.extend(m.content.iter().filter_map(|b| match b {
                ContentBlock::Image { source } => Some(Part::InputImage {
                    image_url: source.data_url(),
                }),
                _ => None,
            }));
            if !content.is_empty() {
                put(&Out::Item(Item::Message {
                    role: "user",
                    content,
                    id: None,
                }))?;
            }
        }
        Role::Assistant => {
            for item in assistant_items(m) {
                put(&item)?;
            }
        }
    }
    Ok(())
}

/// The text blocks of a message, joined by a blank line.
fn texts(m: &Message) -> String {
    let texts: Vec<&str> = m
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n\n")
}

/// One input item: an output item kept verbatim, or one written.
#[derive(Serialize)]
#[serde(untagged)]
enum Out<'a> {
    Kept(&'a RawValue),
    Item(Item<'a>),
}

/// What the writer reads of a kept output item.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
}

/// An assistant message's items: in the order its reply's items came
/// (the `Responses` block), reasoning whole; then any text or call that
/// block does not name (a message from another wire, a reply without it).
fn assistant_items(m: &Message) -> Vec<Out<'_>> {
    let order: Vec<&RawValue> = m
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Reasoning {
                field: ReasoningField::Responses,
                details: Some(items),
                ..
            } => serde_json::from_str(items.get()).ok(),
            _ => None,
        })
        .unwrap_or_default();
    let calls: Vec<(&str, &str, &str)> = m
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => {
                Some((id.as_str(), name.as_str(), input.as_str()))
            }
            _ => None,
        })
        .collect();
    let text = m.content.iter().find_map(|b| match b {
        ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    });
    let mut out = Vec::with_capacity(order.len() + calls.len() + 1);
    let mut calls_sent = vec![false; calls.len()];
    let mut text_sent = false;
    for item in order {
        let Ok(head) = serde_json::from_str::<Head<'_>>(item.get()) else {
            continue;
        };
        match head.kind.as_deref() {
            Some("reasoning") => out.push(Out::Kept(item)),
            Some("function_call") => {
                let Some(i) = calls
                    .iter()
                    .position(|c| Some(c.0) == head.call_id.as_deref())
                else {
                    continue;
                };
                if calls_sent[i] {
                    continue;
                }
                calls_sent[i] = true;
                let (call_id, name, arguments) = calls[i];
                out.push(Out::Item(Item::FunctionCall {
                    id: head.id,
                    call_id,
                    name,
                    arguments,
                }));
            }
            Some("message") if !text_sent => {
                if let Some(text) = text {
                    text_sent = true;
                    out.push(Out::Item(Item::Message {
                        role: "assistant",
                        content: vec![Part::OutputText { text }],
                        id: head.id,
                    }));
                }
            }
            _ => {}
        }
    }
    if !text_sent && let Some(text) = text {
        // Before the calls, as the other wires' replies hold it.
        let at = out
            .iter()
            .position(|o| matches!(o, Out::Item(Item::FunctionCall { .. })))
            .unwrap_or(out.len());
        out.insert(
            at,
            Out::Item(Item::Message {
                role: "assistant",
                content: vec![Part::OutputText { text }],
                id: None,
            }),
        );
    }
    for (i, (call_id, name, arguments)) in calls.into_iter().enumerate() {
        if !calls_sent[i] {
            out.push(Out::Item(Item::FunctionCall {
                id: None,
                call_id,
                name,
                arguments,
            }));
        }
    }
    // A reasoning item goes back only with the item that followed it (the
    // API refuses one without): one of the reply's own, with its id; a
    // reply that said nothing (or only the placeholder text) keeps none.
    let mut followed = false;
    for i in (0..out.len()).rev() {
        match &out[i] {
            Out::Kept(_) if !followed => {
                out.remove(i);
            }
            Out::Kept(_) => {}
            Out::Item(Item::FunctionCall { id, .. } | Item::Message { id, .. }) => {
                followed = id.is_some();
            }
            Out::Item(_) => followed = false,
        }
    }
    out
}

fn wire_tool(t: &ToolDef) -> WireTool<'_> {
    WireTool {
        kind: "function",
        name: &t.name,
        description: &t.description,
        parameters: &t.input_schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Conversation;
    use serde_json::json;

    fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    fn body(
        messages: &[Message],
        conversation: Option<&crate::chat::ConversationKey>,
        cache: &PrefixCache,
    ) -> Value {
        let req = ModelRequest {
            system: "sys",
            messages,
            tools: &[],
            max_tokens: 100,
            conversation,
            session: Some("s-1"),
        };
        let opts = Options {
            model: "gpt-5-codex",
            cache_key: "s-1",
            reasoning: true,
            summaries: true,
        };
        let bytes = request_body(opts, &req, cache).unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn reasoning(n: usize) -> Value {
        json!({"id": format!("rs_{n}"), "type": "reasoning", "encrypted_content": format!("enc{n}"), "summary": []})
    }

    /// A reply of this wire goes back in its own order with its ids; the
    /// other wires' reasoning is left out; a reasoning item with nothing
    /// after it (a reply that said nothing) is not sent.
    #[test]
    fn items_go_back_in_the_order_they_came() {
        let assistant = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Reasoning {
                    text: "thinking".into(),
                    field: ReasoningField::Responses,
                    details: Some(
                        json!([
                            reasoning(1),
                            {"type": "function_call", "id": "fc_1", "call_id": "call_1"},
                            reasoning(2),
                            {"type": "message", "id": "msg_1"},
                        ])
                        .into(),
                    ),
                },
                ContentBlock::Text {
                    text: "Done.".into(),
                },
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "bash".into(),
                    input: json!({"command": "ls"}).into(),
                },
            ],
        };
        let result = Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: "a b".into(),
                is_error: false,
            }],
        };
        let foreign = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Reasoning {
                    text: "deepseek thought".into(),
                    field: ReasoningField::ReasoningContent,
                    details: None,
                },
                ContentBlock::Text { text: "Hi.".into() },
            ],
        };
        let silent = Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Reasoning {
                text: String::new(),
                field: ReasoningField::Responses,
                details: Some(json!([reasoning(3)]).into()),
            }],
        };
        let placeholder = Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Reasoning {
                    text: String::new(),
                    field: ReasoningField::Responses,
                    details: Some(json!([reasoning(4)]).into()),
                },
                ContentBlock::Text {
                    text: "(no reply)".into(),
                },
            ],
        };
        let messages = [
            user("go"),
            assistant,
            result,
            foreign,
            user("again"),
            silent,
            user("more"),
            placeholder,
            user("last"),
        ];
        let b = body(&messages, None, &PrefixCache::default());
        assert_eq!(
            b["input"],
            json!([
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                reasoning(1),
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"},
                reasoning(2),
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}], "id": "msg_1"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi."}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "again"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "(no reply)"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "last"}]},
            ])
        );
        assert_eq!(b["instructions"], "sys");
        assert_eq!(b["store"], false);
        assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(b["prompt_cache_key"], "s-1");
        assert_eq!(b["reasoning"], json!({"summary": "auto"}));
        assert_eq!(b["max_output_tokens"], 100);
    }

    /// The kept bytes of older messages give the same body as writing it
    /// all afresh, round after round.
    #[test]
    fn kept_prefix_gives_the_same_body() {
        let mut c = Conversation::default();
        let cache = PrefixCache::default();
        c.push_user_text("start");
        for round in 0..40 {
            c.push_assistant(vec![
                ContentBlock::Reasoning {
                    text: String::new(),
                    field: ReasoningField::Responses,
                    details: Some(json!([reasoning(round), {"type": "function_call", "id": format!("fc_{round}"), "call_id": format!("call_{round}")}]).into()),
                },
                ContentBlock::ToolUse {
                    id: format!("call_{round}"),
                    name: "bash".into(),
                    input: json!({"command": format!("echo {round}")}).into(),
                },
            ]);
            let out = format!("{round} {}", "out ".repeat(40));
            c.push_tool_results(
                vec![ContentBlock::ToolResult {
                    tool_use_id: format!("call_{round}"),
                    content: out.into(),
                    is_error: false,
                }],
                vec![],
            );
            let kept = body(c.messages(), Some(c.key()), &cache);
            let fresh = body(c.messages(), None, &PrefixCache::default());
            assert_eq!(kept, fresh, "round {round}");
        }
    }
}
