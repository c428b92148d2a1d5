//! Planning a restore. A plan ([`Preview`]) says, per file, what it will
//! be written back to (with its diff), which files are conflicts (changed
//! since Waypoint's last point by someone else, or a later step's change
//! on the same lines) and what cannot be undone (commands outside git);
//! [`super::apply`] carries it out. Invariants: planning writes nothing
//! to the work tree; each action records the content (its hash) the file
//! must still have when it is written.

use std::collections::BTreeMap;
use std::path::Path;

use similar::{ChangeTag, TextDiff};

use super::error::RestoreError;
use super::{
    BlobStore, Delta, Entry, FileChange, GIT, History, OWN, Point, Shadow, Target, sha256,
};
pub use crate::events::checkpoint::{Action, Conflict, Preview};
use crate::fsx::Root;

/// The most of a preview's diff text kept per file.
const DIFF_CAP: usize = 16 * 1024;

impl Preview {
    /// `3 files (+12 −4), 1 conflict`.
    pub fn summary(&self) -> String {
        let added: usize = self.actions.iter().map(|a| a.added).sum();
        let removed: usize = self.actions.iter().map(|a| a.removed).sum();
        let n = self.actions.len();
        let mut text = format!(
            "{n} file{} (+{added} −{removed})",
            if n == 1 { "" } else { "s" }
        );
        if !self.conflicts.is_empty() {
            let c = self.conflicts.len();
            text.push_str(&format!(", {c} conflict{}", if c == 1 { "" } else { "s" }));
        }
        if !self.not_undoable.is_empty() {
            let c = self.not_undoable.len();
            text.push_str(&format!(
                ", {c} command{} not undoable",
                if c == 1 { "" } else { "s" }
            ));
        }
        text
    }

    /// The whole report: per file its change, each conflict and why,
    /// what cannot be undone.
    pub fn report(&self) -> String {
        let mut out = format!("Undo {}: {}\n", self.target, self.summary());
        for a in &self.actions {
            let how = match (&a.to, a.merged) {
                (None, _) => "remove",
                (Some(_), true) => "merge",
                (Some(_), false) => "restore",
            };
            out.push_str(&format!(
                "  {how:<7} {} (+{} −{})\n",
                a.path, a.added, a.removed
            ));
        }
        for c in &self.conflicts {
            out.push_str(&format!("  conflict {}: {}\n", c.path, c.why));
        }
        for c in &self.not_undoable {
            out.push_str(&format!("  not undoable: {c}\n"));
        }
        for (path, size) in &self.skipped {
            out.push_str(&format!(
                "  not snapshotted (over the size cap): {path} ({})\n",
                crate::units::bytes(*size)
            ));
        }
        out
    }
}

/// Where a session's checkpoints are read from and restored to.
#[derive(Debug)]
pub struct Store {
    /// The shadow repository, once the checkpoints' thread opened it
    /// (`None` inside: not a git work tree, or it failed).
    pub shadow: std::sync::OnceLock<Option<Shadow>>,
    pub blobs: BlobStore,
    pub root: Root,
}

/// A path's states across the spans undone.
struct Case {
    path: String,
    /// Its state at the start of the first span that changed it.
    start: Option<Entry>,
    /// At the end of the last span that changed it.
    end: Option<Entry>,
    /// As the agent last left it.
    latest: Option<Entry>,
    /// Someone other than Waypoint changed it since.
    changed_since: bool,
}

impl Store {
    /// The shadow repository, when there is one (and it is open).
    pub fn shadow(&self) -> Option<&Shadow> {
        self.shadow.get().and_then(Option::as_ref)
    }

    /// The bytes of a blob reference (either layer's).
    pub fn read(&self, entry: &Entry) -> Result<Vec<u8>, RestoreError> {
        if entry.blob.starts_with(OWN) {
            return Ok(self.blobs.get(&entry.blob)?);
        }
        match self.shadow() {
            Some(shadow) if entry.blob.starts_with(GIT) => Ok(shadow.read(&entry.blob)?),
            _ => Err(RestoreError::CannotRead(entry.blob.clone())),
        }
    }

    /// The file `path` as it is now, as the layer in use sees it (`None`
    /// when there is none): with a shadow repository a symlink is its
    /// target's name (as a snapshot holds it); without one, links are
    /// read through (as Waypoint's own tools write through them).
    pub fn current(&self, path: &str) -> Result<Option<Vec<u8>>, RestoreError> {
        if self.shadow().is_some()
            && let Some(target) =
                self.root
                    .read_link(Path::new(path))
                    .map_err(|source| RestoreError::Read {
                        path: path.to_string(),
                        source,
                    })?
        {
            return Ok(Some(target));
        }
        self.read_through(path)
    }

    /// The file `path` now, a symlink followed (within the workspace).
    pub fn read_through(&self, path: &str) -> Result<Option<Vec<u8>>, RestoreError> {
        match self.root.open_file(Path::new(path)) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|source| {
                    RestoreError::Read {
                        path: path.to_string(),
                        source,
                    }
                })?;
                Ok(Some(bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(RestoreError::Read {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// Plans undoing `target`. `now` is a snapshot just taken (in a git
    /// work tree), the state files are compared with.
    pub fn plan(
        &self,
        history: &History,
        target: &Target,
        now: Option<&str>,
    ) -> Result<Preview, RestoreError> {
        let (what, spans, point) = spans(history, target)?;
        let latest = history.latest().ok_or(RestoreError::NoCheckpoint)?;
        let mut preview = Preview {
            target: what,
            point,
            skipped: latest.skipped.clone(),
            ..Preview::default()
        };
        let cases = match (self.shadow(), now, latest.tree.as_deref()) {
            (Some(shadow), Some(now), Some(tree)) => git_cases(shadow, &spans, tree, now)?,
            _ => {
                let ids: Vec<(u32, Option<u32>)> =
                    spans.iter().map(|(s, e)| (s.id, e.map(|e| e.id))).collect();
                preview.not_undoable = history
                    .commands
                    .iter()
                    .filter(|c| in_spans(c.point, &ids))
                    .map(|c| c.summary.clone())
                    .collect();
                self.own_cases(history, &ids)?
            }
        };
        for case in cases {
            match self.decide(&case)? {
                Ok(action) => preview.actions.push(action),
                Err(why) => preview.conflicts.push(Conflict {
                    path: case.path,
                    why,
                }),
            }
        }
        Ok(preview)
    }

    /// The pre-image layer's cases: the own tools' changes in the spans.
    fn own_cases(
        &self,
        history: &History,
        spans: &[(u32, Option<u32>)],
    ) -> Result<Vec<Case>, RestoreError> {
        let mut by_path: BTreeMap<&str, (Option<&FileChange>, Option<&FileChange>)> =
            BTreeMap::new();
        for change in history.changes.iter().filter(|c| in_spans(c.point, spans)) {
            let slot = by_path.entry(&change.path).or_default();
            slot.0.get_or_insert(change);
            slot.1 = Some(change);
        }
        let mut cases = Vec::new();
        for (path, (first, last)) in by_path {
            let (Some(first), Some(last)) = (first, last) else {
                continue;
            };
            let latest = history
                .changes
                .iter()
                .rev()
                .find(|c| c.path == path)
                .and_then(|c| c.after.clone());
            let now = self.current(path)?;
            let known = match &latest {
                Some(entry) => Some(self.read(entry)?),
                None => None,
            };
            cases.push(Case {
                path: path.to_string(),
                start: first.before.clone(),
                end: last.after.clone(),
                changed_since: now != known,
                latest,
            });
        }
        Ok(cases)
    }

    /// One path's action, or why it is a conflict.
    fn decide(&self, case: &Case) -> Result<Result<Action, String>, RestoreError> {
        let odd = [&case.start, &case.end, &case.latest]
            .into_iter()
            .flatten()
            .any(|e| !e.is_file() && !e.is_link());
        if odd {
            return Ok(Err(
                "a submodule (or another kind of entry): not restored".into()
            ));
        }
        if case.changed_since {
            return Ok(Err(
                "changed since Waypoint's last checkpoint (by you or another program); left as it is"
                    .into(),
            ));
        }
        let current = match &case.latest {
            Some(entry) => Some(self.read(entry)?),
            None => None,
        };
        if case.latest == case.end {
            let target = match &case.start {
                Some(entry) => Some(self.read(entry)?),
                None => None,
            };
            return Ok(Ok(action(
                &case.path,
                current.as_deref(),
                target.as_deref(),
                case.start.clone(),
                false,
            )));
        }
        // A later step changed the file again: take back only this
        // span's change, when it does not touch the same lines.
        let files = [&case.start, &case.end, &case.latest]
            .into_iter()
            .all(|e| e.as_ref().is_some_and(Entry::is_file));
        let (true, Some(start), Some(end), Some(latest), Some(current)) =
            (files, &case.start, &case.end, &case.latest, &current)
        else {
            return Ok(Err(
                "a later step created or removed it again; left as it is".into(),
            ));
        };
        let base = self.read(end)?;
        let other = self.read(start)?;
        match super::merge::merge(current, &base, &other)? {
            Some(merged) => {
                let blob = self.blobs.put(&merged)?;
                let entry = Entry {
                    blob,
                    mode: latest.mode,
                };
                Ok(Ok(action(
                    &case.path,
                    Some(current),
                    Some(&merged),
                    Some(entry),
                    true,
                )))
            }
            None => Ok(Err(
                "a later step changed the same lines; left as it is".into()
            )),
        }
    }
}

/// A span between two points (`None`: up to now).
type Span<'h> = (&'h Point, Option<&'h Point>);

/// The spans a target covers, what it is called, and the point files go
/// back to (for a whole rewind).
fn spans<'h>(
    history: &'h History,
    target: &Target,
) -> Result<(String, Vec<Span<'h>>, Option<u32>), RestoreError> {
    match target {
        Target::LastTurn => {
            let point = history.last_turn_start().ok_or(RestoreError::NoTurn)?;
            // Its own span: from its prompt to its end (a later undo's
            // changes stay; they are merged with, not reverted).
            let end = history
                .points
                .iter()
                .filter(|p| p.id > point.id && p.turn == point.turn)
                .filter(|p| matches!(p.kind, super::PointKind::TurnEnd))
                .min_by_key(|p| p.id);
            let name = format!("the last turn (turn {})", point.turn);
            Ok((name, vec![(point, end)], Some(point.id)))
        }
        Target::Point { id } => {
            let point = history.point(*id).ok_or(RestoreError::NoSuchPoint(*id))?;
            Ok((point.label(), vec![(point, None)], Some(point.id)))
        }
        Target::Item { id } => {
            let spans: Vec<_> = history
                .item_spans(id)
                .into_iter()
                .map(|(s, e)| (s, Some(e)))
                .collect();
            let open = history
                .latest()
                .filter(|p| p.item.as_deref() == Some(id.as_str()))
                .map(|p| (p, None));
            let spans: Vec<_> = spans.into_iter().chain(open).collect();
            let Some((first, _)) = spans.first() else {
                return Err(RestoreError::NeverInProgress(id.to_string()));
            };
            let name = match &first.kind {
                super::PointKind::Item { content, .. } => format!("item \"{content}\""),
                _ => format!("item {id}"),
            };
            Ok((name, spans, None))
        }
    }
}

fn in_spans(point: u32, spans: &[(u32, Option<u32>)]) -> bool {
    spans
        .iter()
        .any(|&(s, e)| point >= s && e.is_none_or(|e| point < e))
}

/// The shadow layer's cases: tree diffs of the spans, against the tree
/// the agent last left (`latest`) and the one just taken (`now`).
/// Whole trees are compared and the paths picked here (never a pathspec:
/// a name like `*.txt` would match others, and thousands would not fit a
/// command line).
fn git_cases(
    shadow: &Shadow,
    spans: &[Span<'_>],
    latest: &str,
    now: &str,
) -> Result<Vec<Case>, RestoreError> {
    let mut by_path: BTreeMap<String, (Option<Entry>, Option<Entry>, String)> = BTreeMap::new();
    for (start, end) in spans {
        let from = start
            .tree
            .as_deref()
            .ok_or(RestoreError::NoSnapshot(start.id))?;
        let to = match end {
            Some(end) => end
                .tree
                .as_deref()
                .ok_or(RestoreError::NoSnapshot(end.id))?,
            None => latest,
        };
        for delta in shadow.diff(from, to)? {
            let slot = by_path
                .entry(delta.path.clone())
                .or_insert_with(|| (delta.from.clone(), None, String::new()));
            slot.1 = delta.to;
            slot.2 = to.to_string();
        }
    }
    if by_path.is_empty() {
        return Ok(Vec::new());
    }
    let ours = |deltas: Vec<Delta>| -> BTreeMap<String, Delta> {
        deltas
            .into_iter()
            .filter(|d| by_path.contains_key(&d.path))
            .map(|d| (d.path.clone(), d))
            .collect()
    };
    let user = ours(shadow.diff(latest, now)?);
    // What later steps changed again, from each span's end to the latest.
    let ends: std::collections::BTreeSet<&str> =
        by_path.values().map(|(_, _, end)| end.as_str()).collect();
    let mut later: BTreeMap<String, Delta> = BTreeMap::new();
    for end in ends.into_iter().filter(|&end| end != latest) {
        for (path, delta) in ours(shadow.diff(end, latest)?) {
            if by_path.get(&path).is_some_and(|(_, _, e)| e == end) {
                later.insert(path, delta);
            }
        }
    }
    Ok(by_path
        .into_iter()
        .map(|(path, (start, end, _))| {
            let latest = match later.get(&path) {
                Some(delta) => delta.to.clone(),
                None => end.clone(),
            };
            Case {
                changed_since: user.contains_key(&path),
                path,
                start,
                end,
                latest,
            }
        })
        .collect())
}

/// The action writing `target` (or removing the file) over `current`.
fn action(
    path: &str,
    current: Option<&[u8]>,
    target: Option<&[u8]>,
    to: Option<Entry>,
    merged: bool,
) -> Action {
    let (added, removed, diff) = diff_of(path, current, target);
    Action {
        path: path.to_string(),
        to,
        expect: current.map(sha256),
        added,
        removed,
        diff,
        merged,
    }
}

/// Lines added and removed from `old` to `new` (`None`: no file), and
/// their unified diff (a missing side named `/dev/null`, as git does).
pub fn diff_of(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> (usize, usize, String) {
    let side = |prefix: &str, bytes: Option<&[u8]>| match bytes {
        Some(_) => format!("{prefix}/{path}"),
        None => "/dev/null".to_string(),
    };
    let (from, to) = (side("a", old), side("b", new));
    let (old, new) = (old.unwrap_or(b""), new.unwrap_or(b""));
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return (0, 0, format!("Binary file {path} differs\n"));
    };
    let diff = TextDiff::from_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    if text.len() > DIFF_CAP {
        let mut cut = DIFF_CAP;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… (diff cut)\n");
    }
    (added, removed, text)
}
