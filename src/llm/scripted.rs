//! A scripted, offline model: plays the assistant turns of a scenario file
//! in order, one per request. Used by the demo, tests and benchmarks.
//! A subagent's requests play a script of their own: the scenario's
//! `subagents` entry whose key its task (its first message) holds.
//! Invariant: it never touches the network, and each request consumes
//! exactly one scripted turn of its script (after the last one it answers
//! with a closing text and `end_turn`).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{
    AssistantReply, BoxFuture, ContentBlock, LlmError, ModelClient, ModelRequest, StopReason,
    StreamEvent, Usage,
};

/// The bundled demo scenario.
pub const DEMO_SCENARIO: &str = include_str!("../../assets/demo.json");

#[derive(Clone, Debug, Deserialize)]
pub struct Scenario {
    #[serde(default)]
    pub description: String,
    /// Pause between streamed text pieces, to make a demo watchable.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    pub turns: Vec<ScriptedTurn>,
    /// Subagents' scripts, by a text of their task: a request whose
    /// first message holds the key plays that script.
    #[serde(default)]
    pub subagents: std::collections::BTreeMap<String, Vec<ScriptedTurn>>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ScriptedTurn {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// Pause before the reply starts (simulated thinking).
    #[serde(default)]
    pub delay_ms: u64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ScriptedCall {
    pub name: String,
    #[serde(default)]
    pub input: Value,
}

impl Scenario {
    pub fn parse(text: &str) -> Result<Self, LlmError> {
        serde_json::from_str(text).map_err(|e| LlmError::Config(format!("invalid scenario: {e}")))
    }

    /// The same scenario `factor` times slower (the pauses before each
    /// reply and between streamed pieces): the app's demo, so each plan
    /// step stays on screen for a moment.
    pub fn paced(mut self, factor: u64) -> Self {
        self.chunk_delay_ms = self.chunk_delay_ms.saturating_mul(factor);
        for turn in self
            .turns
            .iter_mut()
            .chain(self.subagents.values_mut().flatten())
        {
            turn.delay_ms = turn.delay_ms.saturating_mul(factor);
        }
        self
    }

    pub fn load(path: &Path) -> Result<Self, LlmError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LlmError::Config(format!("cannot read scenario {}: {e}", path.display()))
        })?;
        Self::parse(&text).map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))
    }
}

pub struct ScriptedClient {
    scenario: Scenario,
    /// Requests answered so far (it numbers the calls' ids).
    next: AtomicUsize,
    /// Turns played of each script ("" is the main one).
    played: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

impl ScriptedClient {
    pub fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            next: AtomicUsize::new(0),
            played: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// The script a request plays (a subagent's, when its first message
    /// names one), and the turn of it that is next.
    fn script(&self, messages: &[crate::chat::Message]) -> (&[ScriptedTurn], usize) {
        let first = messages.first().map(|m| m.text("")).unwrap_or_default();
        let key = self
            .scenario
            .subagents
            .keys()
            .find(|k| first.contains(k.as_str()))
            .cloned()
            .unwrap_or_default();
        let mut played = self
            .played
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = played.entry(key.clone()).or_default();
        let turn = *at;
        *at += 1;
        let script = self
            .scenario
            .subagents
            .get(&key)
            .unwrap_or(&self.scenario.turns);
        (script, turn)
    }
}

impl ModelClient for ScriptedClient {
    fn model(&self) -> &str {
        "scripted"
    }
    fn provider(&self) -> &str {
        "scripted"
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<AssistantReply, LlmError>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, Ordering::SeqCst);
            let fallback = ScriptedTurn {
                text: "The scripted scenario has no more turns.".into(),
                tool_calls: Vec::new(),
                delay_ms: 0,
            };
            let (script, at) = self.script(request.messages);
            let turn = script.get(at).unwrap_or(&fallback);
            if turn.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(turn.delay_ms)).await;
            }
            let mut content = Vec::new();
            if !turn.text.is_empty() {
                for piece in turn.text.split_inclusive(' ') {
                    on_event(StreamEvent::TextDelta(piece.to_string()));
                    if self.scenario.chunk_delay_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(self.scenario.chunk_delay_ms))
                            .await;
                    }
                }
                content.push(ContentBlock::Text {
                    text: turn.text.clone(),
                });
            }
            for (n, call) in turn.tool_calls.iter().enumerate() {
                let input = match &call.input {
                    Value::Null => Value::Object(Default::default()),
                    v => v.clone(),
                };
                content.push(ContentBlock::ToolUse {
                    id: format!("toolu_scripted_{index}_{n}"),
                    name: call.name.clone(),
                    input: input.into(),
                });
            }
            let stop_reason = if turn.tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            };
            let input_chars: usize = request.messages.iter().map(|m| m.content.len() * 64).sum();
            Ok(AssistantReply {
                content,
                stop_reason,
                usage: Usage {
                    input_tokens: (input_chars / 4) as u64 + 200,
                    output_tokens: (turn.text.len() / 4) as u64 + 20 * turn.tool_calls.len() as u64,
                    ..Usage::default()
                },
                invalid_inputs: Vec::new(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_demo_parses_and_uses_only_known_tools() {
        let s = Scenario::parse(DEMO_SCENARIO).unwrap();
        assert!(s.turns.len() >= 4);
        let names: Vec<String> = crate::tools::definitions()
            .into_iter()
            .map(|d| d.name)
            .collect();
        for call in s.turns.iter().flat_map(|t| &t.tool_calls) {
            assert!(names.contains(&call.name), "unknown tool {}", call.name);
        }
    }

    #[tokio::test]
    async fn plays_turns_in_order_then_ends() {
        let s = Scenario::parse(
            r#"{"turns":[{"text":"a b","tool_calls":[{"name":"todo_read"}]},{"text":"done"}]}"#,
        )
        .unwrap();
        let client = ScriptedClient::new(s);
        let req = ModelRequest {
            system: "",
            messages: &[],
            tools: &[],
            max_tokens: 10,
            conversation: None,
            session: None,
        };
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        let r1 = client.stream(&req, &mut sink).await.unwrap();
        assert_eq!(r1.stop_reason, StopReason::ToolUse);
        assert!(
            matches!(&r1.content[1], ContentBlock::ToolUse { name, input, .. } if name == "todo_read" && input.is_object())
        );
        let r2 = client.stream(&req, &mut sink).await.unwrap();
        assert_eq!(r2.stop_reason, StopReason::EndTurn);
        let r3 = client.stream(&req, &mut sink).await.unwrap();
        assert!(
            matches!(&r3.content[0], ContentBlock::Text { text } if text.contains("no more turns"))
        );
        assert_eq!(seen[0], StreamEvent::TextDelta("a ".into()));
    }
}
