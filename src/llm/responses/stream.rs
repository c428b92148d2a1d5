//! Assembling a Responses stream into one reply: output items as they are
//! added and done, text and reasoning summary deltas, function call
//! arguments, usage, and the ways a response fails. Invariant: a reply is
//! returned only after `response.completed` (or `response.incomplete`);
//! its output items are kept in `output_index` order, each reasoning item
//! whole as the server sent it.

use serde::Deserialize;
use serde_json::Value;

use crate::llm::cached_usage;
use crate::llm::http::{Assemble, Failure};
use crate::llm::openai::stream::{parse_arguments, stream_error, unique_ids};
use crate::llm::sse::SseEvent;
use crate::llm::{
    AssistantReply, ContentBlock, LlmError, ReasoningField, StopReason, StreamEvent, Usage,
};

/// Most output items accepted in one response; more means a broken stream.
const MAX_ITEMS: usize = 1024;

/// One output item being streamed.
struct Partial {
    index: u64,
    /// The item as `output_item.done` gave it (`added`'s until then).
    item: Value,
    /// Function call arguments or message text, as streamed.
    streamed: String,
}

/// Builds one assistant message from Responses events.
#[derive(Default)]
pub(super) struct Assembler {
    items: Vec<Partial>,
    /// Reasoning summary text shown so far.
    reasoning: String,
    /// The summary part the last summary delta belonged to.
    summary_at: Option<(u64, u64)>,
    usage: Usage,
    /// `response.completed` or `response.incomplete` arrived.
    pub(super) done: bool,
    /// Why an incomplete response stopped.
    incomplete: Option<String>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    /// `chat.completion.chunk` on a server that answered on the other wire.
    #[serde(default)]
    object: Option<String>,
}

impl Assembler {
    pub(super) fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let malformed = |e: serde_json::Error| {
            let raw: String = data.chars().take(120).collect();
            Failure::retry(
                format!("malformed event from the server ({e}): {raw}"),
                None,
            )
        };
        let env: Envelope = serde_json::from_str(data).map_err(malformed)?;
        if env.kind.is_empty() && env.object.as_deref() == Some("chat.completion.chunk") {
            return Err(Failure::Fatal(LlmError::Api(
                "the server streams Chat Completions chunks, not Responses API events: \
                 set `wire = \"chat\"` (or `--wire chat`) for this model"
                    .into(),
            )));
        }
        // The event's own `type` names it; the SSE `event:` line repeats it.
        let kind = if env.kind.is_empty() {
            ev.event.as_str()
        } else {
            env.kind.as_str()
        };
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                let done = kind.ends_with("done");
                self.on_item(env.output_index, env.item, done)?;
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(Value::String(piece)) = &env.delta
                    && !piece.is_empty()
                {
                    self.text_at(env.output_index, env.item_id.as_deref())?
                        .streamed
                        .push_str(piece);
                    on_event(StreamEvent::TextDelta(piece.clone()));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(Value::String(piece)) = &env.delta {
                    let part = (
                        env.output_index.unwrap_or(0),
                        env.summary_index.unwrap_or(0),
                    );
                    let mut shown = String::new();
                    if self.summary_at.is_some_and(|at| at != part) && !self.reasoning.is_empty() {
                        shown.push_str("\n\n");
                    }
                    self.summary_at = Some(part);
                    shown.push_str(piece);
                    if !piece.is_empty() {
                        self.reasoning.push_str(&shown);
                        on_event(StreamEvent::ReasoningDelta(shown));
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Value::String(piece)) = &env.delta
                    && let Some(p) = self.find(env.output_index, env.item_id.as_deref())
                {
                    p.streamed.push_str(piece);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(args) = env.arguments
                    && let Some(p) = self.find(env.output_index, env.item_id.as_deref())
                {
                    p.streamed = args;
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = env.response.unwrap_or(Value::Null);
                if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
                    self.on_usage(u);
                }
                if kind == "response.incomplete" {
                    let reason = response
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .unwrap_or("incomplete");
                    self.incomplete = Some(reason.to_string());
                }
                self.done = true;
            }
            "response.failed" => {
                let response = env.response.unwrap_or(Value::Null);
                let error = response.get("error").cloned().unwrap_or(Value::Null);
                return Err(if error.is_null() {
                    Failure::retry("the response failed without a reason", None)
                } else {
                    stream_error(&error)
                });
            }
            "error" => {
                let whole: Value = serde_json::from_str(data).map_err(malformed)?;
                let error = whole.get("error").cloned().unwrap_or(whole);
                return Err(stream_error(&error));
            }
            _ => {}
        }
        Ok(())
    }

    /// The item at `index` (else the one with id `id`).
    fn find(&mut self, index: Option<u64>, id: Option<&str>) -> Option<&mut Partial> {
        let at = match index {
            Some(i) => self.items.iter().rposition(|p| p.index == i),
            None => None,
        }
        .or_else(|| {
            let id = id?;
            self.items
                .iter()
                .rposition(|p| p.item.get("id").and_then(Value::as_str) == Some(id))
        })?;
        self.items.get_mut(at)
    }

    /// The message item text at `index` (or `id`) goes to: a server that
    /// streams text without announcing its item gets one made for it, so
    /// no text shown is missing from the reply.
    fn text_at(&mut self, index: Option<u64>, id: Option<&str>) -> Result<&mut Partial, Failure> {
        if self.find(index, id).is_none() {
            let mut item = serde_json::Map::new();
            item.insert("type".into(), "message".into());
            if let Some(id) = id {
                item.insert("id".into(), id.into());
            }
            let at = index.unwrap_or(self.items.len() as u64);
            self.on_item(Some(at), Some(Value::Object(item)), false)?;
            return self
                .find(Some(at), None)
                .ok_or_else(|| Failure::retry("a text delta with nowhere to go", None));
        }
        self.find(index, id)
            .ok_or_else(|| Failure::retry("a text delta with nowhere to go", None))
    }

    /// An item added (a new slot) or done (its final form).
    fn on_item(
        &mut self,
        index: Option<u64>,
        item: Option<Value>,
        done: bool,
    ) -> Result<(), Failure> {
        let Some(item) = item.filter(Value::is_object) else {
            return Ok(());
        };
        let id = item.get("id").and_then(Value::as_str).map(str::to_owned);
        let index = index.unwrap_or(self.items.len() as u64);
        if let Some(p) = self.find(Some(index), id.as_deref()) {
            if done {
                p.item = item;
            }
            return Ok(());
        }
        if self.items.len() >= MAX_ITEMS {
            return Err(Failure::retry(
                format!("more than {MAX_ITEMS} output items in one response"),
                None,
            ));
        }
        self.items.push(Partial {
            index,
            item,
            streamed: String::new(),
        });
        Ok(())
    }

    /// Usage: the input split into the cached part and the rest.
    fn on_usage(&mut self, u: &Value) {
        let counted = cached_usage(u, "input_tokens", "output_tokens", "input_tokens_details");
        if let Some(usage) = counted {
            self.usage = usage;
        }
    }

    pub(super) fn finish(mut self) -> AssistantReply {
        self.items.sort_by_key(|p| p.index);
        let mut order = Vec::with_capacity(self.items.len());
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut invalid_inputs = Vec::new();
        let mut reasoning_seen = String::new();
        for p in self.items {
            let str_of = |k: &str| p.item.get(k).and_then(Value::as_str).map(str::to_owned);
            match str_of("type").as_deref() {
                Some("reasoning") => {
                    for part in p
                        .item
                        .get("summary")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            if !reasoning_seen.is_empty() {
                                reasoning_seen.push_str("\n\n");
                            }
                            reasoning_seen.push_str(t);
                        }
                    }
                    order.push(p.item);
                }
                Some("function_call") => {
                    let call_id = str_of("call_id")
                        .or_else(|| str_of("id"))
                        .unwrap_or_default();
                    let name = str_of("name").unwrap_or_default();
                    let raw = str_of("arguments")
                        .filter(|a| !a.is_empty())
                        .unwrap_or(p.streamed);
                    let input = parse_arguments(&raw).unwrap_or_else(|reason| {
                        invalid_inputs.push((call_id.clone(), reason));
                        Value::Object(Default::default())
                    });
                    let mut stub = serde_json::Map::new();
                    stub.insert("type".into(), "function_call".into());
                    if let Some(id) = str_of("id") {
                        stub.insert("id".into(), id.into());
                    }
                    stub.insert("call_id".into(), call_id.clone().into());
                    order.push(Value::Object(stub));
                    calls.push(ContentBlock::ToolUse {
                        id: call_id,
                        name,
                        input: input.into(),
                    });
                }
                Some("message") => {
                    let said = if p.streamed.is_empty() {
                        message_text(&p.item)
                    } else {
                        p.streamed
                    };
                    if !text.is_empty() && !said.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(&said);
                    let mut stub = serde_json::Map::new();
                    stub.insert("type".into(), "message".into());
                    if let Some(id) = str_of("id") {
                        stub.insert("id".into(), id.into());
                    }
                    order.push(Value::Object(stub));
                }
                _ => {}
            }
        }
        let mut content = Vec::with_capacity(2 + calls.len());
        if !order.is_empty() {
            // The streamed summary when there was one; else the done items'.
            let shown = if self.reasoning.is_empty() {
                reasoning_seen
            } else {
                self.reasoning
            };
            content.push(ContentBlock::Reasoning {
                text: shown,
                field: ReasoningField::Responses,
                details: Some(Value::Array(order).into()),
            });
        }
        if !text.trim().is_empty() {
            content.push(ContentBlock::Text { text });
        }
        let has_calls = !calls.is_empty();
        content.extend(calls);
        let stop_reason = match self.incomplete.as_deref() {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
            None if has_calls => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        AssistantReply {
            content: unique_ids(content),
            stop_reason,
            usage: self.usage,
            invalid_inputs,
        }
    }
}

impl Assemble for Assembler {
    fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        Assembler::on_event(self, ev, on_event)
    }
    fn done(&self) -> bool {
        self.done
    }
    fn finish(self) -> Result<AssistantReply, Failure> {
        Ok(Assembler::finish(self))
    }
}

/// The text parts of a done `message` item, joined.
fn message_text(item: &Value) -> String {
    item.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("output_text") => part.get("text").and_then(Value::as_str),
            Some("refusal") => part.get("refusal").and_then(Value::as_str),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CALL: &[u8] =
        include_bytes!("../../../tests/fixtures/streams/responses_reasoning_function_call.sse");
    const TEXT: &[u8] = include_bytes!("../../../tests/fixtures/streams/responses_text.sse");

    /// Replays recorded bytes fed in `pieces` through the SSE decoder and
    /// the assembler, as the client does.
    fn replay(pieces: &[&[u8]]) -> (AssistantReply, String) {
        let mut decoder = crate::llm::sse::SseDecoder::new();
        let mut asm = Assembler::default();
        let mut reasoning = String::new();
        let mut sink = |e: StreamEvent| {
            if let StreamEvent::ReasoningDelta(t) = e {
                reasoning.push_str(&t);
            }
        };
        let mut events = Vec::new();
        for p in pieces {
            events.extend(decoder.feed(p));
        }
        events.extend(decoder.finish());
        for ev in &events {
            assert!(asm.on_event(ev, &mut sink).is_ok(), "event {ev:?}");
            if asm.done {
                break;
            }
        }
        assert!(asm.done, "the stream completed");
        (asm.finish(), reasoning)
    }

    /// A server that answers this wire with Chat Completions chunks (a
    /// gateway without the Responses API): the first chunk says so, and
    /// names the setting, instead of a stream "cut" and retried.
    #[test]
    fn chat_completion_chunks_name_the_wire_setting() {
        let recorded =
            include_bytes!("../../../tests/fixtures/streams/vercel_gemini3_parallel_calls.sse");
        let mut decoder = crate::llm::sse::SseDecoder::new();
        let events = decoder.feed(recorded);
        let mut asm = Assembler::default();
        let Err(err) = asm.on_event(&events[0], &mut |_| {}) else {
            panic!("refused");
        };
        let Failure::Fatal(LlmError::Api(message)) = err else {
            panic!("a fatal API error");
        };
        assert!(message.contains("wire = \"chat\""), "{message}");
    }

    fn check_call(reply: &AssistantReply) {
        let [
            ContentBlock::Reasoning {
                text,
                field: ReasoningField::Responses,
                details: Some(items),
            },
            ContentBlock::ToolUse { id, name, input },
        ] = reply.content.as_slice()
        else {
            panic!("reasoning then the call: {:?}", reply.content);
        };
        let items = items.value();
        let items = items.as_array().map(Vec::as_slice).unwrap_or_default();
        assert!(text.starts_with("**Calculating step-by-step using calculator**"));
        assert_eq!(items.len(), 2);
        assert_eq!(items[0]["type"], "reasoning");
        // The item as done, not as added (their encrypted contents differ).
        assert_eq!(
            items[0]["encrypted_content"].as_str().map(str::len),
            Some(1060)
        );
        assert_eq!(
            items[1],
            json!({"type": "function_call", "id": "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f", "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn"})
        );
        assert_eq!(id, "call_AB6AaRZ1FYZB2RwS6A5vbdqn");
        assert_eq!(name, "calculator");
        assert_eq!(input.value(), json!({"a": 12, "b": 7, "op": "add"}));
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert_eq!(reply.usage.input_tokens, 134);
        assert_eq!(reply.usage.output_tokens, 28);
    }

    #[test]
    fn a_recorded_reasoning_call_assembles_at_every_split() {
        let bytes: Vec<&[u8]> = CALL.chunks(1).collect();
        let (reply, shown) = replay(&bytes);
        check_call(&reply);
        // The streamed summary is what the reply keeps.
        assert!(
            matches!(&reply.content[0], ContentBlock::Reasoning { text, .. } if *text == shown)
        );
        for cut in (0..=CALL.len()).step_by(13) {
            check_call(&replay(&[&CALL[..cut], &CALL[cut..]]).0);
        }
    }

    #[test]
    fn a_recorded_text_answer_assembles_at_every_split() {
        for cut in 0..=TEXT.len() {
            let (reply, shown) = replay(&[&TEXT[..cut], &TEXT[cut..]]);
            assert_eq!(shown, "");
            let [
                ContentBlock::Reasoning {
                    details: Some(items),
                    ..
                },
                ContentBlock::Text { text },
            ] = reply.content.as_slice()
            else {
                panic!("reasoning then text: {:?}", reply.content);
            };
            let items = items.value();
            assert_eq!(text, "Paris.");
            assert_eq!(items[0]["type"], "reasoning");
            assert_eq!(items[1]["type"], "message");
            assert_eq!(reply.stop_reason, StopReason::EndTurn);
            assert_eq!(
                (reply.usage.input_tokens, reply.usage.output_tokens),
                (13, 59)
            );
        }
    }

    /// A server that streams text without an `output_item.added` (some
    /// compatible servers): the text is still the reply's.
    #[test]
    fn text_without_its_item_is_kept() {
        let ev = |data: Value| crate::llm::sse::SseEvent {
            event: String::new(),
            data: data.to_string(),
        };
        let mut asm = Assembler::default();
        let mut sink = |_: StreamEvent| {};
        for data in [
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"}),
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": "lo"}),
            json!({"type": "response.completed", "response": {"usage": {"input_tokens": 5, "output_tokens": 2}}}),
        ] {
            assert!(asm.on_event(&ev(data), &mut sink).is_ok());
        }
        let reply = asm.finish();
        assert!(
            reply.content.contains(&ContentBlock::Text {
                text: "Hello".into()
            }),
            "{:?}",
            reply.content
        );
    }

    #[test]
    fn incomplete_and_failed_responses_say_why() {
        let ev = |data: Value| crate::llm::sse::SseEvent {
            event: String::new(),
            data: data.to_string(),
        };
        let mut asm = Assembler::default();
        let mut sink = |_: StreamEvent| {};
        let incomplete = ev(
            json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}}}),
        );
        assert!(asm.on_event(&incomplete, &mut sink).is_ok());
        assert!(asm.done);
        assert_eq!(asm.finish().stop_reason, StopReason::MaxTokens);
        let mut asm = Assembler::default();
        let failed = ev(
            json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "try again"}}}),
        );
        assert!(matches!(
            asm.on_event(&failed, &mut sink),
            Err(Failure::Retry { .. })
        ));
        let quota = ev(
            json!({"type": "error", "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "quota"}}),
        );
        assert!(matches!(
            Assembler::default().on_event(&quota, &mut sink),
            Err(Failure::Fatal(_))
        ));
    }
}
