//! Images stored once in a transcript (format 3). Invariant: an image
//! (by the SHA-256 of its media type and data) is written whole the first
//! time a record of the file holds it; every later record that holds it
//! again (the same file read twice, a compaction's kept messages) writes
//! `{"type": "ref", "media_type": …, "data": "sha256:…"}` in its place,
//! and reading the file puts the whole image back wherever a reference
//! stands, so the records read are the records written.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::record::Record;
use crate::chat::{ContentBlock, ImageSource};

/// The `type` of an image that stands for one written before.
const REF: &str = "ref";

/// The first format whose files may hold references.
pub(super) const FORMAT_WITH_REFS: u32 = 3;

/// An image's content address: `sha256:` and the hex digest of its media
/// type and data.
fn address(image: &ImageSource) -> String {
    let mut hash = Sha256::new();
    hash.update(image.media_type.as_bytes());
    hash.update([0]);
    hash.update(image.data.as_bytes());
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Calls `f` on each image `record` holds, in order.
fn each(record: &Record<'_>, f: &mut dyn FnMut(&ImageSource)) {
    match record {
        Record::Images { images, .. } => images.iter().for_each(f),
        Record::Compaction { messages, .. } => {
            for block in messages.iter().flat_map(|m| &m.content) {
                if let ContentBlock::Image { source } = block {
                    f(source);
                }
            }
        }
        Record::Thread { record, .. } => each(record, f),
        _ => {}
    }
}

/// [`each`], able to change them (an owned record: nothing is copied).
fn each_mut(record: &mut Record<'_>, f: &mut dyn FnMut(&mut ImageSource)) {
    match record {
        Record::Images { images, .. } => images.to_mut().iter_mut().for_each(f),
        Record::Compaction { messages, .. } => {
            for block in messages.to_mut().iter_mut().flat_map(|m| &mut m.content) {
                if let ContentBlock::Image { source } = block {
                    f(source);
                }
            }
        }
        Record::Thread { record, .. } => each_mut(record, f),
        _ => {}
    }
}

/// `record` as it is written when `written` (the addresses of the images
/// the file holds whole) has some of its images: a copy with those as
/// references; `None`: it is written as it is. Its new images are added to
/// `written`.
pub(super) fn stored_once(
    record: &Record<'_>,
    written: &mut HashSet<String>,
) -> Option<Record<'static>> {
    let mut addresses = Vec::new();
    let mut repeated = false;
    let mut here = HashSet::new();
    each(record, &mut |image| {
        if image.kind != REF {
            let at = address(image);
            repeated |= written.contains(&at) || !here.insert(at.clone());
            addresses.push(at);
        }
    });
    if !repeated {
        written.extend(addresses);
        return None;
    }
    let mut copy = record.clone().into_owned();
    let mut addresses = addresses.into_iter();
    each_mut(&mut copy, &mut |image| {
        if image.kind == REF {
            return;
        }
        let Some(at) = addresses.next() else {
            return;
        };
        if written.contains(&at) {
            *image = ImageSource {
                kind: REF.into(),
                media_type: image.media_type.clone(),
                data: at,
            };
        } else {
            written.insert(at);
        }
    });
    Some(copy)
}

/// Puts the whole image back wherever a reference stands in `records`
/// (read in order); a reference to an image the file does not hold is
/// left out, with a note. Returns the addresses of the images held whole
/// (where a writer appending to the file goes on from).
pub(super) fn resolve(records: &mut [Record<'static>], notes: &mut Vec<String>) -> HashSet<String> {
    let mut wanted = HashSet::new();
    for record in records.iter() {
        each(record, &mut |image| {
            if image.kind == REF {
                wanted.insert(image.data.clone());
            }
        });
    }
    let mut whole: HashMap<String, Option<ImageSource>> = HashMap::new();
    let mut missing = 0;
    for record in records.iter_mut() {
        each_mut(record, &mut |image| {
            if image.kind == REF {
                match whole.get(&image.data) {
                    Some(Some(found)) => *image = found.clone(),
                    _ => missing += 1,
                }
                return;
            }
            let at = address(image);
            // Kept only when a reference needs it.
            let kept = wanted.contains(&at).then(|| image.clone());
            whole.entry(at).or_insert(kept);
        });
    }
    if missing > 0 {
        for record in records.iter_mut() {
            drop_refs(record);
        }
        notes.push(format!(
            "{} left out: the file does not hold the image it refers to",
            crate::units::plural(missing, "image reference")
        ));
    }
    whole.into_keys().collect()
}

/// Takes the references that were not resolved out of `record`.
fn drop_refs(record: &mut Record<'_>) {
    match record {
        Record::Images { images, .. } if images.iter().any(|i| i.kind == REF) => {
            images.to_mut().retain(|i| i.kind != REF);
        }
        Record::Compaction { messages, .. } => {
            for message in messages.to_mut() {
                message
                    .content
                    .retain(|b| !matches!(b, ContentBlock::Image { source } if source.kind == REF));
            }
        }
        Record::Thread { record, .. } => drop_refs(record),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn a_reference_to_an_image_the_file_lacks_is_left_out_with_a_note() {
        let whole = ImageSource {
            kind: "base64".into(),
            media_type: "image/png".into(),
            data: "iVBORw0KGgo".into(),
        };
        let lost = ImageSource {
            kind: REF.into(),
            media_type: "image/png".into(),
            data: "sha256:00".into(),
        };
        let mut records = vec![Record::Images {
            images: Cow::Owned(vec![lost, whole.clone()]),
            at: 1,
        }];
        let mut notes = Vec::new();
        let held = resolve(&mut records, &mut notes);
        assert_eq!(held, HashSet::from([address(&whole)]));
        assert_eq!(
            records[0],
            Record::Images {
                images: Cow::Owned(vec![whole]),
                at: 1
            }
        );
        assert_eq!(
            notes,
            ["1 image reference left out: the file does not hold the image it refers to"]
        );
    }
}
