//! A request body in parts: the bytes written for this request, and the
//! kept bytes of the conversation's older messages ([`super::prefix`]),
//! shared rather than copied, so building and sending a request costs what
//! is new in it, not the size of the conversation. Invariant: a body's
//! bytes are its parts in order, and `len` is their total.

use bytes::Bytes;

/// A finished request body, cheap to clone (every retry sends it again).
#[derive(Clone, Debug, Default)]
pub struct Body {
    parts: Vec<Bytes>,
    len: usize,
}

impl Body {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The parts, in order.
    #[cfg(test)]
    pub(crate) fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    /// The body in one piece (copied when it has several parts).
    pub fn to_bytes(&self) -> Bytes {
        match self.parts.as_slice() {
            [] => Bytes::new(),
            [one] => one.clone(),
            parts => {
                let mut all = Vec::with_capacity(self.len);
                for p in parts {
                    all.extend_from_slice(p);
                }
                Bytes::from(all)
            }
        }
    }

    /// The body for the HTTP client: its parts streamed as they are (the
    /// caller sends the length as `content-length`, so it goes out with a
    /// length, not chunked).
    pub(crate) fn to_reqwest(&self) -> reqwest::Body {
        match self.parts.as_slice() {
            [] => reqwest::Body::from(Bytes::new()),
            [one] => reqwest::Body::from(one.clone()),
            _ => reqwest::Body::wrap_stream(futures_util::stream::iter(
                self.parts
                    .clone()
                    .into_iter()
                    .map(Ok::<Bytes, std::io::Error>),
            )),
        }
    }
}

/// Writes a [`Body`]: bytes go to the current buffer; shared parts are
/// placed after what was written so far.
#[derive(Debug, Default)]
pub struct BodyWriter {
    parts: Vec<Bytes>,
    buf: Vec<u8>,
}

impl BodyWriter {
    /// Where the next bytes are written.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Places `shared` after what was written so far, without copying it.
    pub fn push_shared<'a>(&mut self, shared: impl IntoIterator<Item = &'a Bytes>) {
        let mut shared = shared.into_iter().filter(|p| !p.is_empty()).peekable();
        if shared.peek().is_none() {
            // Nothing shared: the body stays in one piece.
            return;
        }
        self.seal();
        self.parts.extend(shared.cloned());
    }

    /// Takes back the last byte written if it is `byte` (a trailing comma),
    /// wherever it is: in the buffer or at the end of a shared part.
    pub fn drop_last(&mut self, byte: u8) {
        if !self.buf.is_empty() {
            if self.buf.last() == Some(&byte) {
                self.buf.pop();
            }
            return;
        }
        if let Some(last) = self.parts.last_mut()
            && last.last() == Some(&byte)
        {
            last.truncate(last.len() - 1);
        }
    }

    pub fn finish(mut self) -> Body {
        self.seal();
        Body {
            len: self.parts.iter().map(Bytes::len).sum(),
            parts: self.parts,
        }
    }

    /// The buffer becomes a part of its own.
    fn seal(&mut self) {
        if !self.buf.is_empty() {
            self.parts.push(Bytes::from(std::mem::take(&mut self.buf)));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parts_keep_their_order_and_a_trailing_byte_is_taken_from_either_side() {
        let shared = [Bytes::from_static(b"b,c,"), Bytes::new()];
        let mut w = BodyWriter::default();
        w.buf().extend_from_slice(b"[a,");
        w.push_shared(&shared);
        w.drop_last(b',');
        w.buf().push(b']');
        let body = w.finish();
        assert_eq!(&body.to_bytes()[..], b"[a,b,c]");
        assert_eq!(body.len(), 7);
        // The shared part was not copied: the body holds it as it was.
        assert_eq!(body.parts.len(), 3);

        let mut w = BodyWriter::default();
        w.push_shared(&shared);
        w.buf().extend_from_slice(b"d,");
        w.drop_last(b',');
        w.drop_last(b'x');
        let body = w.finish();
        assert_eq!(&body.to_bytes()[..], b"b,c,d");
        assert_eq!(body.len(), 5);
        assert!(BodyWriter::default().finish().is_empty());

        // Nothing to share: one piece.
        let mut w = BodyWriter::default();
        w.buf().extend_from_slice(b"[a,");
        w.push_shared(&[Bytes::new()]);
        w.buf().extend_from_slice(b"b]");
        let body = w.finish();
        assert_eq!(body.parts.len(), 1);
        assert_eq!(&body.to_bytes()[..], b"[a,b]");
    }
}
