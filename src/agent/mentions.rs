//! `@path` mentions in a user message: each mentioned file of the
//! workspace is attached after the message, as `read_file` would show it
//! (numbered lines, capped), and a mentioned folder as its listing.
//! Invariants: only paths inside the workspace are read or listed, through
//! its root fd (the file tools' confinement applies); a word that names no
//! file (`@alice`) is left alone; the attachments are a separate text
//! block, so the user's own words stay as typed.

use std::fmt::Write as _;

use crate::tools::ToolEnv;

/// Files attached from one message, at most.
const MAX_FILES: usize = 10;
/// Entries listed for a mentioned folder, at most.
const MAX_ENTRIES: usize = 200;

/// The `@…` words of `text` (at its start or after white space), without
/// the `@` and trailing punctuation.
pub fn mentioned(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| w.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']))
        .filter(|w| !w.is_empty())
        .collect()
}

/// What a message's mentions attach.
#[derive(Debug, Default, PartialEq)]
pub struct Attached {
    /// The files' text and the folders' listings (`None`: nothing).
    pub text: Option<String>,
    /// The images mentioned, for a model that takes them.
    pub images: Vec<crate::chat::ImageSource>,
    /// Why an image mentioned was not attached, one line each.
    pub refused: Vec<String>,
}

/// The attachments for `text`'s mentions, or `None` when nothing mentioned
/// is a file or folder of the workspace (images aside).
pub async fn attachments(text: &str, env: &ToolEnv<'_>) -> Option<String> {
    attach(text, env, &crate::tools::ToolHost::detached())
        .await
        .text
}

/// The attachments for `text`'s mentions: text, listings and images
/// (`host` says whether the model takes them).
pub async fn attach(text: &str, env: &ToolEnv<'_>, host: &crate::tools::ToolHost<'_>) -> Attached {
    let mut attached = Attached::default();
    let mut out = String::new();
    let mut seen: Vec<std::path::PathBuf> = Vec::new();
    for word in mentioned(text) {
        if seen.len() >= MAX_FILES {
            break;
        }
        let Ok(path) = env.workspace.resolve(word) else {
            continue;
        };
        if seen.contains(&path) {
            continue;
        }
        let shown = env.workspace.display(&path);
        // Through the root fd: what a link swapped in since `resolve`
        // points at is not listed, nor read.
        let rel = env.workspace.relative(&path);
        let Ok(meta) = env.workspace.files().metadata(rel) else {
            continue;
        };
        if meta.is_dir() {
            let Ok(entries) = env.workspace.files().read_dir(rel) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .into_iter()
                .map(|e| {
                    let name = e.name.to_string_lossy().into_owned();
                    if e.is_dir { format!("{name}/") } else { name }
                })
                .collect();
            names.sort();
            let more = names.len().saturating_sub(MAX_ENTRIES);
            names.truncate(MAX_ENTRIES);
            let _ = write!(out, "\n\n<folder path=\"{shown}\">\n{}", names.join("\n"));
            if more > 0 {
                let _ = write!(out, "\n… and {more} more");
            }
            out.push_str("\n</folder>");
        } else if meta.is_file()
            && let Some(image) =
                crate::tools::fs::read_image(&serde_json::json!({ "path": word }), env, host).await
        {
            let _ = write!(out, "\n\n<image path=\"{shown}\">{}</image>", image.content);
            if image.is_error() {
                let why = image.content.strip_prefix("Error: ");
                attached
                    .refused
                    .push(why.unwrap_or(&image.content).to_string());
            }
            attached.images.extend(image.images);
        } else if meta.is_file() {
            let read = crate::tools::fs::read_file(&serde_json::json!({ "path": word }), env).await;
            if read.is_error() {
                continue;
            }
            let _ = write!(
                out,
                "\n\n<file path=\"{shown}\">\n{}\n</file>",
                read.content.trim_end()
            );
        } else {
            continue;
        }
        seen.push(path);
    }
    attached.text = (!seen.is_empty())
        .then(|| format!("The user mentioned these; their contents as of now:{out}"));
    attached
}

impl super::Session {
    /// What `text`'s `@path` mentions attach (see [`super::mentions`]).
    pub(super) async fn attachments(&self, text: &str) -> Attached {
        let cancel = tokio_util::sync::CancellationToken::new();
        let env = crate::tools::ToolEnv::new(
            &self.host.shared.workspace,
            &self.host.config.tools,
            &cancel,
        );
        let model = self.thread.client.model();
        let host = crate::tools::ToolHost::detached()
            .with_model(model, self.thread.takes_images(&self.host.config));
        attach(text, &env, &host).await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::test_support::Fixture;

    #[test]
    fn mentions_are_at_words() {
        assert_eq!(
            mentioned("look at @src/main.rs, and @docs/ (then ask @alice) email@x.org"),
            ["src/main.rs", "docs/", "alice"]
        );
    }

    #[tokio::test]
    async fn files_and_folders_of_the_workspace_are_attached() {
        let f = Fixture::new();
        f.put("src/main.rs", "fn main() {}\n");
        f.put("src/lib.rs", "");
        let text = "explain @src/main.rs and @src/ but not @alice or @../etc/passwd";
        let att = attachments(text, &f.env()).await.unwrap();
        assert!(
            att.contains("<file path=\"src/main.rs\">\n     1\tfn main() {}\n</file>"),
            "{att}"
        );
        assert!(
            att.contains("<folder path=\"src\">\nlib.rs\nmain.rs\n</folder>"),
            "{att}"
        );
        assert!(!att.contains("alice") && !att.contains("passwd"), "{att}");
        assert_eq!(attachments("no mentions", &f.env()).await, None);
    }
}
