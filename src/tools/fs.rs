//! STUB (helper B).
use serde_json::Value;
use super::{ToolEnv, ToolOutput};
pub async fn read_file(_input: &Value, _env: &ToolEnv<'_>) -> ToolOutput { ToolOutput::error("not implemented") }
pub async fn write_file(_input: &Value, _env: &ToolEnv<'_>) -> ToolOutput { ToolOutput::error("not implemented") }
pub async fn edit_file(_input: &Value, _env: &ToolEnv<'_>) -> ToolOutput { ToolOutput::error("not implemented") }
