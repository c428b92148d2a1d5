//! The conversation sent to the model. Invariant: roles alternate, starting
//! with `user`; every `tool_use` of an assistant message is answered by a
//! `tool_result` in the next user message, results first and text after.

use crate::llm::{ContentBlock, Message, Role};

#[derive(Clone, Debug, Default)]
pub struct Conversation {
    messages: Vec<Message>,
}

impl Conversation {
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// A conversation of `messages` as they are (compaction's rebuild); the
    /// caller checks it with [`Conversation::validate`].
    pub fn from_messages(messages: Vec<Message>) -> Self {
        Self { messages }
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Adds user text, merged into the trailing user message if there is one
    /// (so roles keep alternating after an interrupt).
    pub fn push_user_text(&mut self, text: impl Into<String>) {
        let block = ContentBlock::Text { text: text.into() };
        match self.messages.last_mut() {
            Some(m) if m.role == Role::User => m.content.push(block),
            _ => self.messages.push(Message {
                role: Role::User,
                content: vec![block],
            }),
        }
    }

    /// Adds an assistant message. Whitespace-only text blocks are dropped and
    /// an empty message (or one of reasoning only) gets a placeholder: the
    /// API refuses both.
    pub fn push_assistant(&mut self, mut content: Vec<ContentBlock>) {
        content.retain(|b| !matches!(b, ContentBlock::Text { text } if text.trim().is_empty()));
        if content.iter().all(ContentBlock::is_reasoning) {
            content.push(ContentBlock::Text {
                text: "(no reply)".into(),
            });
        }
        self.messages.push(Message {
            role: Role::Assistant,
            content,
        });
    }

    /// Answers the last assistant message's tool calls: results first, then texts.
    pub fn push_tool_results(&mut self, results: Vec<ContentBlock>, texts: Vec<String>) {
        let mut content = results;
        content.extend(texts.into_iter().map(|text| ContentBlock::Text { text }));
        self.messages.push(Message {
            role: Role::User,
            content,
        });
    }

    /// Checks the invariant; used by tests and debug assertions.
    pub fn validate(&self) -> Result<(), String> {
        let mut expect = Role::User;
        let mut pending: Vec<&str> = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            if m.role != expect {
                return Err(format!(
                    "message {i}: expected {expect:?}, found {:?}",
                    m.role
                ));
            }
            if m.content.is_empty() {
                return Err(format!("message {i} is empty"));
            }
            match m.role {
                Role::User => {
                    let mut seen_text = false;
                    let mut answered = Vec::new();
                    for b in &m.content {
                        match b {
                            ContentBlock::ToolResult { tool_use_id, .. } => {
                                if seen_text {
                                    return Err(format!("message {i}: tool_result after text"));
                                }
                                answered.push(tool_use_id.as_str());
                            }
                            ContentBlock::Text { text } if text.trim().is_empty() => {
                                return Err(format!("message {i}: whitespace-only text"));
                            }
                            ContentBlock::Text { .. } => seen_text = true,
                            ContentBlock::ToolUse { .. } => {
                                return Err(format!("message {i}: tool_use in a user message"));
                            }
                            _ => return Err(format!("message {i}: reasoning in a user message")),
                        }
                    }
                    if answered != pending {
                        return Err(format!(
                            "message {i}: answers {answered:?}, expected {pending:?}"
                        ));
                    }
                    pending.clear();
                    expect = Role::Assistant;
                }
                Role::Assistant => {
                    pending = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                            _ => None,
                        })
                        .collect();
                    expect = Role::User;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_text_merges_and_results_come_first() {
        let mut c = Conversation::default();
        c.push_user_text("do it");
        c.push_user_text("[interrupted]");
        assert_eq!(c.messages().len(), 1);
        c.push_assistant(vec![ContentBlock::ToolUse {
            id: "a".into(),
            name: "bash".into(),
            input: json!({}),
        }]);
        c.push_tool_results(
            vec![ContentBlock::ToolResult {
                tool_use_id: "a".into(),
                content: "ok".into(),
                is_error: false,
            }],
            vec!["<reminder>x</reminder>".into()],
        );
        c.push_user_text("more");
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.messages()[2].content.len(), 3);
    }

    #[test]
    fn validate_catches_unanswered_tool_use() {
        let mut c = Conversation::default();
        c.push_user_text("go");
        c.push_assistant(vec![ContentBlock::ToolUse {
            id: "a".into(),
            name: "bash".into(),
            input: json!({}),
        }]);
        c.push_user_text("hello");
        assert!(c.validate().is_err());
        let mut d = Conversation::default();
        d.push_user_text("go");
        d.push_assistant(Vec::new());
        assert_eq!(d.validate(), Ok(()));
    }
}
