//! `read_file` on an image: the picture itself for a model that takes
//! images, a clear refusal naming the model for one that does not.
//! Invariant: the file is opened beneath the workspace like any other,
//! read only up to the providers' limit, and taken for an image only when
//! its bytes are one (a `.png` of text is read as text); and shown only
//! while the reply's image budget lasts ([`crate::tools::image_budget`]).

use std::io::Read;

use super::open_file;
use crate::chat::image::{ImageSource, MAX_IMAGE_BYTES, looks_like_image, sniff};
use crate::tools::{ToolEnv, ToolHost, ToolOutput};

/// The output of `read_file` when the file `raw` names is an image;
/// `None`: read it as text (not an image by name or by bytes, or a path
/// the text reader reports on).
pub(super) async fn image(raw: &str, env: &ToolEnv<'_>, host: &ToolHost<'_>) -> Option<ToolOutput> {
    let path = env.workspace.resolve(raw).ok()?;
    if !looks_like_image(&path) {
        return None;
    }
    let shown = env.workspace.display(&path);
    // A reply whose images are spent reads no more of them.
    if let Err(why) = host.image_room() {
        return Some(ToolOutput::error(format!("`{shown}` not shown: {why}")));
    }
    let files = env.workspace.files().clone();
    let rel = env.workspace.relative(&path).to_path_buf();
    let shown_task = shown.clone();
    let read = tokio::task::spawn_blocking(move || {
        let (file, _) = open_file(&files, &rel, &shown_task)?;
        let mut bytes = Vec::new();
        // One byte past the limit tells a file that is too big.
        file.take(MAX_IMAGE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read `{shown_task}`: {e}"))?;
        Ok::<_, String>(bytes)
    })
    .await;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        // The text reader says the same (missing, a folder, a FIFO…).
        Ok(Err(_)) | Err(_) => return None,
    };
    sniff(&bytes)?;
    let (source, info) = match ImageSource::from_bytes(&bytes) {
        Ok(image) => image,
        Err(why) => return Some(ToolOutput::error(format!("`{shown}` is {why}"))),
    };
    if let Err(why) = host.images() {
        return Some(ToolOutput::error(format!(
            "`{shown}` is an image ({info}, {} bytes); {why}",
            info.bytes
        )));
    }
    if let Err(why) = host.take_image(info.bytes) {
        return Some(ToolOutput::error(format!(
            "`{shown}` ({info}, {} bytes) not shown: {why}",
            info.bytes
        )));
    }
    Some(ToolOutput {
        images: vec![source],
        ..ToolOutput::ok(format!(
            "[image `{shown}`: {info}, {} bytes; it follows the results]",
            info.bytes
        ))
    })
}
