//! An MCP server's tool as one of Waypoint's: offered to the model under
//! its `mcp__SERVER__TOOL` name, gated like any other (its access is
//! unknown unless the server says it only reads), its output capped like
//! any other. Invariant: an interrupted call's future is dropped, which
//! makes the SDK tell the server the request was cancelled.

use futures_util::future::BoxFuture;
use rmcp::model::Tool as McpToolDef;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use std::time::Duration;

use super::name::tool_name;
use super::server::Progress;
use crate::chat::ImageSource;
use crate::tools::{
    Access, Failure, Origin, Tool, ToolCtx, ToolHost, ToolOutput, ToolSpec, ToolSummary,
    cap_output, summary_line,
};

/// One tool of a running server.
pub struct McpTool {
    server: String,
    name: String,
    def: McpToolDef,
    peer: Peer<RoleClient>,
    timeout: Duration,
    /// Where the server's progress reports come (none: not asked for).
    progress: Option<Progress>,
}

impl McpTool {
    pub fn new(server: &str, def: McpToolDef, peer: Peer<RoleClient>, timeout: Duration) -> Self {
        Self {
            server: server.to_string(),
            name: tool_name(server, &def.name),
            def,
            peer,
            timeout,
            progress: None,
        }
    }

    /// Shows the server's progress reports of each call with it.
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// Stops routing a call's progress when the call ends, however it ends.
struct Watching<'a>(&'a Progress, u64);

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

/// What the server says about a tool's effects: read-only only when it
/// says so.
pub fn access_of(def: &McpToolDef) -> Access {
    match def.annotations.as_ref().and_then(|a| a.read_only_hint) {
        Some(true) => Access::Read,
        _ => Access::External,
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        let description = self.def.description.as_deref().unwrap_or_default();
        ToolSpec {
            name: self.name.clone(),
            description: if description.is_empty() {
                format!("`{}` of the MCP server `{}`.", self.def.name, self.server)
            } else {
                description.to_string()
            },
            schema: Value::Object((*self.def.input_schema).clone()),
            access: access_of(&self.def),
            origin: Origin::Mcp {
                server: self.server.clone(),
            },
        }
    }

    fn summarize(&self, input: &Value) -> ToolSummary {
        // The arguments; the app names the call by its server and tool.
        let args = match input {
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        };
        ToolSummary {
            line: summary_line(&args),
            detail: crate::events::ToolDetail::Call {
                server: self.server.clone(),
                tool: self.def.name.to_string(),
                // Filled in when the call is put to the user: the input
                // is recorded once already.
                args: String::new(),
            },
        }
    }

    fn run<'a>(&'a self, input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let mut params = CallToolRequestParams::new(self.def.name.clone());
            if let Value::Object(map) = input {
                params = params.with_arguments(map.clone());
            }
            let (lines, mut progress) = tokio::sync::mpsc::unbounded_channel();
            let _watching = self.progress.as_ref().map(|p| Watching(p, p.watch(lines)));
            let call = tokio::time::timeout(self.timeout, self.peer.call_tool(params));
            tokio::pin!(call);
            let cap = ctx.env.config.output_cap;
            let done = loop {
                tokio::select! {
                    done = &mut call => break Some(done),
                    Some(line) = progress.recv() => ctx.host.progress(line),
                    () = ctx.env.cancel.cancelled() => break None,
                }
            };
            // Reports that came with the answer.
            while let Ok(line) = progress.try_recv() {
                ctx.host.progress(line);
            }
            let Some(done) = done else {
                return ToolOutput::interrupted(
                    &format!(
                        "The MCP server `{}` was told to cancel the call.",
                        self.server
                    ),
                    "",
                );
            };
            match done {
                Ok(Ok(result)) => output(result, cap, &ctx.host),
                Ok(Err(e)) => ToolOutput::error(format!(
                    "the MCP server `{}` did not answer the call: {e}",
                    self.server
                )),
                Err(_) => ToolOutput::failed(
                    Failure::TimedOut,
                    format!(
                        "the MCP server `{}` took longer than {} s (tool_timeout_sec); the call was cancelled",
                        self.server,
                        self.timeout.as_secs_f64()
                    ),
                ),
            }
        })
    }
}

/// The model's text of a result: each block in order (text as it is,
/// images said where they go, other kinds named with their size), the
/// structured content as JSON when nothing else says it, capped like any
/// tool's output; the images follow the results for a model that takes
/// them while the reply's image budget lasts, and are named as not shown
/// otherwise.
fn output(result: CallToolResult, cap: usize, host: &ToolHost<'_>) -> ToolOutput {
    let images = host.images();
    let mut shown = Vec::new();
    let mut parts: Vec<String> = Vec::with_capacity(result.content.len());
    for block in &result.content {
        let ContentBlock::Image(i) = block else {
            parts.push(block_text(block));
            continue;
        };
        parts.push(match (ImageSource::from_base64(&i.data), &images) {
            (Ok((source, info)), Ok(())) => match host.take_image(info.bytes) {
                Ok(()) => {
                    shown.push(source);
                    format!(
                        "[image: {info}, {} bytes; it follows the results]",
                        info.bytes
                    )
                }
                Err(why) => format!("[image: {info}, not shown: {why}]"),
            },
            (Ok((_, info)), Err(why)) => format!("[image: {info}, not shown: {why}]"),
            (Err(why), _) => format!("[an image ({}) that cannot be shown: {why}]", i.mime_type),
        });
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let text = cap_output(&parts.join("\n"), cap);
    let out = if result.is_error == Some(true) {
        ToolOutput::error(if text.is_empty() {
            "(no message)".into()
        } else {
            text
        })
    } else if text.is_empty() {
        ToolOutput::ok("(no output)")
    } else {
        ToolOutput::ok(text)
    };
    ToolOutput {
        images: shown,
        ..out
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Audio(a) => {
            format!("[audio: {}, {} bytes]", a.mime_type, a.data.len() / 4 * 3)
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len() / 4 * 3
            ),
            _ => "[a resource of a kind Waypoint does not read]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            let about = link.description.as_deref().unwrap_or_default();
            format!("[resource link: {} <{}>] {about}", link.name, link.uri)
                .trim_end()
                .to_string()
        }
        _ => "[content of a kind Waypoint does not read]".to_string(),
    }
}
