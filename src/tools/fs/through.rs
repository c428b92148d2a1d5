//! The file tools' text in and out: through the editor holding the
//! workspace's files when there is one ([`crate::tools::FileTools::editor`]),
//! else the disk. Invariants: the callers make every check first (the path
//! resolved inside the workspace and opened through its root fd, its kind,
//! size and binary content judged on disk; a write's target checked as a
//! disk write checks it), so only the text of a file a tool accepts is
//! asked of or given to the editor; a failed editor read falls back to the
//! disk and says so; a failed editor write is the call's error, and the
//! file is then not written behind the editor's back. A disk write is
//! atomic (temp file in the same folder, synced, renamed over the target).

use std::io;
use std::path::Path;

use crate::tools::{ToolEnv, summary_line};

/// Where a file's text is to come from.
pub(super) enum Buffer {
    /// The editor's text, unsaved changes included.
    Editor(String),
    /// The disk: there is no editor, or it cannot tell, or (the note says
    /// so, for the output) it failed.
    Disk(Option<String>),
    /// The user interrupted while the editor was asked.
    Interrupted,
}

/// The editor's text of the workspace file at `resolved`, a path the
/// caller has checked (the editor is given the file's real path, every
/// symlink followed).
pub(super) async fn buffer(env: &ToolEnv<'_>, resolved: &Path) -> Buffer {
    let Some(editor) = &env.config.files.editor else {
        return Buffer::Disk(None);
    };
    let real = match env.workspace.real(resolved) {
        Ok(real) => real,
        Err(why) => return Buffer::Disk(Some(fallback_note(&why))),
    };
    tokio::select! {
        read = editor.read(&real) => match read {
            Ok(Some(text)) => Buffer::Editor(text),
            Ok(None) => Buffer::Disk(None),
            Err(why) => Buffer::Disk(Some(fallback_note(&why))),
        },
        () = env.cancel.cancelled() => Buffer::Interrupted,
    }
}

/// The one line an output carries when the editor's buffer could not be
/// read and the disk was.
fn fallback_note(why: &str) -> String {
    let why = summary_line(why.lines().next().unwrap_or_default().trim());
    format!("(The editor could not give its buffer ({why}); this is the file on disk.)")
}

/// Writes `text` to the workspace file at `resolved` (a `resolve`d path):
/// through the editor when there is one, after the checks a disk write
/// makes (`create_parents` makes the missing folders, on disk), else
/// atomically to disk. Returns whether the file existed.
pub(super) async fn store(
    env: &ToolEnv<'_>,
    resolved: &Path,
    text: &str,
    shown: &str,
    create_parents: bool,
) -> Result<bool, String> {
    let Some(editor) = &env.config.files.editor else {
        let bytes = text.as_bytes().to_vec();
        return atomic_write(env.workspace, resolved, bytes, shown, create_parents).await;
    };
    let files = env.workspace.files().clone();
    let rel = env.workspace.relative(resolved).to_path_buf();
    let existed = tokio::task::spawn_blocking(move || files.prepare(&rel, create_parents))
        .await
        .map_err(|e| format!("writing `{shown}` was aborted: {e}"))?
        .map_err(|e| write_error(&e, shown))?;
    // The link's target itself: the editor never replaces a link.
    let real = env.workspace.real(resolved)?;
    editor
        .write(&real, text)
        .await
        .map_err(|why| format!("the editor could not write `{shown}`: {why}"))?;
    Ok(existed)
}

/// Replaces the workspace file at `resolved` (a `resolve`d path) with
/// `bytes` atomically, through the workspace's root fd: a symlink there is
/// written through to its target inside, an existing file keeps its
/// permissions. `create_parents` makes missing folders. Returns whether the
/// file existed. Blocking work runs on the blocking pool.
async fn atomic_write(
    workspace: &crate::tools::Workspace,
    resolved: &Path,
    bytes: Vec<u8>,
    shown: &str,
    create_parents: bool,
) -> Result<bool, String> {
    let files = workspace.files().clone();
    let rel = workspace.relative(resolved).to_path_buf();
    let options = crate::fsx::WriteOptions {
        create_parents,
        temp_prefix: TEMP_PREFIX,
        mode: None,
    };
    let written = tokio::task::spawn_blocking(move || files.replace(&rel, &bytes, &options))
        .await
        .map_err(|e| format!("writing `{shown}` was aborted: {e}"))?;
    written.map_err(|e| write_error(&e, shown))
}

/// What the model reads when `shown` cannot be written.
fn write_error(e: &io::Error, shown: &str) -> String {
    match e.kind() {
        io::ErrorKind::IsADirectory => {
            format!("`{shown}` is a directory; cannot write a file there")
        }
        _ => match crate::fsx::not_regular(e) {
            Some(kind) => format!("`{shown}` is not a regular file (it is {kind})"),
            None => format!("cannot write `{shown}`: {e}"),
        },
    }
}

/// Name prefix of the temporary files a write creates beside its target.
const TEMP_PREFIX: &str = ".waypoint-";

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    use futures_util::future::BoxFuture;
    use serde_json::json;

    use crate::tools::editor::EditorFiles;
    use crate::tools::fs::fixture;
    use crate::tools::test_support::Fixture;

    /// An editor holding buffers in memory (never saving them to disk),
    /// recording every call; its reads or writes may fail.
    #[derive(Debug, Default)]
    struct FakeEditor {
        buffers: Mutex<HashMap<PathBuf, String>>,
        calls: Mutex<Vec<String>>,
        failing_reads: bool,
        failing_writes: bool,
    }

    impl EditorFiles for FakeEditor {
        fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>> {
            Box::pin(async move {
                self.calls
                    .lock()
                    .unwrap()
                    .push(format!("read {}", path.display()));
                if self.failing_reads {
                    return Err("the client went away\nmore detail".to_string());
                }
                Ok(self.buffers.lock().unwrap().get(path).cloned())
            })
        }
        fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>> {
            Box::pin(async move {
                self.calls
                    .lock()
                    .unwrap()
                    .push(format!("write {}", path.display()));
                if self.failing_writes {
                    return Err("the buffer is read-only".to_string());
                }
                self.buffers
                    .lock()
                    .unwrap()
                    .insert(path.to_path_buf(), text.to_string());
                Ok(())
            })
        }
    }

    impl FakeEditor {
        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
        fn buffer(&self, path: &Path) -> Option<String> {
            self.buffers.lock().unwrap().get(path).cloned()
        }
    }

    /// A fixture whose file tools go through `editor`.
    fn with(editor: FakeEditor) -> (Fixture, Arc<FakeEditor>) {
        let mut f = fixture();
        let editor = Arc::new(editor);
        f.config.files.editor = Some(editor.clone());
        (f, editor)
    }

    /// `rel`'s absolute path in `f`'s workspace.
    fn abs(f: &Fixture, rel: &str) -> PathBuf {
        f.ws.root().join(rel)
    }

    #[tokio::test]
    async fn read_file_shows_the_editors_unsaved_text_not_the_disks() {
        let (f, editor) = with(FakeEditor::default());
        f.put("a.txt", "saved\n");
        f.put("b.txt", "only on disk\n");
        editor
            .buffers
            .lock()
            .unwrap()
            .insert(abs(&f, "a.txt"), "unsaved\nsecond\n".to_string());
        let out = f.read(json!({"path": "a.txt", "offset": 2})).await;
        assert_eq!(out.content, "     2\tsecond\n");
        // A file the editor cannot tell about: the disk's.
        let out = f.read(json!({"path": "b.txt"})).await;
        assert_eq!(out.content, "     1\tonly on disk\n");
        let want = [abs(&f, "a.txt"), abs(&f, "b.txt")].map(|p| format!("read {}", p.display()));
        assert_eq!(editor.calls(), want);
    }

    #[tokio::test]
    async fn write_file_and_edit_file_go_through_the_editor_not_the_disk() {
        let (f, editor) = with(FakeEditor::default());
        f.put("a.txt", "one\ntwo\n");
        let a = abs(&f, "a.txt");
        editor
            .buffers
            .lock()
            .unwrap()
            .insert(a.clone(), "one\ntwo unsaved\n".to_string());
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "two unsaved", "new_text": "TWO"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(
            out.content,
            "Edited a.txt: replaced 1 occurrence\n@@ line 2 @@\n-two unsaved\n+TWO"
        );
        assert_eq!(editor.buffer(&a).unwrap(), "one\nTWO\n");
        let out = f
            .write(json!({"path": "sub/new.txt", "content": "new\n"}))
            .await;
        assert_eq!(
            out.content,
            "Wrote 4 bytes (1 line) to sub/new.txt (created)"
        );
        let out = f
            .write(json!({"path": "a.txt", "content": "whole\n"}))
            .await;
        assert_eq!(
            out.content,
            "Wrote 6 bytes (1 line) to a.txt (overwrote the existing file)"
        );
        let new = abs(&f, "sub/new.txt");
        assert_eq!(editor.buffer(&new).unwrap(), "new\n");
        assert_eq!(editor.buffer(&a).unwrap(), "whole\n");
        // The disk holds what it held (the new file's folder made for it).
        assert_eq!(f.get("a.txt"), "one\ntwo\n");
        assert_eq!(f.entries("."), ["a.txt", "sub"]);
        assert!(f.entries("sub").is_empty());
        let d = |what: &str, p: &PathBuf| format!("{what} {}", p.display());
        assert_eq!(
            editor.calls(),
            [
                d("read", &a),
                d("write", &a),
                d("write", &new),
                d("write", &a)
            ]
        );
    }

    #[tokio::test]
    async fn a_symlinked_file_is_asked_of_the_editor_by_its_target() {
        let (f, editor) = with(FakeEditor::default());
        f.put("real.txt", "disk\n");
        std::os::unix::fs::symlink("real.txt", abs(&f, "alias.txt")).unwrap();
        let out = f.write(json!({"path": "alias.txt", "content": "x"})).await;
        assert!(!out.is_error(), "{}", out.content);
        let real = abs(&f, "real.txt");
        assert_eq!(editor.buffer(&real).unwrap(), "x");
        assert_eq!(editor.calls(), [format!("write {}", real.display())]);
        let meta = std::fs::symlink_metadata(abs(&f, "alias.txt")).unwrap();
        assert!(meta.file_type().is_symlink());
        let out = f.read(json!({"path": "alias.txt"})).await;
        assert_eq!(out.content, "     1\tx\n");
        assert_eq!(editor.calls()[1], format!("read {}", real.display()));
    }

    #[tokio::test]
    async fn a_path_the_tools_refuse_never_reaches_the_editor() {
        let (f, editor) = with(FakeEditor::default());
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), abs(&f, "out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.txt"), abs(&f, "link.txt")).unwrap();
        f.put("dir/inner.txt", "x");
        f.put("bin", "abc\0def");
        f.sparse("big.txt", "needle\n", 10 * 1024 * 1024 + 1);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            abs(&f, "fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        let outside_file = outside.path().join("x.txt");
        let outside_file = outside_file.to_str().unwrap();
        for path in [
            "../x.txt",
            outside_file,
            "out/x.txt",
            "link.txt",
            "dir",
            "bin",
            "fifo",
            "missing.txt",
        ] {
            let out = f.read(json!({"path": path})).await;
            assert!(out.is_error(), "read {path}: {}", out.content);
            let out = f
                .edit(json!({"path": path, "old_text": "x", "new_text": "y"}))
                .await;
            assert!(out.is_error(), "edit {path}: {}", out.content);
        }
        let out = f
            .edit(json!({"path": "big.txt", "old_text": "needle", "new_text": "pin"}))
            .await;
        assert!(out.content.contains("too large to edit"), "{}", out.content);
        for path in [
            "../x.txt",
            outside_file,
            "out/x.txt",
            "link.txt",
            "dir",
            ".",
            "fifo",
            "bin/child.txt",
        ] {
            let out = f.write(json!({"path": path, "content": "x"})).await;
            assert!(out.is_error(), "write {path}: {}", out.content);
        }
        assert_eq!(editor.calls(), Vec::<String>::new());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("x.txt")).unwrap(),
            "outside\n"
        );
    }

    #[tokio::test]
    async fn a_failing_editor_read_falls_back_to_the_disk_and_says_so() {
        let (f, editor) = with(FakeEditor {
            failing_reads: true,
            ..FakeEditor::default()
        });
        f.put("a.txt", "on disk\n");
        let note = "(The editor could not give its buffer (the client went away); this is the file on disk.)";
        let out = f.read(json!({"path": "a.txt"})).await;
        assert!(!out.is_error(), "{}", out.content);
        assert_eq!(out.content, format!("{note}\n     1\ton disk\n"));
        // An edit then changes the disk's text, written through the editor.
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "disk", "new_text": "DISK"}))
            .await;
        assert!(!out.is_error(), "{}", out.content);
        assert!(out.content.starts_with(&format!("{note}\nEdited a.txt")));
        assert_eq!(editor.buffer(&abs(&f, "a.txt")).unwrap(), "on DISK\n");
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "absent", "new_text": "x"}))
            .await;
        assert!(out.is_error());
        assert!(
            out.content.ends_with(&format!("\n{note}")),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn a_failing_editor_write_fails_the_call_and_the_disk_is_left_alone() {
        let (f, editor) = with(FakeEditor {
            failing_writes: true,
            ..FakeEditor::default()
        });
        f.put("a.txt", "one\n");
        let out = f.write(json!({"path": "a.txt", "content": "two\n"})).await;
        assert!(out.is_error());
        assert_eq!(
            out.content,
            "Error: the editor could not write `a.txt`: the buffer is read-only"
        );
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "one", "new_text": "two"}))
            .await;
        assert_eq!(
            out.content,
            "Error: the editor could not write `a.txt`: the buffer is read-only"
        );
        let out = f.write(json!({"path": "b.txt", "content": "new\n"})).await;
        assert!(out.is_error());
        assert_eq!(f.get("a.txt"), "one\n");
        assert_eq!(f.entries("."), ["a.txt"]);
        assert_eq!(editor.calls().len(), 4, "{:?}", editor.calls());
    }

    /// An editor that never answers.
    #[derive(Debug)]
    struct Silent;

    impl EditorFiles for Silent {
        fn read<'a>(&'a self, _: &'a Path) -> BoxFuture<'a, Result<Option<String>, String>> {
            Box::pin(futures_util::future::pending())
        }
        fn write<'a>(&'a self, _: &'a Path, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
            Box::pin(futures_util::future::pending())
        }
    }

    #[tokio::test]
    async fn an_interrupt_while_the_editor_reads_ends_the_call() {
        let mut f = fixture();
        f.config.files.editor = Some(Arc::new(Silent));
        f.put("a.txt", "one\n");
        let later = |cancel: tokio_util::sync::CancellationToken| {
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                cancel.cancel();
            })
        };
        later(f.cancel.clone());
        let out = f.read(json!({"path": "a.txt"})).await;
        assert!(out.was_interrupted(), "{out:?}");
        f.cancel = tokio_util::sync::CancellationToken::new();
        later(f.cancel.clone());
        let out = f
            .edit(json!({"path": "a.txt", "old_text": "one", "new_text": "two"}))
            .await;
        assert!(out.was_interrupted(), "{out:?}");
        assert_eq!(f.get("a.txt"), "one\n");
    }
}
