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

/// A tool call's arguments as a model wrote them: a JSON object (empty
/// text is an empty one), or, as some models send it, a JSON string
/// holding the object (`"{\"path\": \"a\"}"`, even twice over); `Err`
/// says why not, for the model.
pub fn arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let mut value = match serde_json::from_str::<Value>(raw) {
        Ok(value) => value,
        Err(e) => {
            let shown: String = raw.chars().take(300).collect();
            return Err(format!("the input is not valid JSON ({e}): {shown}"));
        }
    };
    // A string holding the object, or a string holding that string.
    for _ in 0..2 {
        match &value {
            Value::String(text) => match serde_json::from_str::<Value>(text) {
                Ok(inner @ (Value::Object(_) | Value::String(_))) => value = inner,
                _ => break,
            },
            _ => break,
        }
    }
    match value {
        Value::Object(_) => Ok(value),
        other => Err(format!("the input must be a JSON object, got `{other}`")),
    }
}

/// `value` as compact JSON with the keys of every object sorted by their
/// bytes, whatever order the file (or serde_json's map) has them in: the
/// same entry always gives the same text, and different entries different
/// texts (strings are JSON-escaped, so no two structures print alike).
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        // Strings, numbers, booleans and null print one way.
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_an_object_or_a_string_holding_one() {
        assert_eq!(arguments(r#"{"path": "a"}"#).unwrap(), json!({"path": "a"}));
        assert_eq!(arguments("  ").unwrap(), json!({}));
        // Encoded as a JSON string, once or twice.
        assert_eq!(
            arguments(r#""{\"path\": \"a\"}""#).unwrap(),
            json!({"path": "a"})
        );
        let twice = serde_json::to_string(&json!(r#""{\"path\": \"a\"}""#)).unwrap();
        assert_eq!(arguments(&twice).unwrap(), json!({"path": "a"}));
        // Anything else is said.
        assert_eq!(
            arguments("[1, 2]").unwrap_err(),
            "the input must be a JSON object, got `[1,2]`"
        );
        assert!(
            arguments(r#""just words""#)
                .unwrap_err()
                .contains("must be a JSON object")
        );
        assert!(
            arguments(r#"{"path": "#)
                .unwrap_err()
                .starts_with("the input is not valid JSON")
        );
    }
}
