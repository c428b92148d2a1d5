//! The engine's checkpoints: points asked for on the engine's path and
//! snapshotted on a thread of their own (off the model's and the UI's
//! critical path), own-tool changes kept as they happen, and restores
//! planned and applied on request. Invariants: a writing call waits for
//! every point asked for before it ([`Checkpoints::settled`]), so no
//! change lands in the wrong span; every point, change and restore is
//! handed to the sink (the transcript) as it happens.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::apply::Applied;
use super::restore::{Preview, Store, diff_of};
use super::{
    BlobStore, CommandRan, Entry, FileChange, History, Mark, Point, PointKind, RestoreError,
    Restored, Shadow, StoreError, Target, lock,
};
use crate::todo::TodoItem;

/// A file's content and mode, `None` when there is no file.
pub type FileState = Option<(Vec<u8>, u32)>;

/// Where the checkpoints write their records (the transcript).
pub type Sink = Arc<dyn Fn(&Mark) + Send + Sync>;

/// What [`Checkpoints::open`] needs.
pub struct Setup {
    /// The pre-image store's folder (beside the transcript).
    pub blobs: PathBuf,
    /// The folder of shadow repositories.
    pub shadows: PathBuf,
    pub work_tree: PathBuf,
    pub session: String,
    /// The session's checkpoints so far (a resumed one's).
    pub history: History,
    pub sink: Sink,
    /// Where what the user should know goes (a restore finished after a
    /// crash, a shadow repository that failed).
    pub notify: Arc<dyn Fn(String) + Send + Sync>,
}

/// The checkpoints' thread's work, in order.
enum Job {
    /// Opens the shadow repository, finishes a cut-off restore, and
    /// hashes the work tree once so the first real snapshot is quick.
    Open {
        shadows: PathBuf,
        work_tree: PathBuf,
        session: String,
    },
    /// A point asked for, its snapshot still to take.
    Point(Point),
}

struct Open {
    store: Arc<Store>,
    history: Arc<Mutex<History>>,
    jobs: mpsc::Sender<Job>,
    asked: AtomicU64,
    done: tokio::sync::watch::Receiver<u64>,
    /// The latest point asked for, and the root plan's item in progress
    /// as it said.
    current: AtomicU32,
    item: Mutex<Option<String>>,
    next: AtomicU32,
    sink: Sink,
}

/// The session's checkpoints (none until a recorded session opens them).
#[derive(Default)]
pub struct Checkpoints {
    open: Mutex<Option<Arc<Open>>>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Checkpoints")
    }
}

/// A point to ask for: what it is and the session's state then.
pub struct Ask {
    pub kind: PointKind,
    pub turn: u32,
    pub messages: usize,
    /// A fingerprint of the conversation's last message then (see [`Point::tail`]).
    pub tail: Option<String>,
    pub plan: Vec<TodoItem>,
}

impl Ask {
    /// The point this asks for, as `id`, with its snapshot's `tree`.
    fn into_point(self, id: u32, tree: Option<String>) -> Point {
        Point {
            id,
            item: super::in_progress(&self.plan),
            kind: self.kind,
            turn: self.turn,
            tree,
            messages: self.messages,
            tail: self.tail,
            plan: self.plan,
            skipped: Vec::new(),
            at: super::now_ms(),
        }
    }
}

impl Open {
    /// Hands `mark` to the sink and keeps it in the history.
    fn record(&self, mark: Mark) {
        (self.sink)(&mark);
        lock(&self.history).add(mark);
    }
}

impl Checkpoints {
    /// Opens the checkpoints of a session. What takes time (the shadow
    /// repository, finishing a restore a crash cut off, hashing the work
    /// tree once) is done on the checkpoints' thread, off the first
    /// frame; anything the user should know goes to `setup.notify`.
    pub fn open(&self, setup: Setup) {
        let root = match crate::fsx::Root::new(&setup.work_tree) {
            Ok(root) => root,
            Err(e) => {
                *lock(&self.open) = None;
                (setup.notify)(format!(
                    "Checkpoints are off: the workspace cannot be opened ({e})."
                ));
                return;
            }
        };
        let store = Arc::new(Store {
            shadow: std::sync::OnceLock::new(),
            blobs: BlobStore::new(setup.blobs),
            root,
        });
        let next = setup.history.next_id();
        let current = setup.history.latest().map_or(0, |p| p.id);
        let item = setup.history.latest().and_then(|p| p.item.clone());
        let history = Arc::new(Mutex::new(setup.history));
        let (jobs, rx) = mpsc::channel();
        let (done_tx, done) = tokio::sync::watch::channel(0u64);
        let worker = Worker {
            store: store.clone(),
            history: history.clone(),
            sink: setup.sink.clone(),
            notify: setup.notify.clone(),
            done: done_tx,
        };
        let spawned = std::thread::Builder::new()
            .name("waypoint-checkpoints".into())
            .spawn(move || worker.run(rx));
        if let Err(e) = spawned {
            (setup.notify)(format!("Checkpoints are off: {e}"));
            *lock(&self.open) = None;
            return;
        }
        let _ = jobs.send(Job::Open {
            shadows: setup.shadows,
            work_tree: setup.work_tree,
            session: setup.session,
        });
        *lock(&self.open) = Some(Arc::new(Open {
            store,
            history,
            jobs,
            asked: AtomicU64::new(1),
            done,
            current: AtomicU32::new(current),
            item: Mutex::new(item),
            next: AtomicU32::new(next),
            sink: setup.sink,
        }));
    }

    fn get(&self) -> Option<Arc<Open>> {
        lock(&self.open).clone()
    }

    /// Whether command changes are caught too (a git work tree).
    pub fn tracks_commands(&self) -> bool {
        self.get().is_some_and(|o| o.store.shadow().is_some())
    }

    /// Whether checkpoints are kept at all.
    pub fn enabled(&self) -> bool {
        self.get().is_some()
    }

    /// Asks for a point; its snapshot is taken in the background.
    pub fn point(&self, ask: Ask) {
        let Some(open) = self.get() else {
            return;
        };
        let id = open.next.fetch_add(1, Ordering::SeqCst);
        open.current.store(id, Ordering::SeqCst);
        let point = ask.into_point(id, None);
        lock(&open.item).clone_from(&point.item);
        open.asked.fetch_add(1, Ordering::SeqCst);
        let _ = open.jobs.send(Job::Point(point));
    }

    /// The root plan's item in progress as the latest point asked for saw it.
    pub fn current_item(&self) -> Option<String> {
        let open = self.get()?;
        lock(&open.item).clone()
    }

    /// Waits until every point asked for has its snapshot.
    pub async fn settled(&self) {
        let Some(open) = self.get() else {
            return;
        };
        let want = open.asked.load(Ordering::SeqCst);
        let mut done = open.done.clone();
        let _ = done.wait_for(|&n| n >= want).await;
    }

    /// The content of `path` now, for a change about to be made by an
    /// own tool (kept when the change is recorded).
    pub fn before(&self, path: &str) -> Option<FileState> {
        let open = self.get()?;
        read_entry(&open.store, path)
    }

    /// Records an own tool's change of `path` (`before` as read by
    /// [`Checkpoints::before`]).
    pub fn changed(&self, call: &str, path: &str, before: FileState) {
        let Some(open) = self.get() else {
            return;
        };
        let Some(after) = read_entry(&open.store, path) else {
            return;
        };
        if after == before {
            return;
        }
        let keep = |state: FileState| -> Result<Option<Entry>, StoreError> {
            state
                .map(|(bytes, mode)| {
                    Ok(Entry {
                        blob: open.store.blobs.put(&bytes)?,
                        mode,
                    })
                })
                .transpose()
        };
        let (before, after) = match (keep(before), keep(after)) {
            (Ok(b), Ok(a)) => (b, a),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, path, "a pre-image was not kept");
                return;
            }
        };
        let mark = Mark::Change(FileChange {
            point: open.current.load(Ordering::SeqCst),
            call: call.to_string(),
            path: path.to_string(),
            before,
            after,
            at: super::now_ms(),
        });
        open.record(mark);
    }

    /// Records a command that ran where its changes cannot be undone.
    pub fn command(&self, call: &str, summary: &str) {
        let Some(open) = self.get() else {
            return;
        };
        if open.store.shadow().is_some() {
            return;
        }
        let mark = Mark::Command(CommandRan {
            point: open.current.load(Ordering::SeqCst),
            call: call.to_string(),
            summary: summary.to_string(),
        });
        open.record(mark);
    }

    /// The session's checkpoints so far.
    pub fn history(&self) -> History {
        self.get()
            .map(|o| lock(&o.history).clone())
            .unwrap_or_default()
    }

    /// Plans undoing `target` (nothing is written).
    pub async fn preview(&self, target: &Target) -> Result<Preview, RestoreError> {
        let open = self.get().ok_or(RestoreError::Off)?;
        self.settled().await;
        let target = target.clone();
        blocking(move || {
            let now = snapshot_now(&open, "preview")?;
            let history = lock(&open.history).clone();
            open.store.plan(&history, &target, now.as_deref())
        })
        .await
    }

    /// Applies `preview` of undoing `undid` (the files it names are
    /// written back), after a point of the state before (`before`: the
    /// conversation and plan then), so the restore itself can be undone.
    /// The caller asks for the point after, once the conversation is cut.
    pub async fn apply(
        &self,
        preview: Preview,
        undid: Target,
        messages: Option<usize>,
        before: Ask,
    ) -> Result<(Applied, Restored), RestoreError> {
        let open = self.get().ok_or(RestoreError::Off)?;
        self.settled().await;
        let before_id = open.next.fetch_add(1, Ordering::SeqCst);
        open.current.store(before_id, Ordering::SeqCst);
        let worker_open = open.clone();
        let (applied, restored, old) = blocking(move || {
            let open = worker_open;
            let tree = snapshot_now(&open, &before_id.to_string())?;
            let point = Ask {
                kind: PointKind::BeforeRestore,
                ..before
            }
            .into_point(before_id, tree);
            let old: Vec<(String, FileState)> = preview
                .actions
                .iter()
                .filter_map(|a| Some((a.path.clone(), read_entry(&open.store, &a.path)?)))
                .collect();
            open.record(Mark::Point(point));
            let applied = open.store.apply(&preview)?;
            let restored = Restored {
                target: preview.target.clone(),
                undid,
                to: preview.point,
                before: before_id,
                files: applied.files.clone(),
                conflicts: applied
                    .conflicts
                    .iter()
                    .map(|c| format!("{}: {}", c.path, c.why))
                    .collect(),
                messages,
                at: super::now_ms(),
            };
            open.record(Mark::Restore(restored.clone()));
            Ok((applied, restored, old))
        })
        .await?;
        if open.store.shadow().is_none() {
            for (path, before) in old {
                if restored.files.contains(&path) {
                    self.changed("restore", &path, before);
                }
            }
        }
        Ok((applied, restored))
    }

    /// Everything changed since point `since` (the session's first when
    /// `None`), as a unified diff.
    pub async fn diff(&self, since: Option<u32>) -> Result<String, RestoreError> {
        let open = self.get().ok_or(RestoreError::Off)?;
        self.settled().await;
        blocking(move || {
            let history = lock(&open.history).clone();
            let point = match since {
                Some(id) => history.point(id).ok_or(RestoreError::NoSuchPoint(id))?,
                None => history
                    .points
                    .iter()
                    .min_by_key(|p| p.id)
                    .ok_or(RestoreError::NoCheckpointYet)?,
            };
            let target = Target::Point { id: point.id };
            let now = snapshot_now(&open, "diff")?;
            let plan = open.store.plan(&history, &target, now.as_deref())?;
            let mut text = String::new();
            for action in &plan.actions {
                // The plan goes back; the diff goes forward.
                let back = match &action.to {
                    Some(entry) => Some(open.store.read(entry)?),
                    None => None,
                };
                let current = open.store.current(&action.path)?;
                text.push_str(&diff_of(&action.path, back.as_deref(), current.as_deref()).2);
            }
            for c in &plan.conflicts {
                text.push_str(&format!("# {}: also changed outside Waypoint\n", c.path));
            }
            for c in &plan.not_undoable {
                text.push_str(&format!("# not tracked (outside git): {c}\n"));
            }
            if text.is_empty() {
                text = format!("No changes since {}.\n", point.label());
            }
            Ok(text)
        })
        .await
    }
}

/// `path`'s content and mode now: `Some(None)` when there is no file,
/// `None` when it cannot be read (too big to keep, not a regular file).
fn read_entry(store: &Store, path: &str) -> Option<FileState> {
    const KEEP_MAX: u64 = 64 * 1024 * 1024;
    let rel = std::path::Path::new(path);
    match store.root.metadata(rel) {
        Ok(meta) if meta.is_file() && meta.len() <= KEEP_MAX => {
            use std::os::unix::fs::PermissionsExt;
            let mode = 0o100000 | (meta.permissions().mode() & 0o777);
            let bytes = store.read_through(path).ok()??;
            Some(Some((bytes, mode)))
        }
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Err(_) => None,
    }
}

/// A snapshot now (in a git work tree), under ref `name`.
fn snapshot_now(open: &Open, name: &str) -> Result<Option<String>, RestoreError> {
    match open.store.shadow() {
        Some(shadow) => Ok(Some(shadow.snapshot(name)?.tree)),
        None => Ok(None),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, RestoreError> + Send + 'static,
) -> Result<T, RestoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(RestoreError::Stopped)?
}

/// The snapshot thread.
struct Worker {
    store: Arc<Store>,
    history: Arc<Mutex<History>>,
    sink: Sink,
    notify: Arc<dyn Fn(String) + Send + Sync>,
    done: tokio::sync::watch::Sender<u64>,
}

impl Worker {
    fn open(&self, shadows: &std::path::Path, work_tree: &std::path::Path, session: &str) {
        let shadow = match Shadow::open(shadows, work_tree, session, super::DEFAULT_CAP) {
            Ok(shadow) => shadow,
            Err(e) => {
                (self.notify)(format!(
                    "Only Waypoint's own edits can be undone: the shadow repository failed ({e})."
                ));
                None
            }
        };
        let _ = self.store.shadow.set(shadow);
        match self.store.recover() {
            Ok(Some(applied)) => (self.notify)(format!(
                "A restore cut off earlier was finished: {} file(s) written, {} left alone.",
                applied.files.len(),
                applied.conflicts.len()
            )),
            Ok(None) => {}
            Err(e) => (self.notify)(format!(
                "A restore cut off earlier could not be finished: {e}"
            )),
        }
        if let Some(shadow) = self.store.shadow()
            && let Err(e) = shadow.snapshot("start")
        {
            tracing::warn!(error = %e, "the first snapshot failed");
        }
    }

    fn run(self, jobs: mpsc::Receiver<Job>) {
        while let Ok(job) = jobs.recv() {
            match job {
                Job::Open {
                    shadows,
                    work_tree,
                    session,
                } => self.open(&shadows, &work_tree, &session),
                Job::Point(mut point) => {
                    if let Some(shadow) = self.store.shadow() {
                        match shadow.snapshot(&point.id.to_string()) {
                            Ok(snap) => {
                                point.tree = Some(snap.tree);
                                point.skipped = snap.skipped;
                            }
                            Err(e) => tracing::warn!(error = %e, "a snapshot failed"),
                        }
                    }
                    let mark = Mark::Point(point);
                    (self.sink)(&mark);
                    lock(&self.history).add(mark);
                }
            }
            self.done.send_modify(|n| *n += 1);
        }
    }
}
