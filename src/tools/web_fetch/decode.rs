//! A page's `Content-Encoding` undone. Invariant: no more than
//! [`MAX_BYTES`] are ever decoded (a small gzip of a huge page is cut like
//! a huge page), and an encoding Waypoint cannot read is said, never shown
//! as binary text. Waypoint asks for no encoding; this is for servers
//! that compress anyway.

use std::io::Read;

use super::MAX_BYTES;

/// The body as the page's bytes: `raw` (whose reading was `cut` short or
/// not) with `encoding` (the `Content-Encoding` header, a list applied
/// in order) undone; and whether the result was cut.
pub fn decoded(encoding: &str, raw: Vec<u8>, cut: bool) -> Result<(Vec<u8>, bool), String> {
    let codings: Vec<String> = encoding
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    let (mut body, mut cut) = (raw, cut);
    for coding in codings.iter().rev() {
        (body, cut) = match coding.as_str() {
            "gzip" | "x-gzip" => {
                inflate(flate2::read::MultiGzDecoder::new(&body[..]), cut, coding)?
            }
            "deflate" if zlib_header(&body) => {
                inflate(flate2::read::ZlibDecoder::new(&body[..]), cut, coding)?
            }
            // Some servers send a bare deflate stream as `deflate`.
            "deflate" => inflate(flate2::read::DeflateDecoder::new(&body[..]), cut, coding)?,
            other => {
                return Err(format!(
                    "the page is compressed as `{other}`, which web_fetch cannot decode (it reads gzip and deflate)"
                ));
            }
        };
    }
    Ok((body, cut))
}

/// Whether `body` starts with a zlib header (RFC 1950: deflate, and the
/// two bytes a multiple of 31).
fn zlib_header(body: &[u8]) -> bool {
    match body {
        [cmf, flg, ..] => cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

/// At most [`MAX_BYTES`] of what `decoder` gives; a stream that ends
/// early is kept as far as it went when the compressed body was `cut`
/// (the end was never read), and is an error otherwise.
fn inflate(decoder: impl Read, cut: bool, coding: &str) -> Result<(Vec<u8>, bool), String> {
    let mut out = Vec::new();
    // One byte past the limit tells a page that is longer.
    match decoder.take(MAX_BYTES as u64 + 1).read_to_end(&mut out) {
        Ok(_) => {}
        Err(_) if cut && !out.is_empty() => {}
        Err(e) => return Err(format!("the page's {coding} encoding is broken: {e}")),
    }
    let over = out.len() > MAX_BYTES;
    out.truncate(MAX_BYTES);
    Ok((out, cut || over))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_passes_and_unknown_or_broken_encodings_are_said() {
        let (body, cut) = decoded("", b"plain".to_vec(), false).unwrap();
        assert_eq!((body.as_slice(), cut), (&b"plain"[..], false));
        let (body, _) = decoded("identity", b"plain".to_vec(), false).unwrap();
        assert_eq!(body, b"plain");
        let e = decoded("br", b"\x0b\x02".to_vec(), false).unwrap_err();
        assert!(e.contains("`br`") && e.contains("gzip and deflate"), "{e}");
        let e = decoded("gzip", b"not gzip".to_vec(), false).unwrap_err();
        assert!(e.contains("gzip encoding is broken"), "{e}");
    }
}
