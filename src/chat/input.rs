//! A tool call's input, kept as its compact JSON text. Invariant: the text
//! is what serialising the input as a `serde_json::Value` writes (keys in
//! sorted order, no spaces), so a request written from it is byte for byte
//! what writing the `Value` gave; it costs the bytes of the text, where a
//! `Value` object costs a `BTreeMap` node (about 600 bytes for one key).

use std::fmt;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

#[derive(Clone)]
pub struct Input(Box<RawValue>);

impl Input {
    /// The input `value`, in its canonical text.
    pub fn new(value: &Value) -> Self {
        // A `Value` always serialises, and its text is always valid JSON;
        // its keys sorted, whatever order serde_json's map keeps them in.
        let text = crate::json::canonical(value);
        match RawValue::from_string(text) {
            Ok(raw) => Self(raw),
            Err(_) => Self::empty(),
        }
    }

    /// `{}`.
    pub fn empty() -> Self {
        Self(
            RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("{{}} is JSON")),
        )
    }

    /// The input as a `Value` (parsed from its text; it always parses).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// Whether the input is a JSON object.
    pub fn is_object(&self) -> bool {
        self.0.get().starts_with('{')
    }

    /// The input read into `T`.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }
}

impl From<Value> for Input {
    fn from(value: Value) -> Self {
        Self::new(&value)
    }
}

impl From<&Value> for Input {
    fn from(value: &Value) -> Self {
        Self::new(value)
    }
}

impl Default for Input {
    fn default() -> Self {
        Self::empty()
    }
}

impl PartialEq for Input {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Input {
    /// Read through a `Value`, so text written by hand or by another
    /// program comes out canonical.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Self::new(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_is_what_the_value_writes_and_reads_back_the_same() {
        let v = json!({"z": 1, "a": {"y": [1, "two", null], "b": "é\"\n"}, "m": 2.5});
        let input = Input::new(&v);
        assert_eq!(input.as_str(), crate::json::canonical(&v));
        assert_eq!(input.value(), v);
        assert_eq!(
            serde_json::to_string(&input).unwrap(),
            crate::json::canonical(&v)
        );
        // Inside a larger value, through `to_value`, as the writers do.
        let outer = serde_json::to_value(json!({"input": input})).unwrap();
        assert_eq!(outer["input"], v);
    }

    #[test]
    fn text_from_elsewhere_is_made_canonical() {
        let input: Input = serde_json::from_str(r#"{ "b" : 1,  "a":[ 1 , 2 ] }"#).unwrap();
        assert_eq!(input.as_str(), r#"{"a":[1,2],"b":1}"#);
        assert!(input.is_object());
        assert!(!Input::new(&json!([1])).is_object());
        assert_eq!(Input::default().as_str(), "{}");
    }
}
