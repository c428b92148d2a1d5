//! The plan as ACP sends it: every revision whole, each item an entry with
//! its status. A client that offers plan operations gets each thread's
//! plan under its own id (`thread-0` the root, `thread-N` a subagent's);
//! any other gets one plan, a subagent's items folded under the parent
//! item that started it. A plan proposed in plan mode says so in its
//! `_meta` until it is approved.

use std::collections::{BTreeMap, HashMap};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Meta, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    PlanUpdate, PlanUpdateContent, SessionUpdate, TextContent,
};
use serde_json::json;

use crate::events::ThreadId;
use crate::todo::{TodoItem, TodoStatus};

/// How a folded subagent's entries are marked under their parent item.
pub const CHILD_MARK: &str = "  ↳ ";

/// The plans of a session's threads, as last sent.
#[derive(Debug)]
pub struct Plans {
    /// The client takes plan ids (`plan_update`).
    ids: bool,
    threads: BTreeMap<u32, Thread>,
    /// Which plan item each call of the root was made in: a subagent's
    /// plan folds under the item its `task` call belongs to.
    call_items: HashMap<String, String>,
    proposed: Option<u32>,
}

#[derive(Debug, Default)]
struct Thread {
    items: Vec<TodoItem>,
    revision: u32,
    /// The root's item this (child) thread works for.
    under: Option<String>,
}

impl Plans {
    pub fn new(ids: bool) -> Self {
        Self {
            ids,
            threads: BTreeMap::new(),
            call_items: HashMap::new(),
            proposed: None,
        }
    }

    /// The plan id of a thread's plan.
    pub fn id(thread: u32) -> String {
        format!("thread-{thread}")
    }

    /// Call `call` (of the root) was made while item `item` was in progress.
    pub fn call_in_item(&mut self, call: &str, item: &str) {
        self.call_items.insert(call.to_string(), item.to_string());
    }

    /// A thread's plan was revised: the update(s) that show it.
    pub fn revised(
        &mut self,
        thread: ThreadId,
        parent_call: Option<&str>,
        items: &[TodoItem],
        revision: u32,
    ) -> Vec<SessionUpdate> {
        let under = parent_call.and_then(|c| self.call_items.get(c).cloned());
        let entry = self.threads.entry(thread.0).or_default();
        entry.items = items.to_vec();
        entry.revision = revision;
        if thread.0 != 0 {
            entry.under = under;
        }
        if self.ids {
            vec![self.by_id(thread.0)]
        } else {
            vec![self.folded()]
        }
    }

    /// The root plan was proposed (plan mode): shown as such, with what
    /// the user can do about it.
    pub fn proposed(&mut self, revision: u32) -> Vec<SessionUpdate> {
        self.proposed = Some(revision);
        let note = format!(
            "\n\nPlan proposed (revision {revision}). To approve it, switch this session's mode \
             to ask, auto-edit, auto or yolo: it then runs in that mode. To change it, reply.\n"
        );
        vec![
            self.root(),
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(note),
            ))),
        ]
    }

    /// The proposed plan was approved.
    pub fn approved(&mut self) -> Vec<SessionUpdate> {
        self.proposed = None;
        vec![self.root()]
    }

    /// A plan is proposed and waits for approval.
    pub fn is_proposed(&self) -> bool {
        self.proposed.is_some()
    }

    fn root(&self) -> SessionUpdate {
        if self.ids {
            self.by_id(0)
        } else {
            self.folded()
        }
    }

    fn meta(&self, thread: u32) -> Meta {
        let revision = self.threads.get(&thread).map_or(0, |t| t.revision);
        let mut about = json!({ "revision": revision, "thread": thread });
        if thread == 0 && self.proposed.is_some() {
            about["proposed"] = json!(true);
        }
        let mut meta = Meta::new();
        meta.insert("waypoint".to_string(), about);
        meta
    }

    fn by_id(&self, thread: u32) -> SessionUpdate {
        let items = self
            .threads
            .get(&thread)
            .map(|t| t.items.as_slice())
            .unwrap_or_default();
        let entries = items.iter().map(|i| entry(i, "")).collect();
        let content = PlanUpdateContent::items(Self::id(thread), entries);
        SessionUpdate::PlanUpdate(PlanUpdate::new(content).meta(self.meta(thread)))
    }

    /// One plan: the root's items, each followed by the items of the
    /// subagents that work for it; a subagent's whose item is unknown at
    /// the end.
    fn folded(&self) -> SessionUpdate {
        let root = self
            .threads
            .get(&0)
            .map(|t| t.items.as_slice())
            .unwrap_or_default();
        let children: Vec<&Thread> = self.threads.range(1..).map(|(_, t)| t).collect();
        let mut entries = Vec::new();
        for item in root {
            entries.push(entry(item, ""));
            for child in children
                .iter()
                .filter(|c| c.under.as_deref() == Some(&item.id))
            {
                entries.extend(child.items.iter().map(|i| entry(i, CHILD_MARK)));
            }
        }
        let known = |c: &&&Thread| {
            c.under
                .as_deref()
                .is_some_and(|u| root.iter().any(|i| i.id == u))
        };
        for child in children.iter().filter(|c| !known(c)) {
            entries.extend(child.items.iter().map(|i| entry(i, CHILD_MARK)));
        }
        SessionUpdate::Plan(Plan::new(entries).meta(self.meta(0)))
    }
}

/// An item as an entry: its text, status and (Waypoint's items have no
/// priority) medium priority; its id in `_meta`.
fn entry(item: &TodoItem, mark: &str) -> PlanEntry {
    let status = match item.status {
        TodoStatus::Pending => PlanEntryStatus::Pending,
        TodoStatus::InProgress => PlanEntryStatus::InProgress,
        TodoStatus::Completed => PlanEntryStatus::Completed,
    };
    let mut meta = Meta::new();
    meta.insert("waypoint".to_string(), json!({ "id": item.id }));
    PlanEntry::new(
        format!("{mark}{}", item.content),
        PlanEntryPriority::Medium,
        status,
    )
    .meta(meta)
}
