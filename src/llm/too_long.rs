//! Whether a provider's error says the conversation is longer than the
//! model's context window, read where the error arrives (each wire's
//! error object), so the engine matches a variant instead of reading
//! prose. From the code where the API gives one (OpenAI's and the
//! Responses API's `context_length_exceeded`, llama.cpp's
//! `exceed_context_size_error`, Anthropic's `request_too_large`), from the
//! words where the server gives only words (Anthropic's
//! `invalid_request_error` "prompt is too long: …", vLLM's "maximum
//! context length is … tokens", Ollama's and llama.cpp's "exceeds the
//! available context size").

use serde_json::Value;

/// The codes (`code` or `type`) that say so.
const CODES: [&str; 3] = [
    "context_length_exceeded",
    "exceed_context_size_error",
    "request_too_large",
];

/// The words that say so, where a server gives no code for it.
const WORDS: [&str; 5] = [
    "prompt is too long",
    "maximum context length",
    "context length exceeded",
    "exceeds the available context size",
    "context window",
];

/// True when the error object `err` (the value of a body's `error`, the
/// body itself, or a bare string) says the prompt is too long.
pub fn says_too_long(err: &Value) -> bool {
    let field = |key: &str| err.get(key).and_then(Value::as_str).unwrap_or("");
    if [field("code"), field("type")]
        .iter()
        .any(|code| CODES.contains(code))
    {
        return true;
    }
    let message = match err {
        Value::String(text) => text.to_lowercase(),
        _ => field("message").to_lowercase(),
    };
    WORDS.iter().any(|words| message.contains(words))
}

/// The same of an error response's body `body`: its `error` object, else
/// the body as JSON, else its text.
pub fn body_says_too_long(body: &str) -> bool {
    match serde_json::from_str::<Value>(body) {
        Ok(v) => says_too_long(v.get("error").unwrap_or(&v)),
        Err(_) => says_too_long(&Value::String(body.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_wire_saying_the_prompt_is_too_long_is_recognised() {
        // OpenAI Chat Completions (HTTP 400).
        assert!(body_says_too_long(
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#
        ));
        // Anthropic (HTTP 400, no code: its words).
        assert!(body_says_too_long(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#
        ));
        // Anthropic's 413.
        assert!(body_says_too_long(
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#
        ));
        // The Responses API's `response.failed` error object.
        assert!(says_too_long(
            &json!({"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model."})
        ));
        // llama.cpp's server.
        assert!(body_says_too_long(
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#
        ));
        // A plain-text body.
        assert!(body_says_too_long(
            "This model's maximum context length is 8192 tokens"
        ));
    }

    #[test]
    fn other_errors_are_not_taken_for_it() {
        assert!(!body_says_too_long(
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
        ));
        assert!(!body_says_too_long(
            r#"{"error":{"message":"The model `gpt-9` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#
        ));
        assert!(!says_too_long(
            &json!({"code": "server_error", "message": "try again"})
        ));
        assert!(!body_says_too_long("<html>Bad Gateway</html>"));
    }
}
