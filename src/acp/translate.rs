//! The engine's events as ACP session updates: text and thoughts as
//! chunks, tool calls with their kind, diff and output, the plan after
//! every revision, the approval mode as the session's mode. Pure: the
//! session's pump sends what this returns, and a stored session's history
//! goes through the same translation when an editor loads it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk,
    CurrentModeUpdate, Diff, SessionUpdate, Terminal, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    UnstructuredCommandInput, UsageUpdate,
};

use super::modes;
use super::plan::Plans;
use crate::events::{ApprovalMode, Envelope, Event, ToolDetail, ToolStatus, ToolSummary};

/// How much of a running command's output a progress update carries: its
/// last bytes (the whole output comes with the call's end).
const LIVE_TAIL: usize = 16 * 1024;

/// The editor's terminals the session's commands run in (`acp_terminal =
/// "editor"`), by the id of the call the client knows ([`call_id`]): such
/// a call shows its terminal, live and after its end, not its output as text.
pub type Terminals = Arc<Mutex<HashMap<String, String>>>;

/// What the translation remembers between events: each running call's
/// output so far and what its start showed, and the plans.
#[derive(Debug)]
pub struct Translator {
    root: PathBuf,
    calls: HashMap<String, Running>,
    pub plans: Plans,
    /// The user's own messages are the client's already while it prompts;
    /// a replayed history sends them.
    pub replaying: bool,
    /// The mode the client was last told (in the session's start too).
    mode: Option<ApprovalMode>,
    /// The calls running in an editor's terminal.
    pub terminals: Terminals,
}

#[derive(Debug, Default)]
struct Running {
    output: String,
    diff: Option<ToolCallContent>,
}

impl Translator {
    /// `root`: the workspace, against which the calls' relative paths are made absolute.
    /// `mode`: the one the session starts in, which the client is told
    /// with the session.
    pub fn new(root: &Path, plan_ids: bool, mode: ApprovalMode) -> Self {
        Self {
            root: root.to_path_buf(),
            calls: HashMap::new(),
            plans: Plans::new(plan_ids),
            replaying: false,
            mode: Some(mode),
            terminals: Terminals::default(),
        }
    }

    /// The updates one envelope makes (none for most bookkeeping events).
    pub fn updates(&mut self, envelope: &Envelope) -> Vec<SessionUpdate> {
        let thread = envelope.thread.0;
        let root = thread == 0;
        match &envelope.event {
            Event::TextDelta { text } if root => vec![chunk(Chunk::Agent, text)],
            Event::ReasoningDelta { text } if root => vec![chunk(Chunk::Thought, text)],
            Event::UserMessage { text } if root && self.replaying => {
                vec![chunk(Chunk::User, text)]
            }
            Event::ToolCallBegin {
                id,
                name,
                summary,
                input,
                plan_item_id,
                ..
            } => {
                if let Some(item) = plan_item_id {
                    self.plans.call_in_item(id, item);
                }
                vec![self.begin(&call_id(thread, id), name, summary, input)]
            }
            Event::ToolCallOutputDelta { id, chunk } => self.output(&call_id(thread, id), chunk),
            Event::ToolCallEnd {
                id,
                status,
                output,
                exit_code,
                ..
            } => vec![self.end(&call_id(thread, id), *status, output, *exit_code)],
            Event::PlanUpdated {
                items, revision, ..
            } => self.plans.revised(
                envelope.thread,
                envelope.parent_call.as_deref(),
                items,
                *revision,
            ),
            Event::PlanProposed { revision } if root => self.plans.proposed(*revision),
            Event::PlanApproved { .. } if root => self.plans.approved(),
            Event::ApprovalMode { mode, .. } if root && self.mode != Some(*mode) => {
                self.mode = Some(*mode);
                vec![SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    modes::id(*mode),
                ))]
            }
            Event::ContextUsage { used, window } if root && *window > 0 => {
                vec![SessionUpdate::UsageUpdate(UsageUpdate::new(*used, *window))]
            }
            Event::Error { message, .. } if root => {
                vec![chunk(Chunk::Agent, &format!("\n\n⚠ {message}\n"))]
            }
            Event::Catalog { entries } if root => vec![commands(entries)],
            Event::History { events } => {
                let was = std::mem::replace(&mut self.replaying, true);
                let out = events.iter().flat_map(|e| self.updates(e)).collect();
                self.replaying = was;
                out
            }
            _ => Vec::new(),
        }
    }

    fn begin(
        &mut self,
        id: &str,
        name: &str,
        summary: &ToolSummary,
        input: &serde_json::Value,
    ) -> SessionUpdate {
        let mut call = ToolCall::new(id.to_string(), title(name, &summary.line))
            .kind(kind(name))
            .status(ToolCallStatus::InProgress);
        if !input.is_null() {
            call = call.raw_input(input.clone());
        }
        let mut running = Running::default();
        if let Some((diff, path)) = diff_of(&self.root, &summary.detail) {
            call = call
                .content(vec![diff.clone()])
                .locations(vec![ToolCallLocation::new(path)]);
            running.diff = Some(diff);
        } else if let Some(path) = path_of(&self.root, name, input) {
            call = call.locations(vec![ToolCallLocation::new(path)]);
        }
        self.calls.insert(id.to_string(), running);
        SessionUpdate::ToolCall(call)
    }

    fn output(&mut self, id: &str, piece: &str) -> Vec<SessionUpdate> {
        if self.terminal(id).is_some() {
            // The editor shows it in its terminal.
            return Vec::new();
        }
        let Some(running) = self.calls.get_mut(id) else {
            return Vec::new();
        };
        running.output.push_str(piece);
        let tail = tail(&running.output, LIVE_TAIL);
        let fields = ToolCallUpdateFields::new().content(vec![text_content(&fenced(tail))]);
        vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            fields,
        ))]
    }

    fn end(
        &mut self,
        id: &str,
        status: ToolStatus,
        output: &str,
        exit: Option<i32>,
    ) -> SessionUpdate {
        let running = self.calls.remove(id).unwrap_or_default();
        let mut content: Vec<ToolCallContent> = running.diff.into_iter().collect();
        let terminal = self.terminal(id);
        if let Some(terminal) = &terminal {
            content.push(ToolCallContent::Terminal(Terminal::new(terminal.clone())));
            self.terminals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(id);
        }
        // Beside a terminal, only why the call failed (a timeout, …).
        let failed = !matches!(status, ToolStatus::Ok);
        if !output.trim().is_empty() && (terminal.is_none() || failed) {
            content.push(text_content(&fenced(output)));
        }
        let status = match (status, exit) {
            (ToolStatus::Ok, None | Some(0)) => ToolCallStatus::Completed,
            _ => ToolCallStatus::Failed,
        };
        let mut fields = ToolCallUpdateFields::new().status(status).content(content);
        if let Some(code) = exit {
            fields = fields.raw_output(serde_json::json!({ "exit_code": code }));
        }
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields))
    }
}

impl Translator {
    /// The terminal the call `id` runs in, if it runs in the editor's.
    fn terminal(&self, id: &str) -> Option<String> {
        let terminals = self.terminals.lock().unwrap_or_else(|e| e.into_inner());
        terminals.get(id).cloned()
    }
}

/// The skills and custom commands as the client's `/` commands: a
/// prompt `/NAME args` runs one.
fn commands(entries: &[crate::events::CatalogEntry]) -> SessionUpdate {
    let commands = entries
        .iter()
        .map(|e| {
            let command = AvailableCommand::new(e.name.clone(), e.description.clone());
            match &e.hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint.clone()),
                )),
                None => command,
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// A call's id as the client sees it: a subagent's calls are prefixed
/// with their thread, so two threads' ids never meet.
pub fn call_id(thread: u32, id: &str) -> String {
    if thread == 0 {
        id.to_string()
    } else {
        format!("t{thread}/{id}")
    }
}

enum Chunk {
    User,
    Agent,
    Thought,
}

fn chunk(which: Chunk, text: &str) -> SessionUpdate {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text.to_string())));
    match which {
        Chunk::User => SessionUpdate::UserMessageChunk(chunk),
        Chunk::Agent => SessionUpdate::AgentMessageChunk(chunk),
        Chunk::Thought => SessionUpdate::AgentThoughtChunk(chunk),
    }
}

pub fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text.to_string())))
}

/// A call's title: the tool and its one-line summary.
pub fn title(name: &str, line: &str) -> String {
    if line.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {line}")
    }
}

/// The ACP kind of a tool, for the client's icon and grouping.
pub fn kind(name: &str) -> ToolKind {
    match name {
        "read_file" | "todo_read" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        "bash" | "bash_output" | "kill_job" => ToolKind::Execute,
        "grep" | "glob" => ToolKind::Search,
        "web_fetch" => ToolKind::Fetch,
        "todo_write" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The diff a file-changing call shows, with the file's absolute path.
pub fn diff_of(root: &Path, detail: &ToolDetail) -> Option<(ToolCallContent, PathBuf)> {
    let ToolDetail::Diff { path, old, new, .. } = detail else {
        return None;
    };
    let path = root.join(path);
    let mut diff = Diff::new(path.clone(), new.clone());
    if !old.is_empty() {
        diff = diff.old_text(old.clone());
    }
    Some((ToolCallContent::Diff(diff), path))
}

/// The file a reading call names, for the client to follow along.
fn path_of(root: &Path, name: &str, input: &serde_json::Value) -> Option<PathBuf> {
    if !matches!(name, "read_file" | "write_file" | "edit_file") {
        return None;
    }
    let path = input.get("path").and_then(serde_json::Value::as_str)?;
    Some(root.join(path))
}

/// A command's output as Markdown the client shows verbatim.
fn fenced(text: &str) -> String {
    let fence = if text.contains("```") { "````" } else { "```" };
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// The last `max` bytes of `text`, at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
