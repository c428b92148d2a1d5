//! STUB (helper B).
use serde_json::Value;
use super::{ToolEnv, ToolOutput};
pub async fn run(_input: &Value, _env: &ToolEnv<'_>) -> ToolOutput { ToolOutput::error("not implemented") }
