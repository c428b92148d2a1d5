//! Images in the conversation: the block a user's paste, a `read_file` of
//! an image or an MCP tool's image result becomes. Invariant: an image is
//! only ever made from bytes whose format was recognised from the bytes
//! themselves (PNG, JPEG, GIF, WebP: what every provider takes), whose
//! size was read from its header, and that fit the providers' limit.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The largest image sent, in bytes: base64 makes it 5 MB, Anthropic's
/// limit per image (OpenAI's is higher).
pub const MAX_IMAGE_BYTES: usize = 3_750_000;

/// An image as the Anthropic wire writes it (`{"type": "base64",
/// "media_type", "data"}`); the other wires make a data URL of it.
#[derive(schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// How `data` is encoded: `base64`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The image's MIME type: `image/png`, `image/jpeg`, `image/gif` or
    /// `image/webp`.
    pub media_type: String,
    /// Base64 of the bytes.
    pub data: String,
}

/// What is said of an image where it cannot be shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    pub width: usize,
    pub height: usize,
    /// `png`, `jpeg`, `gif`, `webp`.
    pub format: &'static str,
    pub bytes: usize,
}

impl std::fmt::Display for ImageInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{} {}", self.width, self.height, self.format)
    }
}

/// The format of `bytes` when it is an image a provider takes.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("webp")
    } else {
        None
    }
}

/// Whether a path's name says image (before its bytes are read).
pub fn looks_like_image(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .is_some_and(|e| matches!(e.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp"))
}

impl ImageSource {
    /// The image `bytes` are, or why they cannot be sent as one.
    pub fn from_bytes(bytes: &[u8]) -> Result<(ImageSource, ImageInfo), String> {
        let format = sniff(bytes).ok_or("not a PNG, JPEG, GIF or WebP image")?;
        let size = imagesize::blob_size(bytes)
            .map_err(|e| format!("a {format} image whose size cannot be read ({e})"))?;
        let info = ImageInfo {
            width: size.width,
            height: size.height,
            format,
            bytes: bytes.len(),
        };
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(format!(
                "a {info} image of {} bytes, more than the {MAX_IMAGE_BYTES} bytes a provider takes; make it smaller first",
                bytes.len()
            ));
        }
        let source = ImageSource {
            kind: "base64".into(),
            media_type: format!("image/{format}"),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        };
        Ok((source, info))
    }

    /// A base64 image another way (an MCP result), checked the same.
    pub fn from_base64(data: &str) -> Result<(ImageSource, ImageInfo), String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("an image whose base64 is broken ({e})"))?;
        Self::from_bytes(&bytes)
    }

    /// `data:image/png;base64,…`, as the OpenAI wires take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// About how many bytes it stands for.
    pub fn len(&self) -> usize {
        self.data.len() / 4 * 3
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3x2 PNG made by hand: signature, IHDR, IDAT, IEND.
    pub(crate) fn tiny_png() -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode("iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAYAAACddGYaAAAAEUlEQVR4nGP4z8DwH4YZkDkAm34L9XKwuTwAAAAASUVORK5CYII=")
            .unwrap()
    }

    #[test]
    fn an_image_is_recognised_from_its_bytes() {
        let (source, info) = ImageSource::from_bytes(&tiny_png()).unwrap();
        assert_eq!(info.to_string(), "3x2 png");
        assert_eq!(source.media_type, "image/png");
        assert!(source.data_url().starts_with("data:image/png;base64,iVBOR"));
        let err = ImageSource::from_bytes(b"GIF89a").unwrap_err();
        assert!(err.contains("size cannot be read"), "{err}");
        assert!(ImageSource::from_bytes(b"hello").is_err());
        let mut big = tiny_png();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        let err = ImageSource::from_bytes(&big).unwrap_err();
        assert!(
            err.contains("3x2 png") && err.contains("make it smaller"),
            "{err}"
        );
    }
}
