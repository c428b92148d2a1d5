//! Small helpers for reading JSON from the model, shared by the plan and the
//! tools. Invariant: they describe a value, they never fail or panic.

use serde_json::Value;

/// The kind of a JSON value with its article, for messages (`a string`, `null`).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
