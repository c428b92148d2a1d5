//! A pure Server-Sent Events decoder: feed it bytes exactly as they arrive
//! (split anywhere, even inside a UTF-8 character or a `\r\n`), get whole
//! events back. Invariant: an event is yielded once, only when its blank
//! terminating line has arrived.

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
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = self.scanned;
        while i < self.buf.len() {
            let b = self.buf[i];
            if b == b'\n' || b == b'\r' {
                // A lone '\r' at the very end may be the first half of "\r\n": wait.
                if b == b'\r' && i + 1 == self.buf.len() {
                    break;
                }
                let line_end = i;
                i += if b == b'\r' && self.buf.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                let line = String::from_utf8_lossy(&self.buf[start..line_end]).into_owned();
                start = i;
                if let Some(ev) = self.on_line(&line) {
                    out.push(ev);
                }
            } else {
                i += 1;
            }
        }
        self.buf.drain(..start);
        self.scanned = i - start;
        out
    }

    /// Bytes held while waiting for the end of a line.
    pub fn buffered(&self) -> usize {
        self.buf.len() + self.current.data.len()
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
