//! Checkpoints around a tool call, as a stage: just before a call that may
//! write runs (approved, holding its turn to write), the points asked for
//! so far are snapshotted, an own tool's file (write_file, edit_file) is
//! read for its pre-image, and a command is noted (outside git it is not
//! undoable); right after it ran, the own tool's change is kept with its
//! pre-image. A call that only reads passes untouched.
//!
//! The pre-image waits for the call's end in this stage's own table, by
//! thread and call id (the stage is shared by the subagents, whose writes
//! are kept too and whose models may number their calls alike).

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;

use super::{Call, CallStage, Said, StageCx};
use crate::agent::shared::lock;
use crate::checkpoint::live::FileState;
use crate::events::ThreadId;
use crate::tools::{Origin, Target, ToolOutput};

/// The stage, with the pre-images of the calls running now.
#[derive(Default)]
pub(in crate::agent) struct CallPoints {
    running: Mutex<HashMap<(ThreadId, String), Kept>>,
}

/// An own tool's file before the call: its path in the workspace and what
/// it held.
struct Kept {
    path: String,
    before: FileState,
}

impl CallStage for CallPoints {
    fn name(&self) -> &'static str {
        "checkpoints"
    }

    fn running<'a>(
        &'a self,
        cx: &'a StageCx<'a>,
        call: &'a Call<'a>,
        _said: &'a mut Said,
    ) -> BoxFuture<'a, Option<ToolOutput>> {
        Box::pin(async move {
            self.take_point(cx, call).await;
            None
        })
    }

    fn ran(&self, cx: &StageCx<'_>, call: &Call<'_>) {
        let key = (cx.host.events.thread(), call.id.to_string());
        if let Some(kept) = lock(&self.running).remove(&key) {
            cx.host
                .shared
                .checkpoints
                .changed(call.id, &kept.path, kept.before);
        }
    }
}

impl CallPoints {
    /// Before a writing call: the pre-image of what it will write.
    async fn take_point(&self, cx: &StageCx<'_>, call: &Call<'_>) {
        {
            let checkpoints = &cx.host.shared.checkpoints;
            if !cx.tools.may_write(call.name) || !checkpoints.enabled() {
                return;
            }
            checkpoints.settled().await;
            let builtin = cx
                .tools
                .spec(call.name)
                .is_some_and(|s| s.origin == Origin::Builtin);
            match cx.tools.target(call.name, call.input) {
                Target::File(path) if builtin => {
                    let workspace = &cx.host.shared.workspace;
                    let Some(rel) = workspace.resolve(path).ok().and_then(|resolved| {
                        workspace.relative(&resolved).to_str().map(str::to_string)
                    }) else {
                        return;
                    };
                    if let Some(before) = checkpoints.before(&rel) {
                        let key = (cx.host.events.thread(), call.id.to_string());
                        lock(&self.running).insert(key, Kept { path: rel, before });
                    }
                }
                Target::Command(command) => checkpoints.command(call.id, command),
                _ => {}
            }
        }
    }
}
