//! A `session/prompt`'s content as the engine's input: text as it is, a
//! link to a file in the workspace as an `@path` mention (the engine
//! attaches the file), an embedded resource as a context block, images as
//! attachments of the message.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::chat::ImageSource;

/// The message's text and its images.
#[derive(Debug, Default, PartialEq)]
pub struct Input {
    pub text: String,
    pub images: Vec<ImageSource>,
}

/// Reads the prompt's blocks; `root` is the workspace.
pub fn input(blocks: &[ContentBlock], root: &Path) -> Input {
    let mut text = String::new();
    let mut context = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(image) => images.push(ImageSource {
                kind: "base64".to_string(),
                media_type: image.mime_type.clone(),
                data: image.data.clone(),
            }),
            ContentBlock::ResourceLink(link) => {
                push_word(&mut text, &mention(&link.uri, root));
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    push_word(&mut text, &mention(&r.uri, root));
                    context.push_str(&format!(
                        "\n\n<context uri=\"{}\">\n{}\n</context>",
                        r.uri,
                        r.text.trim_end_matches('\n')
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    push_word(&mut text, &format!("[binary resource {}]", r.uri));
                }
                _ => {}
            },
            ContentBlock::Audio(_) => push_word(&mut text, "[audio: not supported]"),
            _ => {}
        }
    }
    text.push_str(&context);
    Input { text, images }
}

/// A `file://` URI inside the workspace as `@relative/path`; anything
/// else as the URI itself.
fn mention(uri: &str, root: &Path) -> String {
    let Some(path) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    let path = crate::text::percent_decoded(path);
    match Path::new(&path).strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => format!("@{}", relative.display()),
        _ => uri.to_string(),
    }
}

fn push_word(text: &mut String, word: &str) {
    if !text.is_empty() && !text.ends_with(char::is_whitespace) {
        text.push(' ');
    }
    text.push_str(word);
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ResourceLink, TextContent};

    #[test]
    fn a_link_into_the_workspace_is_a_mention_and_text_stays() {
        let root = Path::new("/work/proj");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("Explain")),
            ContentBlock::ResourceLink(ResourceLink::new(
                "main.rs",
                "file:///work/proj/src/my%20main.rs",
            )),
            ContentBlock::ResourceLink(ResourceLink::new("x", "file:///etc/passwd")),
        ];
        let got = input(&blocks, root);
        assert_eq!(got.text, "Explain @src/my main.rs file:///etc/passwd");
        assert!(got.images.is_empty());
    }
}
