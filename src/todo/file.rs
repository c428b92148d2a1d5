//! The plan file (`--plan-file PLAN.md`): a Markdown copy of the live plan
//! in the workspace, and the user's edits to it read back. Invariants: the
//! file is replaced atomically (a reader sees the old or the new plan, never
//! half of one); Waypoint never overwrites edits it has not read back (a
//! write is skipped while the file differs from what was last written);
//! reading back only ever ticks, unticks or adds items — a line the user
//! deleted removes nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::parse::content_key;
use super::{PlanEdit, TodoItem, TodoStatus};

const HEADER: &str = "# Plan\n\n<!-- Waypoint keeps this file in step with the live plan. Tick a box, or add a line \"- [ ] something\", and save: it becomes part of the plan. -->\n\n";
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
    }
    out
}

/// The checklist lines of `text`: (ticked, text).
pub fn parse(text: &str) -> Vec<(bool, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
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
        })
        .collect()
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
    path: PathBuf,
    last: Mutex<Option<String>>,
}

impl PlanFile {
    pub fn new(path: PathBuf) -> PlanFile {
        PlanFile {
            path,
            last: Mutex::new(None),
        }
    }

    /// Writes the plan, unless the user changed the file since the last
    /// write (it is read back first); `force` writes anyway.
    pub fn write(&self, items: &[TodoItem], force: bool) -> Result<(), String> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if !force && let Some(written) = last.as_deref() {
            match std::fs::read_to_string(&self.path) {
                Ok(now) if now != written => return Ok(()),
                _ => {}
            }
        }
        let text = render(items);
        replace(&self.path, text.as_bytes()).map_err(|e| {
            format!(
                "the plan file {} could not be written: {e}",
                self.path.display()
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
        if std::fs::metadata(&self.path).ok()?.len() > MAX_FILE_BYTES {
            return None;
        }
        let now = std::fs::read_to_string(&self.path).ok()?;
        if now == written {
            return None;
        }
        let edits = edits(&parse(&now), items);
        *last = Some(now);
        Some(edits)
    }
}

/// Replaces `path` with `bytes` through a synced temporary file beside it.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    use std::os::unix::fs::PermissionsExt;
    let mut tmp = tempfile::Builder::new()
        .prefix(".waypoint-plan-")
        // A file of the project's like any other: 0666 minus the umask.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::todo::test_helpers::three;

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
        let path = dir.path().join("PLAN.md");
        let file = PlanFile::new(path.clone());
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
}
