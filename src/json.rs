//! Small helpers for reading JSON from the model, shared by the plan and the
//! tools. Invariant: they describe a value, they never fail or panic.

use serde_json::Value;

/// `v` as indented JSON, cut (at a character) past `cap` bytes with a line
/// saying how long it is.
pub fn pretty(v: &Value, cap: usize) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    if text.len() > cap {
        let total = text.len();
        text.truncate(text.floor_char_boundary(cap));
        text.push_str(&format!("\n… ({total} bytes in all)"));
    }
    text
}

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
