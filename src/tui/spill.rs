//! Spill files: where the complete output of a tool call that outgrew
//! memory is kept, written by the app loop from `Effect::SpillOutput`.
//! Invariant: each file lives as long as the session that shows it (removed
//! on drop), and a file that cannot be written is given up once, visibly.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::Write;
use std::path::PathBuf;

use super::state::App;

#[derive(Default)]
pub struct SpillFiles {
    files: HashMap<u64, (PathBuf, std::fs::File)>,
}

impl SpillFiles {
    /// Appends `text` to the spill file of trace entry `serial`, making it
    /// on first use; tells the state where it is, or that it failed.
    pub fn write(&mut self, app: &mut App, serial: u64, text: &str) {
        let file = match self.files.entry(serial) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let made = tempfile::Builder::new()
                    .prefix("waypoint-output-")
                    .suffix(".log")
                    .tempfile()
                    .and_then(|f| f.keep().map_err(|e| e.error));
                match made {
                    Ok((file, path)) => {
                        app.root.trace.spill_result(serial, Some(path.clone()));
                        e.insert((path, file))
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "cannot make a spill file");
                        app.root.trace.spill_result(serial, None);
                        return;
                    }
                }
            }
        };
        if file.1.write_all(text.as_bytes()).is_err() {
            if let Some((path, _)) = self.files.remove(&serial) {
                tracing::warn!(path = %path.display(), "cannot write a spill file");
                let _ = std::fs::remove_file(path);
            }
            app.root.trace.spill_result(serial, None);
        }
    }
}

impl Drop for SpillFiles {
    fn drop(&mut self) {
        for (_, (path, _)) in self.files.drain() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::events::{Event, ToolDetail, ToolSummary};
    use crate::tui::style::Palette;
    use crate::tui::update::{self, Effect};

    #[test]
    fn a_huge_output_is_complete_on_disk_and_removed_with_the_session() {
        let now = Instant::now();
        let mut app = App::new("m", "w", Palette::monochrome(), now);
        app.root.trace.begin(
            "t".into(),
            "bash".into(),
            ToolSummary {
                line: "cat".into(),
                detail: ToolDetail::Output,
            },
            Default::default(),
            now,
        );
        let mut spills = SpillFiles::default();
        let line = "x".repeat(99) + "\n";
        for _ in 0..20_000 {
            let event = Event::ToolCallOutputDelta {
                id: "t".into(),
                chunk: line.clone(),
            };
            for effect in update::on_event(&mut app, event, now) {
                if let Effect::SpillOutput { serial, text } = effect {
                    spills.write(&mut app, serial, &text);
                }
            }
        }
        let log = &app.root.trace.entries[0].output;
        let path = log.spill_path().expect("spilled").clone();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2_000_000);
        assert!(log.text().contains("bytes not shown; full output in"));
        drop(spills);
        assert!(!path.exists(), "the spill file goes with the session");
    }
}
