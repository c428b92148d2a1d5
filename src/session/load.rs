//! Reading a transcript back. Invariants: a torn last line (a write cut by
//! a power cut or a kill) is skipped with a note, never a reason to refuse
//! the file; an unreadable line elsewhere and a record of an unknown type
//! are skipped with a note too; a file of a newer format, an empty file and
//! a file that is not a transcript are refused with a message saying so.

use std::path::{Path, PathBuf};

use super::SessionError;
use super::record::{FORMAT_VERSION, Header, Record};
use super::v1::{Legacy, Upgrader};

/// A transcript as read: its header, its records in order (format 1's
/// upgraded to format 2's), and what was skipped.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    pub header: Header,
    pub records: Vec<Record<'static>>,
    /// How many lines after the header were read.
    pub lines: usize,
    /// What the reader skipped, for the user.
    pub notes: Vec<String>,
    /// Bytes of whole lines: where appending goes on (a torn tail is cut).
    pub valid_len: u64,
    /// The content addresses of the images the file holds whole (format
    /// 3), which a writer appending to it refers to.
    pub images: std::collections::HashSet<String>,
}

pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let bytes = std::fs::read(path).map_err(|e| SessionError::io(path, e))?;
    parse(path, &bytes)
}

/// Reads a transcript's bytes (see [`load`]).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, SessionError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(SessionError::Empty {
            path: path.to_path_buf(),
        });
    }
    // Whole lines end in '\n'; what follows the last one is torn.
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut notes = Vec::new();
    let mut lines = bytes[..whole].split(|&b| b == b'\n');
    let not_transcript = || SessionError::NotATranscript {
        path: path.to_path_buf(),
    };
    let first = lines.next().filter(|l| !l.is_empty()).ok_or_else(|| {
        // A header cut before its newline: the session never got further.
        if whole == 0 {
            SessionError::Empty {
                path: path.to_path_buf(),
            }
        } else {
            not_transcript()
        }
    })?;
    let header: Header = serde_json::from_slice(first).map_err(|_| {
        // A newer header may have fields this one cannot read: say so if it
        // names a higher format.
        match newer_format(first) {
            Some(found) => SessionError::Newer {
                path: path.to_path_buf(),
                found,
            },
            None => not_transcript(),
        }
    })?;
    if header.kind != "header" {
        return Err(not_transcript());
    }
    if header.format > FORMAT_VERSION {
        return Err(SessionError::Newer {
            path: path.to_path_buf(),
            found: header.format,
        });
    }
    let mut records = Vec::new();
    let mut upgrader = Upgrader::default();
    let mut unknown = 0;
    let mut read = 0;
    for (n, line) in lines.enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        read += 1;
        let record = match Record::from_line(line) {
            // Format 1's own records are unknown to format 2.
            Ok(Record::Unknown) => serde_json::from_slice::<Legacy>(line).map(Err),
            other => other.map(Ok),
        };
        match record {
            Ok(Ok(record)) => upgrader.current(record, &mut records),
            Ok(Err(Legacy::Unknown)) => unknown += 1,
            Ok(Err(legacy)) => upgrader.legacy(legacy, &mut records),
            Err(e) => notes.push(format!(
                "line {} could not be read and was skipped ({e})",
                n + 2
            )),
        }
    }
    if unknown > 0 {
        notes.push(format!(
            "{unknown} record(s) of a type this version does not know were skipped"
        ));
    }
    let images = if header.format >= super::images::FORMAT_WITH_REFS {
        super::images::resolve(&mut records, &mut notes)
    } else {
        std::collections::HashSet::new()
    };
    if whole < bytes.len() {
        notes.push(format!(
            "the last record was cut off mid-write ({} bytes) and was skipped",
            bytes.len() - whole
        ));
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        header,
        records,
        lines: read,
        notes,
        valid_len: whole as u64,
        images,
    })
}

fn newer_format(line: &[u8]) -> Option<u32> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    let format = u32::try_from(value.get("format")?.as_u64()?).ok()?;
    (value.get("type")?.as_str()? == "header" && format > FORMAT_VERSION).then_some(format)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"header","format":1,"id":"abc","workspace":"/w","provider":"scripted","model":"m","started_ms":1,"version":"0.1.0"}"#;

    fn read(text: &str) -> Result<Loaded, SessionError> {
        parse(Path::new("s.jsonl"), text.as_bytes())
    }

    #[test]
    fn a_torn_last_line_is_skipped_with_a_note() {
        let text = format!(
            "{HEADER}\n{}\n{}",
            r#"{"type":"user","text":"hi","prompt":true,"at":2}"#,
            r#"{"type":"assistant","content":[{"type":"te"#
        );
        let loaded = read(&text).unwrap();
        assert_eq!(loaded.records.len(), 1);
        assert_eq!(loaded.valid_len as usize, text.rfind('\n').unwrap() + 1);
        assert!(
            loaded.notes[0].contains("cut off mid-write"),
            "{:?}",
            loaded.notes
        );
    }

    #[test]
    fn unknown_records_and_bad_lines_are_skipped_and_counted() {
        let text = format!(
            "{HEADER}\n{}\n{}\nnot json\n",
            r#"{"type":"telepathy","x":1}"#, r#"{"type":"turn_start","resumed":false,"at":3}"#
        );
        let loaded = read(&text).unwrap();
        // A format 1 record, as the event it stood for.
        let start =
            crate::events::Envelope::root(1, crate::events::Event::TurnStarted { resumed: false });
        assert_eq!(
            loaded.records,
            vec![Record::Event {
                at: 3,
                envelope: std::borrow::Cow::Owned(start),
            }]
        );
        assert_eq!(loaded.notes.len(), 2, "{:?}", loaded.notes);
        assert!(loaded.notes.iter().any(|n| n.contains("line 4")));
        assert!(loaded.notes.iter().any(|n| n.contains("does not know")));
    }

    #[test]
    fn a_newer_format_is_refused_with_a_clear_message() {
        let newer = HEADER.replace(r#""format":1"#, r#""format":7"#);
        let err = read(&format!("{newer}\n")).unwrap_err().to_string();
        assert!(
            err.contains("newer Waypoint") && err.contains("format 7"),
            "{err}"
        );
        // Even when the newer header has a shape this version cannot read.
        let err = read("{\"type\":\"header\",\"format\":9,\"id\":[]}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("format 9"), "{err}");
    }

    #[test]
    fn empty_and_foreign_files_are_refused() {
        assert!(matches!(read(""), Err(SessionError::Empty { .. })));
        assert!(matches!(read("\n \n"), Err(SessionError::Empty { .. })));
        assert!(matches!(
            read(&HEADER[..20]),
            Err(SessionError::Empty { .. })
        ));
        assert!(matches!(
            read("{\"hello\":1}\n"),
            Err(SessionError::NotATranscript { .. })
        ));
    }
}
