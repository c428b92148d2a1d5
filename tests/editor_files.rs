//! The file tools through an editor (an ACP client's `fs/read_text_file`
//! and `fs/write_text_file`), driven by the engine with a scripted model:
//! read_file shows the editor's unsaved buffer, edit_file changes that
//! buffer and write_file writes through the editor (which saves), undo
//! restores the files on disk; a subagent's file tools use the same
//! editor; a file a rule refuses never reaches it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use scripted_support::{scenario, start_with, stop, tool_results, turn_end, until};
use serde_json::json;
use waypoint::agent::{AgentConfig, AgentHandle, SessionSetup};
use waypoint::checkpoint::Target;
use waypoint::events::{CheckpointAnswer, CheckpointOp, Event, Op};
use waypoint::safety::access::{Kind, Pattern};
use waypoint::session::SessionStore;
use waypoint::tools::editor::EditorFiles;

/// An editor with buffers of its own (unsaved text) that saves what is
/// written through it, as an editor does; every call recorded.
#[derive(Debug, Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    calls: Mutex<Vec<String>>,
}

impl EditorFiles for Editor {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            self.calls
                .lock()
                .unwrap()
                .push(format!("read {}", path.display()));
            Ok(self.buffers.lock().unwrap().get(path).cloned())
        })
    }
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.calls
                .lock()
                .unwrap()
                .push(format!("write {}", path.display()));
            std::fs::write(path, text).map_err(|e| e.to_string())?;
            self.buffers
                .lock()
                .unwrap()
                .insert(path.to_path_buf(), text.to_string());
            Ok(())
        })
    }
}

impl Editor {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

struct Rig {
    h: AgentHandle,
    dir: PathBuf,
    editor: Arc<Editor>,
    model: Arc<scripted_support::Recording>,
    _ws: tempfile::TempDir,
    _home: tempfile::TempDir,
}

/// An engine playing `turns` in `ws`, its file tools through an editor
/// (`config` adjusted first).
fn rig(
    turns: serde_json::Value,
    ws: tempfile::TempDir,
    config: impl FnOnce(&mut AgentConfig),
) -> Rig {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path().join("sessions"));
    let editor = Arc::new(Editor::default());
    let mut agent = AgentConfig::default();
    agent.tools.files.editor = Some(editor.clone());
    config(&mut agent);
    let model = scenario(turns);
    let h = start_with(model.clone(), ws.path(), agent, SessionSetup::New(store));
    Rig {
        h,
        dir: ws.path().canonicalize().unwrap(),
        editor,
        model,
        _ws: ws,
        _home: home,
    }
}

impl Rig {
    /// `rel`'s absolute path in the workspace.
    fn at(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn text(&self, rel: &str) -> String {
        std::fs::read_to_string(self.at(rel)).unwrap()
    }

    /// The tool results the model was sent, in order.
    fn results(&self) -> Vec<String> {
        let requests = self.model.requests.lock().unwrap();
        let last = requests.last().unwrap();
        tool_results(last)
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    }

    /// A turn of the root thread, its children's events let by.
    async fn turn(&mut self, text: &str) {
        self.h.ops.send(Op::Submit { text: text.into() }).unwrap();
        loop {
            let envelope = tokio::time::timeout(Duration::from_secs(30), self.h.events.recv())
                .await
                .expect("an event within 30 s")
                .expect("engine alive");
            if envelope.thread.is_root() && turn_end(&envelope.event) {
                return;
            }
        }
    }

    /// Takes back the last turn's changes to files.
    async fn undo_last_turn(&mut self) -> String {
        for confirm in [false, true] {
            let action = CheckpointOp::Undo {
                target: Target::LastTurn,
                files: true,
                conversation: false,
                confirm,
            };
            self.h.ops.send(Op::Checkpoint { action }).unwrap();
            let events = until(&mut self.h.events, |e| {
                matches!(e, Event::Checkpoint { .. } | Event::Error { .. })
            })
            .await;
            match events.last() {
                Some(Event::Checkpoint {
                    answer: CheckpointAnswer::Done { report, .. },
                }) => return report.clone(),
                Some(Event::Checkpoint { .. }) if !confirm => {}
                other => panic!("{other:?}"),
            }
        }
        unreachable!("the confirmed undo answers")
    }
}

#[tokio::test]
async fn the_models_file_tools_go_through_the_editor_and_undo_restores_the_disk() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "saved\n").unwrap();
    let mut r = rig(
        json!([
            {"tool_calls": [{"name": "read_file", "input": {"path": "a.txt"}}]},
            {"tool_calls": [{"name": "edit_file", "input": {"path": "a.txt", "old_text": "unsaved", "new_text": "edited"}}]},
            {"tool_calls": [{"name": "write_file", "input": {"path": "new.txt", "content": "made\n"}}]},
            {"text": "Done."}
        ]),
        ws,
        |_| {},
    );
    let (a, new) = (r.at("a.txt"), r.at("new.txt"));
    r.editor
        .buffers
        .lock()
        .unwrap()
        .insert(a.clone(), "unsaved\n".to_string());
    r.turn("change things").await;
    let results = r.results();
    assert_eq!(results[0], "     1\tunsaved\n", "the editor's buffer");
    assert!(results[1].starts_with("Edited a.txt"), "{results:?}");
    assert!(results[2].starts_with("Wrote 5 bytes"), "{results:?}");
    let d = |what: &str, p: &PathBuf| format!("{what} {}", p.display());
    assert_eq!(
        r.editor.calls(),
        [
            d("read", &a),
            d("read", &a),
            d("write", &a),
            d("write", &new)
        ]
    );
    // The editor saved them.
    assert_eq!(r.text("a.txt"), "edited\n");
    assert_eq!(r.text("new.txt"), "made\n");
    let report = r.undo_last_turn().await;
    assert_eq!(r.text("a.txt"), "saved\n", "{report}");
    assert!(!new.exists(), "{report}");
    stop(r.h).await;
}

#[tokio::test]
async fn a_subagents_file_tools_use_the_same_editor() {
    let ws = tempfile::tempdir().unwrap();
    let task =
        json!({"description": "Write the note", "prompt": "Write note.txt.", "agent": "general"});
    let mut r = rig(
        json!([
            {"tool_calls": [{"name": "task", "input": task}]},
            {"tool_calls": [{"name": "write_file", "input": {"path": "note.txt", "content": "from the child\n"}}]},
            {"text": "Report: wrote note.txt."},
            {"text": "Done."}
        ]),
        ws,
        |_| {},
    );
    r.turn("delegate").await;
    // The parent's one call was the task, whose child wrote the file.
    let results = r.results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("Report: wrote note.txt."),
        "{results:?}"
    );
    assert_eq!(
        r.editor.calls(),
        [format!("write {}", r.at("note.txt").display())]
    );
    assert_eq!(r.text("note.txt"), "from the child\n");
    stop(r.h).await;
}

#[tokio::test]
async fn a_file_a_rule_refuses_never_reaches_the_editor() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(ws.path().join("locked.txt"), "keep\n").unwrap();
    let root = ws.path().canonicalize().unwrap();
    let mut r = rig(
        json!([
            {"tool_calls": [{"name": "read_file", "input": {"path": ".env"}}]},
            {"tool_calls": [{"name": "write_file", "input": {"path": "locked.txt", "content": "x"}}]},
            {"tool_calls": [{"name": "edit_file", "input": {"path": "locked.txt", "old_text": "keep", "new_text": "x"}}]},
            {"text": "Done."}
        ]),
        ws,
        |config| {
            let access = &mut config.tools.rules.access;
            access.read.add(
                Kind::Deny,
                Pattern {
                    rule: "Read(./.env)".into(),
                    pattern: root.join(".env").display().to_string(),
                },
            );
            access.edit.add(
                Kind::Deny,
                Pattern {
                    rule: "Edit(./locked.txt)".into(),
                    pattern: root.join("locked.txt").display().to_string(),
                },
            );
        },
    );
    r.turn("try").await;
    let results = r.results();
    assert_eq!(results.len(), 3, "{results:?}");
    for result in &results {
        assert!(result.starts_with("Blocked by a rule"), "{results:?}");
    }
    assert_eq!(r.editor.calls(), Vec::<String>::new());
    assert_eq!(r.text("locked.txt"), "keep\n");
    stop(r.h).await;
}
