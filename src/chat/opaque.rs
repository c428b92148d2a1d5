//! JSON a provider gave to be sent back as it is (OpenRouter's reasoning
//! details, a Responses reply's output items), kept as its text rather
//! than as a tree of values: one allocation per reply instead of one per
//! key and string. Invariant: the text is always compact JSON made by
//! `serde_json` from a value (two equal values hold equal text), and it is
//! written out verbatim.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

#[derive(Clone, Debug)]
pub struct Opaque(Box<RawValue>);

impl Opaque {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The JSON as it is, for writing out.
    pub fn raw(&self) -> &RawValue {
        &self.0
    }

    /// The JSON as a value (parsed anew).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }
}

impl From<Value> for Opaque {
    fn from(value: Value) -> Self {
        // A value always serialises; `null` stands in for what cannot happen.
        let raw =
            serde_json::value::to_raw_value(&value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Opaque(raw)
    }
}

impl PartialEq for Opaque {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for Opaque {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Read through a value (a raw value cannot come through the buffering
/// of an internally tagged enum), then kept as its compact text.
impl<'de> Deserialize<'de> for Opaque {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Opaque::from)
    }
}
