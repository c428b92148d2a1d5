//! The plan file (`--plan-file PLAN.md`): a Markdown copy of the live plan
//! in the workspace, and the user's edits to it read back. Invariants: the
//! file is replaced atomically (a reader sees the old or the new plan, never
//! half of one); Waypoint never overwrites edits it has not read back (a
//! write is skipped while the file differs from what was last written);
//! reading back only ever ticks, unticks or adds items — a line the user
//! deleted removes nothing; an existing file without Waypoint's marker
//! (one it did not write) is never replaced; the file is read and written
//! only through the workspace's root fd, so a folder swapped for a symlink
//! leads nowhere outside.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use crate::fsx::{Root, WriteOptions};

use super::parse::content_key;
use super::{ItemScope, PlanEdit, TodoItem, TodoStatus, scope_line};

const HEADER: &str = "# Plan\n\n<!-- Waypoint keeps this file in step with the live plan. Tick a box, or add a line \"- [ ] something\", and save: it becomes part of the plan. -->\n\n";
/// What tells a plan file Waypoint wrote (the start of `HEADER`'s note).
const MARKER: &str = "<!-- Waypoint keeps this file in step with the live plan.";
const IN_PROGRESS: &str = " ← in progress";
/// The largest plan file read back.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The plan as the file shows it.
pub fn render(items: &[TodoItem]) -> String {
    let mut out = String::from(HEADER);
    if items.is_empty() {
        out.push_str("_No items yet._\n");
    }
    for item in items {
        let mark = if item.status == TodoStatus::Completed {
            'x'
        } else {
            ' '
        };
        let running = if item.status == TodoStatus::InProgress {
            IN_PROGRESS
        } else {
            ""
        };
        out.push_str(&format!("- [{mark}] {}{running}\n", item.content));
        out.push_str(&scope_line::render(&item.scope));
    }
    out
}

/// One checklist item of the file: ticked or not, its text, and the scope
/// written under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileItem {
    pub ticked: bool,
    pub text: String,
    pub scope: ItemScope,
}

/// The checklist lines of `text`: (ticked, text).
pub fn parse(text: &str) -> Vec<(bool, String)> {
    parse_items(text)
        .into_iter()
        .map(|i| (i.ticked, i.text))
        .collect()
}

/// The checklist items of `text`, each with the scope lines under it.
pub fn parse_items(text: &str) -> Vec<FileItem> {
    let mut out: Vec<FileItem> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some((ticked, text)) = checklist_line(line) {
            out.push(FileItem {
                ticked,
                text,
                scope: ItemScope::default(),
            });
        } else if let (Some((field, entries)), Some(item)) =
            (scope_line::parse(line), out.last_mut())
        {
            match field {
                scope_line::Field::Files => item.scope.files = entries,
                scope_line::Field::Commands => item.scope.commands = entries,
                scope_line::Field::Check => item.scope.check = entries.into_iter().next(),
            }
        }
    }
    out
}

/// A checklist line (trimmed): (ticked, text).
fn checklist_line(line: &str) -> Option<(bool, String)> {
    let rest = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))?
        .trim_start();
    let (ticked, rest) = if let Some(r) = rest.strip_prefix("[ ]") {
        (false, r)
    } else if let Some(r) = rest
        .strip_prefix("[x]")
        .or_else(|| rest.strip_prefix("[X]"))
    {
        (true, r)
    } else {
        return None;
    };
    let text = rest.trim();
    let text = text.strip_suffix(IN_PROGRESS.trim()).unwrap_or(text).trim();
    (!text.is_empty()).then(|| (ticked, text.to_string()))
}

/// The edits that bring `items` in line with the file's `lines`: ticks and
/// unticks of known items, then new items in the file's order (each after
/// the line above it).
pub fn edits(lines: &[(bool, String)], items: &[TodoItem]) -> Vec<PlanEdit> {
    let mut out = Vec::new();
    let mut order: Vec<String> = items.iter().map(|i| content_key(&i.content)).collect();
    for (ticked, text) in lines {
        if let Some(n) = order.iter().position(|c| *c == content_key(text)) {
            let done = items[n].status == TodoStatus::Completed;
            if *ticked != done {
                out.push(PlanEdit::Status {
                    n: n + 1,
                    status: if *ticked {
                        TodoStatus::Completed
                    } else {
                        TodoStatus::Pending
                    },
                });
            }
        }
    }
    let mut previous: Option<String> = None;
    for (_, text) in lines {
        let key = content_key(text);
        if !order.contains(&key) {
            let after = match &previous {
                Some(p) => order
                    .iter()
                    .position(|c| c == p)
                    .map_or(order.len(), |i| i + 1),
                None => 0,
            };
            out.push(PlanEdit::Add {
                text: text.clone(),
                after: Some(after),
            });
            order.insert(after, key.clone());
        }
        previous = Some(key);
    }
    out
}

/// The file and what Waypoint last wrote to it.
#[derive(Debug)]
pub struct PlanFile {
    files: Arc<Root>,
    /// Relative to `files`.
    rel: PathBuf,
    last: Mutex<Option<String>>,
}

/// The plan file as it is on disk now.
enum OnDisk {
    Missing,
    Text(String),
    /// Larger than `MAX_FILE_BYTES`: not a plan Waypoint wrote.
    TooBig,
}

impl PlanFile {
    /// The plan file `rel` under `files`; refused when a file is there that
    /// Waypoint did not write (no marker), or that cannot be read.
    pub fn open(files: Arc<Root>, rel: PathBuf) -> Result<PlanFile, String> {
        let file = PlanFile {
            files,
            rel,
            last: Mutex::new(None),
        };
        file.check_ours(&file.on_disk()?, None)?;
        Ok(file)
    }

    /// Where the file is, for messages.
    fn shown(&self) -> PathBuf {
        self.files.path().join(&self.rel)
    }

    /// What is on disk, through the root fd (a FIFO, a device, or a link
    /// out is an error, not a plan).
    fn on_disk(&self) -> Result<OnDisk, String> {
        let cannot = |e: std::io::Error| {
            format!(
                "the plan file {} cannot be read: {e}",
                self.shown().display()
            )
        };
        let mut file = match self.files.open_file(&self.rel) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OnDisk::Missing),
            Err(e) => return Err(cannot(e)),
        };
        let (bytes, cut) =
            crate::fsx::read_capped(&mut file, MAX_FILE_BYTES as usize).map_err(cannot)?;
        if cut {
            return Ok(OnDisk::TooBig);
        }
        Ok(OnDisk::Text(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// `Ok` unless `now` is a file Waypoint neither wrote (no marker) nor
    /// read back (`last`).
    fn check_ours(&self, now: &OnDisk, last: Option<&str>) -> Result<(), String> {
        let ours = match now {
            OnDisk::Missing => true,
            OnDisk::Text(text) => text.contains(MARKER) || last == Some(text.as_str()),
            OnDisk::TooBig => false,
        };
        if ours {
            return Ok(());
        }
        Err(format!(
            "{} exists and Waypoint did not write it (it lacks Waypoint's marker line); it is left \
as it is: move it away, or choose another plan_file",
            self.shown().display()
        ))
    }

    /// Writes the plan, unless the user changed the file since the last
    /// write (it is read back first); `force` writes anyway, but never over
    /// a file Waypoint did not write.
    pub fn write(&self, items: &[TodoItem], force: bool) -> Result<(), String> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.on_disk()?;
        let unread = match (last.as_deref(), &now) {
            (Some(written), OnDisk::Text(now)) => now != written,
            (Some(_), OnDisk::TooBig) => true,
            _ => false,
        };
        if unread && !force {
            return Ok(());
        }
        self.check_ours(&now, last.as_deref())?;
        let text = render(items);
        let options = WriteOptions {
            create_parents: false,
            temp_prefix: ".waypoint-plan-",
            mode: None,
        };
        self.files
            .replace(&self.rel, text.as_bytes(), &options)
            .map_err(|e| {
                format!(
                    "the plan file {} could not be written: {e}",
                    self.shown().display()
                )
            })?;
        *last = Some(text);
        Ok(())
    }

    /// The user's edits since the last write (taken as read), or `None`
    /// when the file is as Waypoint left it (or gone, or unreadable).
    pub fn read_back(&self, items: &[TodoItem]) -> Option<Vec<PlanEdit>> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let written = last.as_deref()?;
        // A plan is a page, not a log: a huge file is not read.
        let OnDisk::Text(now) = self.on_disk().ok()? else {
            return None;
        };
        if now == written {
            return None;
        }
        let edits = edits(&parse(&now), items);
        *last = Some(now);
        Some(edits)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::todo::test_helpers::three;
    use std::path::Path;

    /// The plan file `rel` under `dir`, and its path.
    fn plan_file(dir: &Path, rel: &str) -> (PlanFile, PathBuf) {
        let files = Arc::new(Root::new(dir).unwrap());
        let path = files.path().join(rel);
        (PlanFile::open(files, rel.into()).unwrap(), path)
    }

    #[test]
    fn the_file_round_trips_without_edits() {
        let m = three();
        let text = render(m.items());
        assert!(
            text.contains("- [x] Read code\n- [ ] Write code ← in progress\n- [ ] Run tests\n")
        );
        assert!(edits(&parse(&text), m.items()).is_empty());
    }

    #[test]
    fn ticks_unticks_and_added_lines_become_edits() {
        let m = three();
        let text = "# Plan\n- [ ] Read code\n- [x] Write code ← in progress\n- [ ] Update docs\n- [ ] Run tests\n* [X] Celebrate\nnot a checklist line\n- [ ]   \n";
        let got = edits(&parse(text), m.items());
        assert_eq!(
            got,
            vec![
                PlanEdit::Status {
                    n: 1,
                    status: TodoStatus::Pending
                },
                PlanEdit::Status {
                    n: 2,
                    status: TodoStatus::Completed
                },
                PlanEdit::Add {
                    text: "Update docs".into(),
                    after: Some(2)
                },
                PlanEdit::Add {
                    text: "Celebrate".into(),
                    after: Some(4)
                },
            ]
        );
        // Applied in order, they give the file's order.
        let mut m = m;
        for e in &got {
            m.apply_edit(e).unwrap();
        }
        let contents: Vec<&str> = m.items().iter().map(|i| i.content.as_str()).collect();
        assert_eq!(
            contents,
            [
                "Read code",
                "Write code",
                "Update docs",
                "Run tests",
                "Celebrate"
            ]
        );
        // A deleted line removes nothing.
        assert!(edits(&parse("- [x] Read code\n"), three().items()).is_empty());
    }

    #[test]
    fn a_write_never_clobbers_unread_edits() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = plan_file(dir.path(), "PLAN.md");
        let m = three();
        file.write(m.items(), false).unwrap();
        assert_eq!(file.read_back(m.items()), None, "unchanged");
        use std::os::unix::fs::PermissionsExt;
        // The same mode as any file created here (0666 minus the umask).
        std::fs::write(dir.path().join("other"), "").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&path), mode(&dir.path().join("other")));
        let edited = std::fs::read_to_string(&path)
            .unwrap()
            .replace("- [ ] Run tests", "- [x] Run tests");
        std::fs::write(&path, &edited).unwrap();
        // A revision arrives before the edit is read: the file is kept.
        file.write(&[], false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
        let got = file.read_back(m.items()).unwrap();
        assert_eq!(
            got,
            vec![PlanEdit::Status {
                n: 3,
                status: TodoStatus::Completed
            }]
        );
        // Read back: the next write goes through.
        file.write(&[], false).unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("_No items yet._")
        );
    }

    #[test]
    fn a_file_waypoint_did_not_write_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mine = "# My notes\n- [ ] mine\n";
        std::fs::write(dir.path().join("PLAN.md"), mine).unwrap();
        let files = Arc::new(Root::new(dir.path()).unwrap());
        let err = PlanFile::open(files.clone(), "PLAN.md".into()).unwrap_err();
        assert!(err.contains("Waypoint did not write it"), "{err}");
        // Written by Waypoint before (the marker is there): taken over.
        std::fs::write(dir.path().join("OLD.md"), render(three().items())).unwrap();
        let old = PlanFile::open(files, "OLD.md".into()).unwrap();
        old.write(&[], true).unwrap();
        // Created after the plan file was opened: still not replaced.
        let (file, path) = plan_file(dir.path(), "LATER.md");
        std::fs::write(&path, mine).unwrap();
        let err = file.write(three().items(), true).unwrap_err();
        assert!(err.contains("Waypoint did not write it"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("PLAN.md")).unwrap(),
            mine
        );
    }

    #[test]
    fn a_folder_swapped_for_a_link_out_is_neither_written_nor_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("plans")).unwrap();
        let (file, _) = plan_file(dir.path(), "plans/PLAN.md");
        let m = three();
        file.write(m.items(), true).unwrap();
        std::fs::rename(dir.path().join("plans"), dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("plans")).unwrap();
        assert!(file.write(&[], true).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A plan outside is not read back as the user's edits either.
        std::fs::write(outside.path().join("PLAN.md"), "- [ ] from outside\n").unwrap();
        assert_eq!(file.read_back(m.items()), None);
    }

    #[test]
    fn an_items_scope_round_trips_through_the_file() {
        let mut items = three().items().to_vec();
        items[2].scope = crate::todo::ItemScope {
            files: vec!["src/parser/**".into(), "README.md".into()],
            commands: vec!["cargo test".into()],
            check: None,
        };
        let text = render(&items);
        assert!(text.contains(
            "- [ ] Run tests\n  - files: `src/parser/**`, `README.md`\n  - commands: `cargo test`\n"
        ));
        let back = parse_items(&text);
        let scopes: Vec<_> = back.iter().map(|i| i.scope.clone()).collect();
        let want: Vec<_> = items.iter().map(|i| i.scope.clone()).collect();
        assert_eq!(scopes, want);
        // The scope lines are no checklist items for the live sync.
        assert_eq!(parse(&text).len(), 3);
    }

    #[test]
    fn the_marker_is_in_the_header() {
        assert!(HEADER.contains(MARKER));
    }
}
