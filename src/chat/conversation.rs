//! The conversation sent to the model. Invariant: roles alternate, starting
//! with `user`; every `tool_use` of an assistant message is answered by a
//! `tool_result` in the next user message, results first and text after.
//! It only grows: a message is appended, or user content is merged into the
//! last message; no message before the last ever changes, so a model client
//! may keep the serialised bytes of the older ones under the conversation's
//! [`ConversationKey`]. Replacing the messages (compaction, a new session)
//! makes a new `Conversation`, with a new key.

use std::sync::{Arc, Weak};

use bytes::Bytes;

use super::{ContentBlock, Message, Role};

/// Where a client keeps the text of one tool result: block `block` of
/// message `message`, as the JSON string literal `literal`.
#[derive(Clone, Debug)]
pub struct KeptText {
    pub message: usize,
    pub block: usize,
    pub literal: Bytes,
}

#[derive(Debug, Default)]
pub struct Conversation {
    messages: Vec<Message>,
    /// `messages_bytes(&messages)`, kept as messages are added, so sizing
    /// the next request does not walk the whole history every round.
    bytes: usize,
    key: ConversationKey,
}

/// Who a conversation is, for as long as it lives: unique among live
/// conversations (a clone gets its own), and a holder of a [`KeyWatch`]
/// sees when it is gone.
#[derive(Debug, Default)]
pub struct ConversationKey(Arc<()>);

impl ConversationKey {
    /// A watch on this key that does not keep the conversation's identity
    /// alive.
    pub fn watch(&self) -> KeyWatch {
        KeyWatch(Arc::downgrade(&self.0))
    }
}

/// A weak hold on a [`ConversationKey`]: is it that key, and does the
/// conversation still live. The address it watches is not reused while
/// the watch exists.
#[derive(Debug)]
pub struct KeyWatch(Weak<()>);

impl KeyWatch {
    pub fn is(&self, key: &ConversationKey) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&key.0))
    }

    /// Whether the conversation was dropped (or replaced).
    pub fn is_gone(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl Clone for Conversation {
    /// The same messages under a new key: the copy grows on its own.
    fn clone(&self) -> Self {
        Self {
            messages: self.messages.clone(),
            bytes: self.bytes,
            key: ConversationKey::default(),
        }
    }
}

impl Conversation {
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The conversation's identity, for a client that keeps the bytes of
    /// its older messages between requests.
    pub fn key(&self) -> &ConversationKey {
        &self.key
    }

    /// A conversation of `messages` as they are (compaction's rebuild); the
    /// caller checks it with [`Conversation::validate`].
    pub fn from_messages(messages: Vec<Message>) -> Self {
        let bytes = messages_bytes(&messages);
        Self {
            messages,
            bytes,
            key: ConversationKey::default(),
        }
    }

    /// What the messages take on the wire, about (see [`message_bytes`]).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends `message`, or merges its content into the trailing message
    /// when both are the user's; keeps the byte count.
    fn append(&mut self, message: Message) {
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User && message.role == Role::User => {
                self.bytes -= message_bytes(last);
                // Tool results stay first, as the APIs require (an image or
                // a note after a result, then another result).
                for block in message.content {
                    if matches!(block, ContentBlock::ToolResult { .. }) {
                        let at = last
                            .content
                            .iter()
                            .position(|b| !matches!(b, ContentBlock::ToolResult { .. }))
                            .unwrap_or(last.content.len());
                        last.content.insert(at, block);
                    } else {
                        last.content.push(block);
                    }
                }
                self.bytes += message_bytes(last);
            }
            _ => {
                self.bytes += message_bytes(&message);
                self.messages.push(message);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Tool results read their text from the bytes a model client keeps
    /// (each checked to be that text) and free their own copy; the
    /// messages' content does not change. Returns the bytes freed.
    pub fn keep_texts(&mut self, kept: Vec<KeptText>) -> usize {
        let mut freed = 0;
        for k in kept {
            if let Some(ContentBlock::ToolResult { content, .. }) = self
                .messages
                .get_mut(k.message)
                .and_then(|m| m.content.get_mut(k.block))
            {
                let len = content.len();
                if content.keep(k.literal) {
                    freed += len;
                }
            }
        }
        freed
    }

    /// Adds user text, merged into the trailing user message if there is one
    /// (so roles keep alternating after an interrupt).
    pub fn push_user_text(&mut self, text: impl Into<String>) {
        self.append(Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        });
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
        self.append(Message {
            role: Role::Assistant,
            content,
        });
    }

    /// Answers the last assistant message's tool calls: results first, then texts.
    pub fn push_tool_results(&mut self, results: Vec<ContentBlock>, texts: Vec<String>) {
        let mut content = results;
        content.extend(texts.into_iter().map(|text| ContentBlock::Text { text }));
        self.append(Message {
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
                            ContentBlock::Text { .. } | ContentBlock::Image { .. } => {
                                seen_text = true
                            }
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

/// The bytes of a message's text, tool inputs and results (what the wire carries).
/// What an image counts for in [`message_bytes`]: about 1,600 tokens.
pub const IMAGE_BYTES: usize = 6_400;

pub fn message_bytes(m: &Message) -> usize {
    m.content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len() + 16,
            ContentBlock::ToolUse { id, name, input } => {
                id.len() + name.len() + input.as_str().len() + 32
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => tool_use_id.len() + content.len() + 32,
            ContentBlock::Thinking {
                thinking,
                signature,
            } => thinking.len() + signature.len() + 32,
            ContentBlock::RedactedThinking { data } => data.len() + 32,
            // What a provider counts for an image (about 1,600 tokens at
            // most), not its bytes: the window is what this measures.
            ContentBlock::Image { .. } => IMAGE_BYTES,
            ContentBlock::Reasoning { text, details, .. } => {
                text.len() + details.as_ref().map_or(0, |d| d.get().len()) + 32
            }
        })
        .sum::<usize>()
        + 16
}

/// The bytes of a whole list of messages.
pub fn messages_bytes(messages: &[Message]) -> usize {
    messages.iter().map(message_bytes).sum()
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
            input: json!({}).into(),
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
            input: json!({}).into(),
        }]);
        c.push_user_text("hello");
        assert!(c.validate().is_err());
        let mut d = Conversation::default();
        d.push_user_text("go");
        d.push_assistant(Vec::new());
        assert_eq!(d.validate(), Ok(()));
    }

    #[test]
    fn the_byte_count_follows_every_change() {
        let mut c = Conversation::default();
        c.push_user_text("task");
        c.push_user_text("a reminder merged into the same message");
        c.push_assistant(vec![ContentBlock::ToolUse {
            id: "t1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "ls -la"}).into(),
        }]);
        c.push_tool_results(
            vec![ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: "x".repeat(500).into(),
                is_error: false,
            }],
            vec!["nag".into()],
        );
        c.push_user_text("interrupted");
        assert_eq!(c.bytes(), messages_bytes(c.messages()));
        let rebuilt = Conversation::from_messages(c.messages().to_vec());
        assert_eq!(rebuilt.bytes(), c.bytes());
    }
}
