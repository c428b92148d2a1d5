//! The Chat Completions request: the conversation (kept in the Anthropic
//! block shape) translated to chat messages and tools. Invariant: every
//! tool result follows the assistant message that called it, and an
//! assistant message with tool calls carries the reasoning that led to them
//! back under the field the provider sent it in (DeepSeek refuses it
//! otherwise); Anthropic thinking blocks are not sent on this wire.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::chat::Text;
use crate::chat::ToolDef;
use crate::llm::body::{Body, BodyWriter};
use crate::llm::prefix::PrefixCache;
use crate::llm::{ContentBlock, Message, ModelRequest, ReasoningField, Role};

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_details: Option<&'a crate::chat::Opaque>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a Text,
    },
}

/// A user message's content: its text, or text and images as parts.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(String),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

impl<'a> UserContent<'a> {
    /// The text alone when there is no image (as every server takes it).
    fn of(texts: &[&'a str], m: &'a Message) -> Self {
        let images: Vec<&crate::chat::ImageSource> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Image { source } => Some(source),
                _ => None,
            })
            .collect();
        if images.is_empty() {
            return UserContent::Text(texts.join("\n\n"));
        }
        let mut parts: Vec<Part<'a>> = texts.iter().map(|text| Part::Text { text }).collect();
        parts.extend(images.into_iter().map(|i| Part::ImageUrl {
            image_url: ImageUrl { url: i.data_url() },
        }));
        UserContent::Parts(parts)
    }

    fn is_empty(&self) -> bool {
        match self {
            UserContent::Text(t) => t.is_empty(),
            UserContent::Parts(p) => p.is_empty(),
        }
    }
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireCall<'a>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    name: &'a str,
    /// The input as JSON text, as the API wants it.
    arguments: String,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// Translates the content-block conversation into Chat Completions messages:
/// tool results become `tool` messages (before the user's text, so they
/// follow the assistant message that asked for them), tool uses become
/// `tool_calls` with their input as a JSON string.
/// One message's chat messages, onto `out` (each message translates on its
/// own: nothing carries from one to the next).
fn wire_message<'a>(m: &'a Message, out: &mut Vec<WireMessage<'a>>) {
    {
        let texts: Vec<&str> = m
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } if !text.is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect();
        match m.role {
            Role::User => {
                for b in &m.content {
                    if let ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } = b
                    {
                        out.push(WireMessage::Tool {
                            tool_call_id: tool_use_id,
                            content,
                        });
                    }
                }
                let content = UserContent::of(&texts, m);
                if !content.is_empty() {
                    out.push(WireMessage::User { content });
                }
            }
            Role::Assistant => {
                let tool_calls: Vec<WireToolCall<'a>> = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse { id, name, input } => Some(WireToolCall {
                            id,
                            kind: "function",
                            function: WireCall {
                                name,
                                arguments: input.to_string(),
                            },
                        }),
                        _ => None,
                    })
                    .collect();
                let content = if !texts.is_empty() {
                    Some(texts.join("\n\n"))
                } else if tool_calls.is_empty() {
                    Some(String::new())
                } else {
                    None
                };
                let (mut reasoning_content, mut reasoning, mut reasoning_details) =
                    (None, None, None);
                let kept = m.content.iter().find_map(|b| match b {
                    ContentBlock::Reasoning {
                        text,
                        field,
                        details,
                    } => Some((text.as_str(), *field, details.as_ref())),
                    _ => None,
                });
                match kept.filter(|_| !tool_calls.is_empty()) {
                    Some((text, ReasoningField::ReasoningContent, _)) => {
                        reasoning_content = Some(text)
                    }
                    Some((text, ReasoningField::Reasoning, _)) => reasoning = Some(text),
                    Some((_, ReasoningField::ReasoningDetails, details)) => {
                        reasoning_details = details
                    }
                    // The Responses wire's items mean nothing here.
                    Some((_, ReasoningField::Responses, _)) | None => {}
                }
                out.push(WireMessage::Assistant {
                    content,
                    reasoning_content,
                    reasoning,
                    reasoning_details,
                    tool_calls,
                });
            }
        }
    }
}

/// The JSON body of a streaming Chat Completions request for a server other
/// than OpenAI's own (`max_tokens`, no cache key), serialised once and
/// reused by every retry.
pub fn request_body(model: &str, req: &ModelRequest<'_>) -> serde_json::Result<Bytes> {
    let req = ModelRequest {
        conversation: None,
        ..*req
    };
    request_body_for(model, &req, None, &PrefixCache::default()).map(|b| b.to_bytes())
}

/// `cache_key`: `Some` only for OpenAI's own API, which takes
/// `max_completion_tokens` (its reasoning models refuse `max_tokens`) and a
/// `prompt_cache_key` that routes a session's requests to the same prompt
/// cache; `None` elsewhere (local servers know `max_tokens`). Written
/// straight from the typed messages, byte for byte what serialising the
/// whole body as one struct gave (the tests compare); every message but
/// the last (the only one that can still change) is written once per
/// conversation and kept in `cache`.
pub(super) fn request_body_for(
    model: &str,
    req: &ModelRequest<'_>,
    cache_key: Option<&str>,
    cache: &PrefixCache,
) -> serde_json::Result<Body> {
    #[derive(Serialize)]
    struct Tail<'a> {
        stream: bool,
        stream_options: StreamOptions,
        #[serde(skip_serializing_if = "Option::is_none")]
        max_tokens: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max_completion_tokens: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_cache_key: Option<&'a str>,
    }
    let official = cache_key.is_some();
    let mut body = BodyWriter::default();
    let out = body.buf();
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut *out, model)?;
    out.extend_from_slice(b",\"messages\":[");
    if !req.system.is_empty() {
        serde_json::to_writer(
            &mut *out,
            &WireMessage::System {
                content: req.system,
            },
        )?;
        out.push(b',');
    }
    cache.write_list(req.conversation, req.messages, &mut body, write_message)?;
    let out = body.buf();
    // Several servers refuse an empty `tools` array.
    if !req.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":");
        let tools: Vec<WireTool> = req.tools.iter().map(wire_tool).collect();
        serde_json::to_writer(&mut *out, &tools)?;
    }
    // The tail's own object, its braces dropped, after a comma.
    let tail = serde_json::to_vec(&Tail {
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        max_tokens: (!official).then_some(req.max_tokens),
        max_completion_tokens: official.then_some(req.max_tokens),
        prompt_cache_key: cache_key,
    })?;
    out.push(b',');
    out.extend_from_slice(tail.get(1..).unwrap_or_default());
    Ok(body.finish())
}

/// A message's chat messages, each followed by `,`.
fn write_message(m: &Message, out: &mut Vec<u8>) -> serde_json::Result<()> {
    let mut wire = Vec::with_capacity(2);
    wire_message(m, &mut wire);
    for w in &wire {
        serde_json::to_writer(&mut *out, w)?;
        out.push(b',');
    }
    Ok(())
}

fn wire_tool(t: &ToolDef) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireFunction {
            name: &t.name,
            description: &t.description,
            parameters: &t.input_schema,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer this module replaced: the whole body as one struct of
    /// all the chat messages. Kept to compare against.
    mod reference {
        use super::super::{
            StreamOptions, WireCall, WireMessage, WireTool, WireToolCall, wire_tool,
        };
        use crate::llm::{ContentBlock, Message, ModelRequest, ReasoningField, Role};
        use bytes::Bytes;
        use serde::Serialize;

        /// Translates the content-block conversation into Chat Completions messages:
        /// tool results become `tool` messages (before the user's text, so they
        /// follow the assistant message that asked for them), tool uses become
        /// `tool_calls` with their input as a JSON string.
        fn wire_messages<'a>(system: &'a str, messages: &'a [Message]) -> Vec<WireMessage<'a>> {
            let mut out = Vec::with_capacity(messages.len() * 2 + 1);
            if !system.is_empty() {
                out.push(WireMessage::System { content: system });
            }
            for m in messages {
                let texts: Vec<&str> = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } if !text.is_empty() => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                match m.role {
                    Role::User => {
                        for b in &m.content {
                            if let ContentBlock::ToolResult {
                                tool_use_id,
                                content,
                                ..
                            } = b
                            {
                                out.push(WireMessage::Tool {
                                    tool_call_id: tool_use_id,
                                    content,
                                });
                            }
                        }
                        if !texts.is_empty() {
                            out.push(WireMessage::User {
                                content: super::super::UserContent::Text(texts.join("\n\n")),
                            });
                        }
                    }
                    Role::Assistant => {
                        let tool_calls: Vec<WireToolCall<'a>> = m
                            .content
                            .iter()
                            .filter_map(|b| match b {
                                ContentBlock::ToolUse { id, name, input } => Some(WireToolCall {
                                    id,
                                    kind: "function",
                                    function: WireCall {
                                        name,
                                        arguments: input.to_string(),
                                    },
                                }),
                                _ => None,
                            })
                            .collect();
                        let content = if !texts.is_empty() {
                            Some(texts.join("\n\n"))
                        } else if tool_calls.is_empty() {
                            Some(String::new())
                        } else {
                            None
                        };
                        let (mut reasoning_content, mut reasoning, mut reasoning_details) =
                            (None, None, None);
                        let kept = m.content.iter().find_map(|b| match b {
                            ContentBlock::Reasoning {
                                text,
                                field,
                                details,
                            } => Some((text.as_str(), *field, details.as_ref())),
                            _ => None,
                        });
                        match kept.filter(|_| !tool_calls.is_empty()) {
                            Some((text, ReasoningField::ReasoningContent, _)) => {
                                reasoning_content = Some(text)
                            }
                            Some((text, ReasoningField::Reasoning, _)) => reasoning = Some(text),
                            Some((_, ReasoningField::ReasoningDetails, details)) => {
                                reasoning_details = details
                            }
                            Some((_, ReasoningField::Responses, _)) | None => {}
                        }
                        out.push(WireMessage::Assistant {
                            content,
                            reasoning_content,
                            reasoning,
                            reasoning_details,
                            tool_calls,
                        });
                    }
                }
            }
            out
        }

        /// The JSON body of a streaming Chat Completions request for a server other
        /// than OpenAI's own (`max_tokens`, no cache key), serialised once and
        /// reused by every retry.
        pub(super) fn request_body_ref(
            model: &str,
            req: &ModelRequest<'_>,
        ) -> serde_json::Result<Bytes> {
            request_body_for_ref(model, req, None)
        }

        /// `cache_key`: `Some` only for OpenAI's own API, which takes
        /// `max_completion_tokens` (its reasoning models refuse `max_tokens`) and a
        /// `prompt_cache_key` that routes a session's requests to the same prompt
        /// cache; `None` elsewhere (local servers know `max_tokens`).
        pub(super) fn request_body_for_ref(
            model: &str,
            req: &ModelRequest<'_>,
            cache_key: Option<&str>,
        ) -> serde_json::Result<Bytes> {
            let official = cache_key.is_some();
            #[derive(Serialize)]
            struct Body<'a> {
                model: &'a str,
                messages: Vec<WireMessage<'a>>,
                // Several servers refuse an empty `tools` array.
                #[serde(skip_serializing_if = "Vec::is_empty")]
                tools: Vec<WireTool<'a>>,
                stream: bool,
                stream_options: StreamOptions,
                #[serde(skip_serializing_if = "Option::is_none")]
                max_tokens: Option<u32>,
                #[serde(skip_serializing_if = "Option::is_none")]
                max_completion_tokens: Option<u32>,
                #[serde(skip_serializing_if = "Option::is_none")]
                prompt_cache_key: Option<&'a str>,
            }
            let body = Body {
                model,
                messages: wire_messages(req.system, req.messages),
                tools: req.tools.iter().map(wire_tool).collect(),
                stream: true,
                stream_options: StreamOptions {
                    include_usage: true,
                },
                max_tokens: (!official).then_some(req.max_tokens),
                max_completion_tokens: official.then_some(req.max_tokens),
                prompt_cache_key: cache_key,
            };
            serde_json::to_vec(&body).map(Bytes::from)
        }
    }
    use crate::llm::openai::{DEFAULT_BASE_URL, OpenAiClient, OpenAiConfig};
    use crate::llm::retry::RetryPolicy;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn the_official_api_gets_max_completion_tokens() {
        let req = ModelRequest {
            system: "s",
            messages: &[],
            tools: &[],
            max_tokens: 77,
            conversation: None,
            session: None,
        };
        let official: Value = serde_json::from_slice(
            &request_body_for("gpt-5", &req, Some("k1"), &PrefixCache::default())
                .unwrap()
                .to_bytes(),
        )
        .unwrap();
        assert_eq!(official["max_completion_tokens"], 77);
        assert_eq!(official["prompt_cache_key"], "k1");
        assert!(official.get("max_tokens").is_none());
        let local: Value = serde_json::from_slice(&request_body("qwen", &req).unwrap()).unwrap();
        assert_eq!(local["max_tokens"], 77);
        assert!(local.get("max_completion_tokens").is_none());
        assert!(local.get("prompt_cache_key").is_none());
    }

    #[test]
    fn conversation_translates_to_chat_messages() {
        let messages = vec![
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::Text {
                        text: "make notes".into(),
                    },
                    ContentBlock::Text {
                        text: "<reminder>plan first</reminder>".into(),
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Text {
                        text: "Planning.".into(),
                    },
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "write_file".into(),
                        input: json!({"path": "a.txt", "content": "x"}).into(),
                    },
                    ContentBlock::ToolUse {
                        id: "call_2".into(),
                        name: "bash".into(),
                        input: json!({"command": "ls"}).into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: "wrote a.txt".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: "Error: exit 1".into(),
                        is_error: true,
                    },
                    ContentBlock::Text {
                        text: "<reminder>update the plan</reminder>".into(),
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "call_3".into(),
                    name: "todo_read".into(),
                    input: json!({}).into(),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "call_3".into(),
                    content: "(no plan)".into(),
                    is_error: false,
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: "Done.".into(),
                }],
            },
        ];
        let tools = vec![ToolDef {
            name: "bash".into(),
            description: "Run a command.".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }];
        let req = ModelRequest {
            system: "You are Waypoint.",
            messages: &messages,
            tools: &tools,
            max_tokens: 4096,
            conversation: None,
            session: None,
        };
        let body: Value = serde_json::from_slice(&request_body("qwen", &req).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "qwen",
                "messages": [
                    {"role": "system", "content": "You are Waypoint."},
                    {"role": "user", "content": "make notes\n\n<reminder>plan first</reminder>"},
                    {"role": "assistant", "content": "Planning.", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "write_file", "arguments": "{\"content\":\"x\",\"path\":\"a.txt\"}"}},
                        {"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "wrote a.txt"},
                    {"role": "tool", "tool_call_id": "call_2", "content": "Error: exit 1"},
                    {"role": "user", "content": "<reminder>update the plan</reminder>"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_3", "type": "function", "function": {"name": "todo_read", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_3", "content": "(no plan)"},
                    {"role": "assistant", "content": "Done."}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "bash",
                    "description": "Run a command.",
                    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}
                }}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 4096
            })
        );
    }

    #[test]
    fn reasoning_goes_back_on_messages_with_tool_calls_under_its_own_field() {
        let assistant = |reasoning: ContentBlock, call: bool| {
            let mut content = vec![
                reasoning,
                ContentBlock::Thinking {
                    thinking: "anthropic only".into(),
                    signature: "sig".into(),
                },
                ContentBlock::Text { text: "ok".into() },
            ];
            if call {
                content.push(ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "bash".into(),
                    input: json!({}).into(),
                });
            }
            vec![Message {
                role: Role::Assistant,
                content,
            }]
        };
        let sent = |messages: &[Message]| -> Value {
            let req = ModelRequest {
                system: "",
                messages,
                tools: &[],
                max_tokens: 1,
                conversation: None,
                session: None,
            };
            let body: Value = serde_json::from_slice(&request_body("m", &req).unwrap()).unwrap();
            body["messages"][0].clone()
        };
        let plain = |field| ContentBlock::Reasoning {
            text: "why".into(),
            field,
            details: None,
        };
        let m = sent(&assistant(plain(ReasoningField::ReasoningContent), true));
        assert_eq!(m["reasoning_content"], "why");
        assert!(m.get("reasoning").is_none() && m.get("thinking").is_none());
        let m = sent(&assistant(plain(ReasoningField::Reasoning), true));
        assert_eq!(m["reasoning"], "why");
        assert!(m.get("reasoning_content").is_none());
        let details =
            json!([{"type": "reasoning.text", "text": "why", "signature": "s", "index": 0}]);
        let m = sent(&assistant(
            ContentBlock::Reasoning {
                text: "why".into(),
                field: ReasoningField::ReasoningDetails,
                details: Some(details.clone().into()),
            },
            true,
        ));
        assert_eq!(m["reasoning_details"], details);
        assert!(m.get("reasoning").is_none());
        let m = sent(&assistant(plain(ReasoningField::ReasoningContent), false));
        assert_eq!(m, json!({"role": "assistant", "content": "ok"}));
    }

    #[test]
    fn no_tools_means_no_tools_field_and_model_is_required() {
        let req = ModelRequest {
            system: "",
            messages: &[],
            tools: &[],
            max_tokens: 1,
            conversation: None,
            session: None,
        };
        let body: Value = serde_json::from_slice(&request_body("m", &req).unwrap()).unwrap();
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"], json!([]));
        let err = OpenAiClient::new(OpenAiConfig {
            api_key: None,
            base_url: DEFAULT_BASE_URL.into(),
            model: " ".into(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(1),
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("OPENAI_MODEL"), "{err}");
    }

    #[test]
    fn every_request_of_a_growing_conversation_is_the_reference_body_byte_for_byte() {
        use crate::chat::Conversation;
        let tools = crate::tools::definitions();
        for (system, key, tools) in [
            ("You are Waypoint.", Some("k1"), &tools[..]),
            ("", None, &[][..]),
        ] {
            let cache = PrefixCache::default();
            let (mut c, mut mirror) = (Conversation::default(), Conversation::default());
            for round in 0..60 {
                crate::llm::prefix::grow(&mut c, round);
                crate::llm::prefix::grow(&mut mirror, round);
                assert_eq!(c.messages(), mirror.messages(), "round {round}");
                let req = ModelRequest {
                    system,
                    messages: c.messages(),
                    tools,
                    max_tokens: 1024,
                    conversation: Some(c.key()),
                    session: None,
                };
                let ours = request_body_for("gpt-x", &req, key, &cache)
                    .unwrap()
                    .to_bytes();
                let theirs = reference::request_body_for_ref("gpt-x", &req, key).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&ours),
                    String::from_utf8_lossy(&theirs),
                    "round {round}"
                );
                crate::llm::prefix::keep(&cache, &mut c);
            }
            assert!(cache.kept_bytes() > 0);
            let kept = crate::llm::prefix::kept_results(c.messages()).len();
            assert!(kept >= 5, "{kept} results kept");
        }
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
}
