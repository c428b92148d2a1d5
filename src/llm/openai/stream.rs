//! Assembling a Chat Completions stream into one reply: text deltas, tool
//! calls split across chunks, usage, error chunks, and tool calls the model
//! wrote as text. Invariant: nothing is returned from a stream that did not
//! finish, and every tool call id in a reply is unique.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::Value;

use super::MAX_TOOL_CALLS;
use crate::llm::cached_usage;
use crate::llm::http::{Assemble, Failure};
use crate::llm::lenient;
use crate::llm::retry::is_retryable_status;
use crate::llm::sse::SseEvent;
use crate::llm::{
    AssistantReply, ContentBlock, LlmError, ReasoningField, StopReason, StreamEvent, Usage,
};

/// One tool call being streamed.
struct PartialCall {
    /// The `index` the server gave it, if any.
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Builds one assistant message from Chat Completions chunks.
#[derive(Default)]
pub(super) struct Assembler {
    text: String,
    /// Reasoning text, and the field it came in (the first seen; the
    /// structured `reasoning_details` wins over the plain fields).
    reasoning: String,
    reasoning_field: Option<ReasoningField>,
    /// `reasoning_details` entries, merged by `index`.
    details: Vec<Value>,
    calls: Vec<PartialCall>,
    pub(super) finish_reason: Option<String>,
    usage: Usage,
    /// `[DONE]` arrived.
    pub(super) done: bool,
}

impl Assembler {
    pub(super) fn on_event(
        &mut self,
        ev: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), Failure> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let malformed = |e: serde_json::Error| {
            let raw: String = data.chars().take(120).collect();
            Failure::retry(
                format!("malformed chunk from the server ({e}): {raw}"),
                None,
            )
        };
        let chunk: Chunk<'_> = serde_json::from_str(data).map_err(malformed)?;
        if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return Err(stream_error(err));
        }
        if ev.event == "error" {
            // Rare: the whole chunk is the error, read as it is.
            let whole: Value = serde_json::from_str(data).map_err(malformed)?;
            return Err(stream_error(&whole));
        }
        if let Some(u) = chunk.usage.as_ref().filter(|u| u.is_object()) {
            self.on_usage(u);
        }
        let Some(choice) = chunk.choices else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            self.on_reasoning(&delta, on_event);
            if let Some(piece) = delta.content.as_deref()
                && !piece.is_empty()
            {
                self.text.push_str(piece);
                on_event(StreamEvent::TextDelta(piece.to_string()));
            }
            if let Some(Value::Array(calls)) = &delta.tool_calls {
                for call in calls {
                    self.on_tool_call(call)?;
                }
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref()
            && !reason.is_empty()
        {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }

    /// A usage object: the prompt split into the part read from the
    /// automatic prefix cache and the rest.
    fn on_usage(&mut self, u: &Value) {
        let counted = cached_usage(
            u,
            "prompt_tokens",
            "completion_tokens",
            "prompt_tokens_details",
        );
        if let Some(usage) = counted {
            self.usage = usage;
        }
    }

    /// Keeps the delta's reasoning: `reasoning_content` (DeepSeek),
    /// `reasoning` (OpenRouter, Ollama), `reasoning_details` (OpenRouter,
    /// alongside `reasoning`). The text is shown once, from the first of
    /// those a delta carries.
    fn on_reasoning(&mut self, delta: &Delta<'_>, on_event: &mut (dyn FnMut(StreamEvent) + Send)) {
        let plain = [
            (&delta.reasoning_content, ReasoningField::ReasoningContent),
            (&delta.reasoning, ReasoningField::Reasoning),
        ]
        .into_iter()
        .find_map(|(text, field)| Some((text.as_deref()?, field)));
        let details = delta.reasoning_details.as_ref().and_then(Value::as_array);
        let mut piece = String::new();
        if let Some((text, field)) = plain {
            piece.push_str(text);
            self.reasoning_field.get_or_insert(field);
        }
        if let Some(details) = details.filter(|d| !d.is_empty()) {
            self.reasoning_field = Some(ReasoningField::ReasoningDetails);
            for detail in details {
                if plain.is_none()
                    && let Some(t) = detail.get("text").and_then(Value::as_str)
                {
                    piece.push_str(t);
                }
                merge_detail(&mut self.details, detail);
            }
        }
        if !piece.is_empty() {
            self.reasoning.push_str(&piece);
            on_event(StreamEvent::ReasoningDelta(piece));
        }
    }

    /// Adds one `tool_calls[]` delta to its call: by `index` when given, else
    /// by id, else the last call (some servers number every call 0 or omit
    /// the index).
    fn on_tool_call(&mut self, call: &Value) -> Result<(), Failure> {
        let index = call.get("index").and_then(Value::as_u64);
        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function.get("name").and_then(Value::as_str).unwrap_or("");
        let piece = match function.get("arguments") {
            Some(Value::String(piece)) => piece.as_str(),
            _ => "",
        };
        let last = self.calls.len().checked_sub(1);
        let candidate = match index {
            Some(i) => self.calls.iter().rposition(|c| c.index == Some(i)),
            None if id.is_empty() => last,
            None => self
                .calls
                .iter()
                .rposition(|c| c.id == id)
                .or(last.filter(|_| name.is_empty())),
        };
        // A delta continues the candidate unless it names another call:
        // another name (servers that number every call 0), or another id
        // together with a name. The same name again continues the call
        // (MiniMax behind NVIDIA NIM repeats it in every chunk), unless the
        // call's arguments are whole and the delta opens new ones (the same
        // tool called twice at index 0 without ids). A new id without a name
        // is more of the same call (some servers send one per chunk).
        let starts_new = |c: &PartialCall| {
            if name.is_empty() || c.name.is_empty() {
                return false;
            }
            let other_name = c.name != name;
            let other_id = !id.is_empty() && !c.id.is_empty() && c.id != id;
            let whole_again = piece.trim_start().starts_with('{')
                && serde_json::from_str::<serde::de::IgnoredAny>(&c.arguments).is_ok();
            other_name || other_id || whole_again
        };
        let slot = match candidate.filter(|&s| !starts_new(&self.calls[s])) {
            Some(s) => s,
            _ => {
                if self.calls.len() >= MAX_TOOL_CALLS {
                    return Err(Failure::retry(
                        format!("more than {MAX_TOOL_CALLS} tool calls in one reply"),
                        None,
                    ));
                }
                self.calls.push(PartialCall {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[slot];
        if partial.id.is_empty() {
            partial.id = id.to_string();
        }
        if partial.name.is_empty() {
            partial.name = name.to_string();
        }
        match function.get("arguments") {
            Some(Value::String(piece)) => partial.arguments.push_str(piece),
            // Non-standard servers may send the arguments as an object.
            Some(v @ Value::Object(_)) => partial.arguments = v.to_string(),
            _ => {}
        }
        Ok(())
    }

    pub(super) fn finish(self) -> AssistantReply {
        let has_calls = !self.calls.is_empty();
        let text_call = !has_calls && looks_like_text_tool_call(&self.text);
        // Reasoning, text and the calls, at most: the reply is kept for the
        // whole conversation, so no room to grow.
        let mut content = Vec::with_capacity(2 + self.calls.len());
        let mut invalid_inputs = Vec::new();
        if let Some(field) = self.reasoning_field
            && (!self.reasoning.is_empty() || !self.details.is_empty())
        {
            content.push(ContentBlock::Reasoning {
                text: self.reasoning,
                field,
                details: (field == ReasoningField::ReasoningDetails)
                    .then(|| Value::Array(self.details).into()),
            });
        }
        if !self.text.trim().is_empty() {
            content.push(ContentBlock::Text { text: self.text });
        }
        for call in self.calls {
            let id = if call.id.is_empty() {
                format!("call_{}", NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed))
            } else {
                call.id
            };
            let input = parse_arguments(&call.arguments).unwrap_or_else(|reason| {
                invalid_inputs.push((id.clone(), reason));
                Value::Object(Default::default())
            });
            content.push(ContentBlock::ToolUse {
                id,
                name: call.name,
                input: input.into(),
            });
        }
        let stop_reason = if has_calls && self.finish_reason.as_deref() == Some("length") {
            // Cut off by the token limit: the calls' arguments may be truncated.
            StopReason::MaxTokens
        } else if has_calls {
            StopReason::ToolUse
        } else if text_call {
            StopReason::TextToolCall
        } else {
            match self.finish_reason.as_deref() {
                None | Some("stop") => StopReason::EndTurn,
                Some("tool_calls" | "function_call") => StopReason::ToolUse,
                Some("length") => StopReason::MaxTokens,
                Some("content_filter") => StopReason::Refusal,
                Some(other) => StopReason::Other(other.to_string()),
            }
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
    /// Some servers omit `[DONE]` (or break off after the message): a
    /// `finish_reason` is enough.
    fn whole(&self) -> bool {
        self.finish_reason.is_some()
    }
    fn finish(self) -> Result<AssistantReply, Failure> {
        Ok(Assembler::finish(self))
    }
}

/// One Chat Completions chunk, read straight from its bytes: what
/// [`Assembler`] uses of it. Text fields are read as leniently as a `Value`
/// lookup; the rarer parts (errors, usage, tool calls, reasoning details)
/// stay `Value`s.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
    /// Only the first choice is read.
    #[serde(default, borrow, deserialize_with = "lenient::first")]
    choices: Option<Choice<'a>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "lenient::str")]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default)]
    reasoning_details: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Value>,
}

/// Merges one streamed `reasoning_details` entry into the list: pieces of
/// the entry with the same `index` (and type) join their `text`, `summary`
/// and `data`; other fields take the latest non-null value.
fn merge_detail(details: &mut Vec<Value>, detail: &Value) {
    let Some(new) = detail.as_object() else {
        return;
    };
    let same = |d: &&mut Value| {
        new.get("index").is_some()
            && d.get("index") == new.get("index")
            && d.get("type") == new.get("type")
    };
    let Some(Value::Object(old)) = details.iter_mut().find(same) else {
        details.push(detail.clone());
        return;
    };
    for (key, value) in new {
        match (key.as_str(), old.get_mut(key), value) {
            ("text" | "summary" | "data", Some(Value::String(acc)), Value::String(more)) => {
                acc.push_str(more)
            }
            (_, _, Value::Null) => {}
            _ => {
                old.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Numbers the ids made up for tool calls that came without one.
static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(0);

/// Makes tool call ids unique within the reply (a generated `call_<n>` could
/// collide with one the server chose), keeping the first of each.
pub(in crate::llm) fn unique_ids(mut content: Vec<ContentBlock>) -> Vec<ContentBlock> {
    let mut seen = std::collections::HashSet::new();
    let mut n = 0usize;
    for block in &mut content {
        if let ContentBlock::ToolUse { id, .. } = block
            && !seen.insert(id.clone())
        {
            loop {
                let fresh = format!("call_dup_{n}");
                n += 1;
                if seen.insert(fresh.clone()) {
                    *id = fresh;
                    break;
                }
            }
        }
    }
    content
}

/// The tool input from its `arguments` text: a JSON object (or a JSON
/// string holding one), `{}` when empty.
pub(in crate::llm) fn parse_arguments(raw: &str) -> Result<Value, String> {
    crate::json::arguments(raw)
}

/// Classifies an in-stream error object (`{"message","type","code"}` or a
/// bare string): overload, rate limit and server faults are worth a retry.
pub(in crate::llm) fn stream_error(err: &Value) -> Failure {
    let field = |k: &str| match err.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let message = match err {
        Value::String(s) => s.clone(),
        _ => field("message"),
    };
    let kind = field("type");
    let code = field("code");
    let status = field("status");
    let label = [kind.as_str(), code.as_str()]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or("error");
    let text = if message.is_empty() {
        format!("{label}: {err}")
    } else {
        format!("{label}: {message}")
    };
    let numeric = err
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .is_some_and(is_retryable_status);
    // A bare string has no type or code: judge it by its words.
    let signals = if kind.is_empty() && code.is_empty() && status.is_empty() {
        message.to_lowercase()
    } else {
        format!("{kind} {code} {status}").to_lowercase()
    };
    let transient = [
        "overload",
        "rate_limit",
        "rate limit",
        "too_many_requests",
        "server_error",
        "server error",
        "internal",
        "unavailable",
        "timeout",
        "timed out",
        "capacity",
        "busy",
    ]
    .iter()
    .any(|w| signals.contains(w));
    if crate::llm::too_long::says_too_long(err) {
        Failure::Fatal(LlmError::ContextTooLong(text))
    } else if numeric || transient {
        Failure::retry(text, None)
    } else {
        Failure::Fatal(LlmError::Api(text))
    }
}

/// Markers some chat templates use when a model writes a tool call as text.
const TOOL_CALL_MARKERS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<|tool_call|>",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "<function=",
    "<tool_calls>",
];

/// True when a reply without real tool calls looks like the model wrote a
/// tool call as text instead of making it: a template marker such as
/// `<tool_call>…</tool_call>`, or a reply that is (or ends with a fenced
/// block that is) a JSON object like `{"name": "bash", "arguments": {…}}`
/// (also `parameters`, `{"function": {…}}`, or a list of them). Such text is
/// never executed; the reply's `stop_reason` is [`StopReason::TextToolCall`] so the
/// agent can tell the model to use the tool interface.
pub fn looks_like_text_tool_call(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return false;
    }
    if TOOL_CALL_MARKERS.iter().any(|m| trimmed.contains(m)) {
        return true;
    }
    if is_call_json(trimmed) {
        return true;
    }
    // A fenced block closing the reply: ```json\n{…}\n```
    if let Some(body) = trimmed.strip_suffix("```")
        && let Some(open) = body.rfind("```")
    {
        let inner = &body[open + 3..];
        let inner = inner.split_once('\n').map_or(inner, |(lang, rest)| {
            if lang.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
                rest
            } else {
                inner
            }
        });
        return is_call_json(inner.trim());
    }
    false
}

/// A JSON object (or list of them) shaped like a function call.
fn is_call_json(text: &str) -> bool {
    if !(text.starts_with('{') || text.starts_with('[')) {
        return false;
    }
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    fn is_call(v: &Value) -> bool {
        let Some(obj) = v.as_object() else {
            return false;
        };
        if let Some(f) = obj.get("function").filter(|f| f.is_object()) {
            return is_call(f);
        }
        obj.get("name").is_some_and(Value::is_string)
            && ["arguments", "parameters", "input"]
                .iter()
                .any(|k| obj.get(*k).is_some_and(|a| a.is_object() || a.is_string()))
    }
    match &v {
        Value::Array(items) => !items.is_empty() && items.iter().all(is_call),
        other => is_call(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ReasoningField;
    use serde_json::json;

    fn run_chunks(chunks: &[&str]) -> (Result<AssistantReply, String>, Vec<StreamEvent>) {
        let mut asm = Assembler::default();
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        for data in chunks {
            let ev = SseEvent {
                event: String::new(),
                data: data.to_string(),
            };
            if let Err(f) = asm.on_event(&ev, &mut sink) {
                let msg = match f {
                    Failure::Retry { reason, .. } => format!("retry: {reason}"),
                    Failure::Fatal(e) => format!("fatal: {e}"),
                };
                return (Err(msg), seen);
            }
            if asm.done {
                break;
            }
        }
        let complete = asm.done || asm.finish_reason.is_some();
        let reply = if complete {
            Ok(asm.finish())
        } else {
            Err("cut".to_string())
        };
        (reply, seen)
    }

    /// Replays recorded stream bytes, fed in `pieces`, through the SSE
    /// decoder and the assembler as the client does (the end of the stream
    /// included).
    fn replay(pieces: &[&[u8]]) -> (AssistantReply, Vec<StreamEvent>) {
        let mut decoder = crate::llm::sse::SseDecoder::new();
        let mut asm = Assembler::default();
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        let mut events = Vec::new();
        for p in pieces {
            events.extend(decoder.feed(p));
        }
        events.extend(decoder.finish());
        for ev in &events {
            if asm.done {
                break;
            }
            assert!(asm.on_event(ev, &mut sink).is_ok(), "event {ev:?}");
        }
        assert!(
            asm.done || asm.finish_reason.is_some(),
            "the stream finished"
        );
        (asm.finish(), seen)
    }

    /// Calls `check` on the replay of `bytes` split at every byte into two
    /// pieces, and at many pairs of points into three.
    pub(super) fn at_every_split(bytes: &[u8], check: impl Fn(AssistantReply, Vec<StreamEvent>)) {
        for cut in 0..=bytes.len() {
            let (reply, seen) = replay(&[&bytes[..cut], &bytes[cut..]]);
            check(reply, seen);
        }
        for a in (0..bytes.len()).step_by(61) {
            for b in (a..=bytes.len()).step_by(97) {
                let (reply, seen) = replay(&[&bytes[..a], &bytes[a..b], &bytes[b..]]);
                check(reply, seen);
            }
        }
    }

    const DEEPSEEK: &[u8] =
        include_bytes!("../../../tests/fixtures/streams/deepseek_reasoning_tool_call.sse");
    const OPENROUTER: &[u8] =
        include_bytes!("../../../tests/fixtures/streams/openrouter_reasoning_details.sse");

    fn reasoning_deltas(seen: &[StreamEvent]) -> String {
        seen.iter()
            .map(|e| match e {
                StreamEvent::ReasoningDelta(t) => t.as_str(),
                _ => "",
            })
            .collect()
    }

    /// DeepSeek's thinking mode streams `reasoning_content` before the tool
    /// call: the reply keeps it first, under that field, at every split.
    #[test]
    fn deepseek_reasoning_content_is_kept_before_the_call_at_every_split() {
        let thought = "The user wants a notes file. I should write notes.txt with the line \"hello\" — then check it. Let me call write_file.";
        at_every_split(DEEPSEEK, |reply, seen| {
            assert_eq!(
                reply.content,
                vec![
                    ContentBlock::Reasoning {
                        text: thought.into(),
                        field: ReasoningField::ReasoningContent,
                        details: None,
                    },
                    ContentBlock::ToolUse {
                        id: "call_00_kZ3pLx9QfWvN2r8bYh1T4sJc".into(),
                        name: "write_file".into(),
                        input: json!({"path": "notes.txt", "content": "hello\n"}).into(),
                    },
                ]
            );
            assert_eq!(reasoning_deltas(&seen), thought);
            assert!(!seen.iter().any(|e| matches!(e, StreamEvent::TextDelta(_))));
            // 2113 prompt tokens, 1920 of them read from DeepSeek's cache.
            assert_eq!(reply.usage.input_tokens, 193);
            assert_eq!(reply.usage.cache_read_tokens, 1920);
        });
    }

    /// OpenRouter streams `reasoning` and `reasoning_details` together: the
    /// details are kept (merged by index, signature included) and the text
    /// is shown once.
    #[test]
    fn openrouter_reasoning_details_are_merged_at_every_split() {
        let thought = "Check the folder first — then answer.";
        at_every_split(OPENROUTER, |reply, seen| {
            assert_eq!(
                reply.content[0],
                ContentBlock::Reasoning {
                    text: thought.into(),
                    field: ReasoningField::ReasoningDetails,
                    details: Some(
                        json!([{
                            "type": "reasoning.text",
                            "text": thought,
                            "format": "anthropic-claude-v1",
                            "index": 0,
                            "signature": "ErUBCkYIBRgCIkDx9rN2kYw4Q=="
                        }])
                        .into()
                    ),
                }
            );
            assert_eq!(reply.tool_calls().len(), 1);
            assert_eq!(reasoning_deltas(&seen), thought);
        });
    }

    const NIM_MINIMAX: &[u8] =
        include_bytes!("../../../tests/fixtures/streams/nim_minimax_repeated_name.sse");

    /// MiniMax behind NVIDIA NIM repeats the function name (and the id) in
    /// every chunk of a call: each call stays one call with its whole
    /// arguments, at every split of the recording.
    #[test]
    fn a_name_repeated_in_every_chunk_continues_the_call_at_every_split() {
        at_every_split(NIM_MINIMAX, |reply, seen| {
            assert_eq!(
                reply.tool_calls(),
                vec![
                    (
                        "call_0b7e9d4c2a1f4e3b".into(),
                        "bash".into(),
                        json!({"command": "ls -la src && grep -rn \"TODO\" src | head -20"})
                    ),
                    (
                        "call_5c2d8e1f0a9b4d7c".into(),
                        "write_file".into(),
                        json!({"path": "notes/plan.md", "content": "# Plan\n- [ ] read — ünïcode\n"})
                    ),
                ]
            );
            assert!(reply.invalid_inputs.is_empty());
            assert_eq!(reply.stop_reason, StopReason::ToolUse);
            assert_eq!(
                seen,
                vec![StreamEvent::TextDelta("Let me look at the files.".into())]
            );
        });
    }

    fn delta(d: Value) -> String {
        json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":d,"finish_reason":null}]}).to_string()
    }

    pub(super) fn finish(reason: &str) -> String {
        json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}).to_string()
    }

    fn call(index: Option<u64>, id: Option<&str>, name: Option<&str>, args: &str) -> String {
        let mut c = json!({"function": {"arguments": args}});
        if let Some(i) = index {
            c["index"] = json!(i);
        }
        if let Some(id) = id {
            c["id"] = json!(id);
            c["type"] = json!("function");
        }
        if let Some(n) = name {
            c["function"]["name"] = json!(n);
        }
        delta(json!({"tool_calls": [c]}))
    }

    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    #[test]
    fn split_content_streams_and_joins() {
        let chunks = [
            delta(json!({"role":"assistant","content":""})),
            delta(json!({"content":"Hel"})),
            delta(json!({"content":"lo, wörld 😀"})),
            finish("stop"),
            json!({"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}).to_string(),
            "[DONE]".to_string(),
        ];
        let (reply, seen) = run_chunks(&refs(&chunks));
        let reply = reply.unwrap();
        assert_eq!(
            seen,
            vec![
                StreamEvent::TextDelta("Hel".into()),
                StreamEvent::TextDelta("lo, wörld 😀".into())
            ]
        );
        assert_eq!(
            reply.content,
            vec![ContentBlock::Text {
                text: "Hello, wörld 😀".into()
            }]
        );
        assert_eq!(reply.stop_reason, StopReason::EndTurn);
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 5,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn parallel_calls_with_arguments_split_mid_key_and_mid_escape() {
        let chunks = [
            delta(json!({"role":"assistant","content":null})),
            call(Some(0), Some("call_a"), Some("write_file"), ""),
            call(Some(0), None, None, "{\"pa"),
            call(Some(0), None, None, "th\": \"a.txt\", \"con"),
            call(Some(1), Some("call_b"), Some("bash"), "{\"comm"),
            call(Some(0), None, None, "tent\": \"line\\"),
            call(Some(1), None, None, "and\": \"echo \\\"hi\\\"\"}"),
            call(Some(0), None, None, "n\\u00e9\"}"),
            finish("tool_calls"),
            "[DONE]".to_string(),
        ];
        let (reply, seen) = run_chunks(&refs(&chunks));
        let reply = reply.unwrap();
        assert!(seen.is_empty());
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert!(reply.invalid_inputs.is_empty());
        assert_eq!(
            reply.content,
            vec![
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "write_file".into(),
                    input: json!({"path": "a.txt", "content": "line\né"}).into(),
                },
                ContentBlock::ToolUse {
                    id: "call_b".into(),
                    name: "bash".into(),
                    input: json!({"command": "echo \"hi\""}).into(),
                },
            ]
        );
    }

    #[test]
    fn same_index_calls_split_by_name_and_fresh_ids_per_chunk_stay_one_call() {
        // Two calls both at index 0 without ids: the second name starts a new call.
        let chunks = [
            delta(
                json!({"tool_calls": [call_json(Some(0), None, Some("bash"), "{\"command\":\"ls\"}")]}),
            ),
            delta(
                json!({"tool_calls": [call_json(Some(0), None, Some("glob"), "{\"pattern\":\"*\"}")]}),
            ),
            finish("tool_calls"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let calls = reply.unwrap().tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].1.as_str(), calls[1].1.as_str()), ("bash", "glob"));
        // One call whose every chunk carries a new id: still one call.
        let chunks = [
            delta(json!({"tool_calls": [call_json(Some(0), Some("a1"), Some("bash"), "{\"comm")]})),
            delta(json!({"tool_calls": [call_json(Some(0), Some("a2"), None, "and\":\"pwd\"}")]})),
            finish("tool_calls"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let calls = reply.unwrap().tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].2, json!({"command": "pwd"}));
    }

    #[test]
    fn the_same_tool_twice_at_index_zero_without_ids_is_two_calls() {
        let chunks = [
            call(Some(0), None, Some("bash"), "{\"command\":\"ls\"}"),
            call(Some(0), None, Some("bash"), "{\"command\":\"pwd\"}"),
            finish("tool_calls"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let calls = reply.unwrap().tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].2, json!({"command": "pwd"}));
    }

    fn call_json(index: Option<u64>, id: Option<&str>, name: Option<&str>, args: &str) -> Value {
        let mut c = json!({"function": {"arguments": args}});
        if let Some(i) = index {
            c["index"] = json!(i);
        }
        if let Some(id) = id {
            c["id"] = json!(id);
        }
        if let Some(n) = name {
            c["function"]["name"] = json!(n);
        }
        c
    }

    #[test]
    fn whole_calls_in_one_chunk_missing_or_repeated_index_and_empty_ids() {
        // Ollama style: every call complete in one chunk, all with index 0 or none.
        let chunks = [
            call(Some(0), Some("x1"), Some("bash"), "{\"command\":\"ls\"}"),
            call(Some(0), Some("x2"), Some("glob"), "{\"pattern\":\"*\"}"),
            call(None, Some("x3"), Some("todo_read"), ""),
            call(None, None, None, "{}"),
            call(None, Some(""), Some("bash"), "{\"command\":\"pwd\"}"),
            finish("stop"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let reply = reply.unwrap();
        let calls = reply.tool_calls();
        assert_eq!(
            calls,
            vec![
                ("x1".into(), "bash".into(), json!({"command":"ls"})),
                ("x2".into(), "glob".into(), json!({"pattern":"*"})),
                ("x3".into(), "todo_read".into(), json!({})),
                (calls[3].0.clone(), "bash".into(), json!({"command":"pwd"})),
            ]
        );
        assert!(calls[3].0.starts_with("call_"), "{}", calls[3].0);
        // finish_reason "stop" with calls still means the tools must run.
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert!(reply.invalid_inputs.is_empty());
    }

    #[test]
    fn generated_ids_never_collide() {
        let chunks = [
            call(Some(0), None, Some("bash"), "{}"),
            call(Some(1), Some("call_0"), Some("bash"), "{}"),
            finish("tool_calls"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let ids: Vec<String> = reply
            .unwrap()
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ids.len(), 2);
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn missing_done_after_finish_is_complete_and_before_finish_is_cut() {
        let chunks = [delta(json!({"content":"ok"})), finish("stop")];
        let (reply, _) = run_chunks(&refs(&chunks));
        assert_eq!(reply.unwrap().stop_reason, StopReason::EndTurn);
        let chunks = [
            delta(json!({"content":"ok"})),
            call(Some(0), Some("a"), Some("bash"), "{\"command\":"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        assert_eq!(reply.unwrap_err(), "cut");
    }

    #[test]
    fn finish_reasons_are_mapped() {
        for (wire, ours) in [
            ("stop", StopReason::EndTurn),
            ("tool_calls", StopReason::ToolUse),
            ("length", StopReason::MaxTokens),
            ("content_filter", StopReason::Refusal),
            ("eos", StopReason::Other("eos".into())),
        ] {
            let chunks = [delta(json!({"content":"x"})), finish(wire)];
            let (reply, _) = run_chunks(&refs(&chunks));
            assert_eq!(reply.unwrap().stop_reason, ours, "{wire}");
        }
    }

    #[test]
    fn usage_in_a_final_chunk_without_choices() {
        let chunks = [
            delta(json!({"content":"x"})),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})
                .to_string(),
            json!({"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":34}}).to_string(),
            "[DONE]".to_string(),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        assert_eq!(
            reply.unwrap().usage,
            Usage {
                input_tokens: 1200,
                output_tokens: 34,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn cached_prompt_tokens_are_split_from_the_full_price_input() {
        let chunks = [
            delta(json!({"content":"x"})),
            finish("stop"),
            json!({"choices":[],"usage":{"prompt_tokens":5000,"completion_tokens":20,
                "prompt_tokens_details":{"cached_tokens":4096}}})
            .to_string(),
            "[DONE]".to_string(),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        assert_eq!(
            reply.unwrap().usage,
            Usage {
                input_tokens: 904,
                output_tokens: 20,
                cache_read_tokens: 4096,
                cache_write_tokens: 0,
            }
        );
        // A server reporting more cached tokens than the prompt: capped.
        let chunks = [
            delta(json!({"content":"x"})),
            finish("stop"),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,
                "prompt_tokens_details":{"cached_tokens":99}}})
            .to_string(),
            "[DONE]".to_string(),
        ];
        let usage = run_chunks(&refs(&chunks)).0.unwrap().usage;
        assert_eq!((usage.input_tokens, usage.cache_read_tokens), (0, 10));
    }

    #[test]
    fn invalid_arguments_keep_the_call_with_an_empty_input() {
        let chunks = [
            call(Some(0), Some("a"), Some("bash"), "{\"command\": \"ls"),
            call(Some(1), Some("b"), Some("bash"), "[1, 2]"),
            call(Some(2), Some("c"), Some("todo_read"), "  "),
            finish("tool_calls"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let reply = reply.unwrap();
        assert_eq!(reply.content.len(), 3);
        for b in &reply.content {
            if let ContentBlock::ToolUse { input, .. } = b {
                assert_eq!(input.value(), json!({}));
            }
        }
        assert_eq!(reply.invalid_inputs.len(), 2);
        assert_eq!(reply.invalid_inputs[0].0, "a");
        assert!(reply.invalid_inputs[0].1.contains("not valid JSON"));
        assert_eq!(reply.invalid_inputs[1].0, "b");
        assert!(reply.invalid_inputs[1].1.contains("must be a JSON object"));
    }

    #[test]
    fn error_chunks_and_malformed_chunks_are_classified() {
        let overloaded = json!({"error":{"message":"That model is currently overloaded","type":"server_error","param":null,"code":null}}).to_string();
        let (r, _) = run_chunks(&[&overloaded]);
        assert_eq!(
            r.unwrap_err(),
            "retry: server_error: That model is currently overloaded"
        );
        let limited =
            json!({"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}})
                .to_string();
        assert!(run_chunks(&[&limited]).0.unwrap_err().starts_with("retry:"));
        let gemini =
            json!({"error":{"code":503,"message":"try later","status":"UNAVAILABLE"}}).to_string();
        assert!(run_chunks(&[&gemini]).0.unwrap_err().starts_with("retry:"));
        let bad =
            json!({"error":{"message":"bad schema","type":"invalid_request_error"}}).to_string();
        assert_eq!(
            run_chunks(&[&bad]).0.unwrap_err(),
            "fatal: the model service reported an error: invalid_request_error: bad schema"
        );
        let ollama = json!({"error":"model runner has unexpectedly stopped"}).to_string();
        assert!(run_chunks(&[&ollama]).0.unwrap_err().starts_with("fatal:"));
        let busy = json!({"error":"server busy, please try again"}).to_string();
        assert!(run_chunks(&[&busy]).0.unwrap_err().starts_with("retry:"));
        let (r, _) = run_chunks(&["{\"choices\":[{\"delta\":"]);
        assert!(r.unwrap_err().starts_with("retry: malformed chunk"));
    }

    #[test]
    fn text_tool_calls_are_flagged_not_run() {
        let chunks = [
            delta(json!({"content":"{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}"})),
            finish("stop"),
        ];
        let (reply, _) = run_chunks(&refs(&chunks));
        let reply = reply.unwrap();
        assert_eq!(reply.stop_reason, StopReason::TextToolCall);
        assert!(
            reply
                .content
                .iter()
                .all(|b| matches!(b, ContentBlock::Text { .. }))
        );
    }

    #[test]
    fn detector_recognises_written_tool_calls() {
        for yes in [
            r#"{"name": "bash", "arguments": {"command": "ls"}}"#,
            "  {\"name\":\"write_file\",\"parameters\":{\"path\":\"a\"}}\n",
            r#"[{"name": "glob", "arguments": "{\"pattern\":\"*\"}"}]"#,
            r#"{"type":"function","function":{"name":"bash","arguments":{}}}"#,
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
            "Let me look.\n<tool_call>{\"name\":\"glob\"}</tool_call>",
            "I'll list the files:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```",
            "[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {}}]",
            "<function=bash>{\"command\": \"ls\"}</function>",
        ] {
            assert!(looks_like_text_tool_call(yes), "should flag: {yes}");
        }
        for no in [
            "",
            "Done: I wrote notes/a.txt.",
            r#"{"status": "ok"}"#,
            r#"{"name": "Alice", "age": 3}"#,
            "Here is the config:\n```json\n{\"debug\": true}\n```",
            "```json\n{\"name\": \"bash\", \"arguments\": {}}\n```\nThat is the shape of a call.",
            "Use `{\"name\": ...}` objects.",
        ] {
            assert!(!looks_like_text_tool_call(no), "should not flag: {no}");
        }
    }
}
