//! A tool result's text: owned, or, once a model client has kept the
//! serialised bytes of its message, read from those bytes. Invariant: a
//! kept text is the JSON string literal (quotes included) of exactly the
//! text it replaced, as `serde_json` escapes it, so the conversation holds
//! one copy of a result's text instead of two (the typed one and the
//! request's), and reading it back gives the same text.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

#[derive(Clone)]
pub enum Text {
    Owned(String),
    /// A JSON string literal, and the length of the text it holds.
    Kept {
        literal: Bytes,
        len: usize,
    },
}

impl Text {
    /// The text, borrowed when it needs no unescaping.
    pub fn as_str(&self) -> Cow<'_, str> {
        match self {
            Text::Owned(s) => Cow::Borrowed(s),
            Text::Kept { literal, .. } => {
                let inner = literal
                    .get(1..literal.len().saturating_sub(1))
                    .unwrap_or(&[]);
                if !inner.contains(&b'\\')
                    && let Ok(s) = std::str::from_utf8(inner)
                {
                    return Cow::Borrowed(s);
                }
                Cow::Owned(serde_json::from_slice::<String>(literal).unwrap_or_default())
            }
        }
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Text::Owned(s) => s.len(),
            Text::Kept { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The owned text, for a client to find its literal in what it wrote.
    pub fn owned(&self) -> Option<&str> {
        match self {
            Text::Owned(s) => Some(s),
            Text::Kept { .. } => None,
        }
    }

    /// The text read from `literal` from now on, when `literal` is the
    /// JSON string literal of this text (checked: it must decode to it).
    /// Returns whether it was taken.
    pub fn keep(&mut self, literal: Bytes) -> bool {
        let Text::Owned(s) = self else {
            return false;
        };
        let kept = Text::Kept {
            literal,
            len: s.len(),
        };
        if kept.as_str() != s.as_str() {
            return false;
        }
        *self = kept;
        true
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::Owned(String::new())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text::Owned(s)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text::Owned(s.to_owned())
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Text::Owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(s: &str) -> Bytes {
        Bytes::from(serde_json::to_vec(s).unwrap())
    }

    #[test]
    fn a_kept_text_reads_back_as_the_text_it_replaced() {
        for s in [
            "plain",
            "",
            "line\n\"quoted\" \\ tab\t é 😀 \u{1}",
            "{\"a\":1}",
        ] {
            let mut t = Text::from(s);
            assert!(t.keep(literal(s)), "{s:?}");
            assert!(matches!(t, Text::Kept { .. }));
            assert_eq!(t.as_str(), s);
            assert_eq!(t.len(), s.len());
            assert_eq!(t, Text::from(s));
            assert_eq!(
                serde_json::to_string(&t).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
        // Plain text is read in place.
        let mut t = Text::from("in place");
        t.keep(literal("in place"));
        assert!(matches!(t.as_str(), Cow::Borrowed(_)));
    }

    #[test]
    fn bytes_that_are_not_the_text_are_refused() {
        let mut t = Text::from("one");
        assert!(!t.keep(literal("two")));
        assert!(!t.keep(Bytes::from_static(b"\"one")));
        assert!(!t.keep(Bytes::from_static(b"one")));
        assert_eq!(t, Text::Owned("one".into()));
        // Kept once, it is not replaced again.
        assert!(t.keep(literal("one")));
        assert!(!t.keep(literal("one")));
    }
}
