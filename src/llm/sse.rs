//! A pure Server-Sent Events decoder: feed it bytes exactly as they arrive
//! (split anywhere, even inside a UTF-8 character or a `\r\n`), get whole
//! events back. Invariant: an event is yielded once, when its blank
//! terminating line has arrived, or, at the end of the stream (`finish`),
//! when it has a data field whose last line is complete: ended by a line
//! break, or its data is whole JSON (or `[DONE]`). The official SDKs accept
//! a last event without its blank line; a data line cut mid-way is never
//! dispatched, so a cut stream still reads as cut.

/// One decoded event: its `event:` name (empty when absent) and its joined `data:` lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already scanned for a line end.
    scanned: usize,
    current: SseEvent,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        // Read from a buffer taken out of `self`, so each line is read in
        // place (no copy of it) while `on_line` changes the event.
        let mut buf = std::mem::take(&mut self.buf);
        buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = self.scanned;
        while i < buf.len() {
            let b = buf[i];
            if b == b'\n' || b == b'\r' {
                // A lone '\r' at the very end may be the first half of "\r\n": wait.
                if b == b'\r' && i + 1 == buf.len() {
                    break;
                }
                let line_end = i;
                i += if b == b'\r' && buf.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                let line = String::from_utf8_lossy(&buf[start..line_end]);
                start = i;
                if let Some(ev) = self.on_line(&line) {
                    out.push(ev);
                }
            } else {
                i += 1;
            }
        }
        buf.drain(..start);
        self.buf = buf;
        self.scanned = i - start;
        out
    }

    /// Bytes held while waiting for the end of a line.
    pub fn buffered(&self) -> usize {
        self.buf.len() + self.current.data.len()
    }

    /// The stream ended: the event still pending, if it is complete (see
    /// the module's invariant). Otherwise the pending bytes stay, so
    /// [`Self::has_partial`] reports the cut.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        // `feed` consumed every ended line; `rest` is one line, ended only
        // by a lone '\r' that could have been the start of "\r\n".
        let (line, ended) = match rest.strip_suffix(b"\r") {
            Some(line) => (line, true),
            None => (rest.as_slice(), rest.is_empty()),
        };
        let saved = (self.current.clone(), self.has_data);
        if !rest.is_empty()
            && let Some(ev) = self.on_line(&String::from_utf8_lossy(line))
        {
            return Some(ev);
        }
        if self.has_data && (ended || is_whole(&self.current.data)) {
            self.has_data = false;
            return Some(std::mem::take(&mut self.current));
        }
        (self.current, self.has_data) = saved;
        self.buf = rest;
        None
    }

    /// True when bytes of an unfinished event are pending (the stream was cut mid-event).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty() || self.has_data || !self.current.event.is_empty()
    }

    fn on_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let done = std::mem::take(&mut self.current);
            let had = std::mem::replace(&mut self.has_data, false);
            return (had || !done.event.is_empty()).then_some(done);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.current.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

/// Data that cannot be the start of something longer: whole JSON or `[DONE]`.
fn is_whole(data: &str) -> bool {
    data.trim() == "[DONE]" || serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: message_start\ndata: {\"a\":1}\n\n: comment\nevent: ping\ndata: {}\n\r\ndata: line1\ndata: h\u{e9}llo \u{1F600}\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent {
                event: "message_start".into(),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: "ping".into(),
                data: "{}".into(),
            },
            SseEvent {
                event: String::new(),
                data: "line1\nh\u{e9}llo \u{1F600}".into(),
            },
        ]
    }

    #[test]
    fn decodes_whole_stream() {
        let mut d = SseDecoder::new();
        assert_eq!(d.feed(STREAM.as_bytes()), expected());
        assert!(!d.has_partial());
    }

    #[test]
    fn decodes_any_split_point_including_inside_utf8() {
        let bytes = STREAM.as_bytes();
        for cut in 0..bytes.len() {
            let mut d = SseDecoder::new();
            let mut got = d.feed(&bytes[..cut]);
            got.extend(d.feed(&bytes[cut..]));
            assert_eq!(got, expected(), "split at byte {cut}");
        }
    }

    #[test]
    fn decodes_byte_by_byte_with_crlf() {
        let crlf = STREAM.replace('\n', "\r\n");
        let mut d = SseDecoder::new();
        let mut got = Vec::new();
        for b in crlf.as_bytes() {
            got.extend(d.feed(std::slice::from_ref(b)));
        }
        assert_eq!(got, expected());
    }

    const ANTHROPIC: &[u8] =
        include_bytes!("../../tests/fixtures/streams/anthropic_no_final_blank_line.sse");
    const OPENAI: &[u8] =
        include_bytes!("../../tests/fixtures/streams/openai_no_final_blank_line.sse");

    /// Feeds `pieces` in order, then ends the stream: the events and whether
    /// bytes of an unfinished event were left.
    fn decode_in(pieces: &[&[u8]]) -> (Vec<SseEvent>, bool) {
        let mut d = SseDecoder::new();
        let mut got = Vec::new();
        for p in pieces {
            got.extend(d.feed(p));
        }
        got.extend(d.finish());
        (got, d.has_partial())
    }

    /// Recorded streams whose last event has no blank line after it (and
    /// variants: a single newline, CRLF, `[DONE]` last): at every split into
    /// two pieces, and many into three, they decode to the same events as
    /// the stream with its blank line, and nothing is left pending.
    #[test]
    fn a_final_event_without_its_blank_line_is_dispatched_at_the_end() {
        let crlf = String::from_utf8_lossy(ANTHROPIC).replace('\n', "\r\n");
        let fixtures: Vec<Vec<u8>> = vec![
            ANTHROPIC.to_vec(),
            [ANTHROPIC, b"\n"].concat(),
            crlf.clone().into_bytes(),
            format!("{crlf}\r").into_bytes(),
            OPENAI.to_vec(),
            [OPENAI, b"\n\ndata: [DONE]"].concat(),
            [OPENAI, b"\n\ndata: [DONE]\n"].concat(),
        ];
        for f in &fixtures {
            let whole = [f.as_slice(), b"\n\n"].concat();
            let (expected, _) = decode_in(&[&whole]);
            let last = expected.last().expect("events").data.clone();
            assert!(
                last.contains("message_stop") || last.contains("\"stop\"") || last == "[DONE]",
                "{last}"
            );
            for cut in 0..=f.len() {
                let (got, partial) = decode_in(&[&f[..cut], &f[cut..]]);
                assert_eq!(got, expected, "split at byte {cut}");
                assert!(!partial, "split at byte {cut}");
            }
            for a in (0..f.len()).step_by(7) {
                for b in (a..=f.len()).step_by(11) {
                    let (got, _) = decode_in(&[&f[..a], &f[a..b], &f[b..]]);
                    assert_eq!(got, expected, "split at bytes {a} and {b}");
                }
            }
        }
    }

    /// A stream cut inside its last data line is cut: that event is not
    /// dispatched (its data does not parse) and the decoder says so.
    #[test]
    fn a_final_data_line_cut_short_is_not_dispatched() {
        for f in [ANTHROPIC, OPENAI] {
            let text = String::from_utf8_lossy(f);
            let line_start = text.rfind("\ndata:").expect("a data line") + 1;
            let (before, _) = decode_in(&[&f[..line_start]]);
            for cut in line_start + 1..f.len() {
                let (got, partial) = decode_in(&[&f[..cut]]);
                assert_eq!(got.len(), before.len(), "cut at byte {cut}");
                assert!(partial, "cut at byte {cut}");
            }
        }
    }

    #[test]
    fn reports_partial_event_when_cut() {
        let mut d = SseDecoder::new();
        assert!(
            d.feed(b"event: content_block_delta\ndata: {\"x\"")
                .is_empty()
        );
        assert!(d.has_partial());
    }
}
