//! What the daily-driver keys need from outside the app: the workspace's
//! files for the `@` picker, an external editor for the message, and the
//! OSC 52 sequence that puts text on the terminal's clipboard. Invariants:
//! the listing is capped ([`MAX_FILES`]) and runs on a blocking thread,
//! never on the draw path; the editor runs only while the terminal is
//! handed back to it (see `terminal::suspend`); the clipboard sequence
//! carries its text base64-encoded, so nothing in it reaches the terminal
//! as a control.

use std::path::Path;

use crate::tui::state::files::listable;

/// Paths listed for the picker, at most.
pub const MAX_FILES: usize = 20_000;

/// The workspace's files and folders (folders end with `/`), relative to
/// `root`, `.gitignore` honoured and hidden ones left out, in name order;
/// `true` with them when the listing stopped at `cap`.
pub fn list_files(root: &Path, cap: usize) -> (Vec<String>, bool) {
    let walk = ignore::WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut out = Vec::new();
    for entry in walk.flatten() {
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str().filter(|r| !r.is_empty()) else {
            continue;
        };
        if !listable(rel) {
            continue;
        }
        if out.len() >= cap {
            return (out, true);
        }
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push(if dir {
            format!("{rel}/")
        } else {
            rel.to_string()
        });
    }
    (out, false)
}

/// The editor to run: `$VISUAL`, else `$EDITOR`, else `vi`, split into
/// the program and its arguments (`code --wait`).
pub fn editor_command(visual: Option<String>, editor: Option<String>) -> Vec<String> {
    let chosen = [visual, editor]
        .into_iter()
        .flatten()
        .find(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    chosen.split_whitespace().map(str::to_string).collect()
}

/// Runs the editor on a temporary file holding `text`; what the file
/// holds when the editor exits successfully, or why it failed.
pub async fn run_editor(text: &str) -> Result<String, String> {
    let command = editor_command(std::env::var("VISUAL").ok(), std::env::var("EDITOR").ok());
    let Some((program, args)) = command.split_first() else {
        return Err("no editor is set".into());
    };
    let file = tempfile::Builder::new()
        .prefix("waypoint-message-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| format!("no temporary file: {e}"))?;
    std::fs::write(file.path(), text).map_err(|e| format!("cannot write the message: {e}"))?;
    let status = tokio::process::Command::new(program)
        .args(args)
        .arg(file.path())
        .status()
        .await
        .map_err(|e| format!("`{program}` cannot be run ({e}); set $VISUAL or $EDITOR"))?;
    if !status.success() {
        return Err(match status.code() {
            Some(code) => format!("`{program}` exited with {code}"),
            None => format!("`{program}` was killed"),
        });
    }
    let bytes = std::fs::read(file.path()).map_err(|e| format!("cannot read it back: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The OSC 52 sequence that sets the clipboard to `text`.
pub fn osc52(text: &str) -> String {
    format!("\u{1b}]52;c;{}\u{7}", base64(text.as_bytes()))
}

/// Standard base64 with padding (RFC 4648), as OSC 52 wants it.
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The image for the input: the file at `path` (`~/` and relative to the
/// workspace `root` resolved; the user chose it, so it may lie outside),
/// or the clipboard's (`None`) through `wl-paste` or `xclip`, with a
/// clear word where there is no clipboard (an ssh session).
pub async fn read_image(
    root: &std::path::Path,
    path: Option<&str>,
) -> Result<(crate::chat::ImageSource, crate::chat::ImageInfo), String> {
    read_image_in(root, path, &|k: &str| std::env::var_os(k)).await
}

/// The environment a clipboard reader is looked up and run in.
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<std::ffi::OsString> + Sync);

/// [`read_image`] with the environment `env` (`HOME`, the displays,
/// `PATH` for the clipboard readers) instead of the process's.
pub async fn read_image_in(
    root: &std::path::Path,
    path: Option<&str>,
    env: Env<'_>,
) -> Result<(crate::chat::ImageSource, crate::chat::ImageInfo), String> {
    use crate::chat::image::{ImageSource, MAX_IMAGE_BYTES};
    let bytes = match path {
        Some(path) => {
            let home = env("HOME").map(std::path::PathBuf::from);
            let full = match (path.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => root.join(path),
            };
            let shown = full.display().to_string();
            let read = tokio::task::spawn_blocking(move || {
                use std::io::Read;
                use std::os::unix::fs::OpenOptionsExt;
                // A FIFO or device named like an image must not hang the
                // app: checked before, and opened without blocking.
                if !std::fs::metadata(&full)?.is_file() {
                    return Err(std::io::Error::other("not a regular file"));
                }
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&full)?;
                if !file.metadata()?.is_file() {
                    return Err(std::io::Error::other("not a regular file"));
                }
                let mut bytes = Vec::new();
                file.take(MAX_IMAGE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)?;
                Ok(bytes)
            })
            .await
            .map_err(|e| format!("reading {shown} stopped: {e}"))?;
            read.map_err(|e| format!("cannot read {shown}: {e}"))?
        }
        None => clipboard_image(env).await?,
    };
    ImageSource::from_bytes(&bytes).map_err(|why| format!("the image is {why}"))
}

/// The clipboard's image as PNG bytes.
async fn clipboard_image(env: Env<'_>) -> Result<Vec<u8>, String> {
    const FALLBACK: &str = "paste or drag the image's path into the input instead";
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    let readers: Vec<(&str, &[&str])> = [
        set("WAYLAND_DISPLAY").map(|_| ("wl-paste", &["--no-newline", "--type", "image/png"][..])),
        set("DISPLAY").map(|_| {
            (
                "xclip",
                &["-selection", "clipboard", "-t", "image/png", "-o"][..],
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if readers.is_empty() {
        let why = if set("SSH_CONNECTION").is_some() {
            "no clipboard here (an ssh session)"
        } else {
            "no clipboard here (no Wayland or X display)"
        };
        return Err(format!("No image pasted: {why}; {FALLBACK}."));
    }
    let mut tried = Vec::new();
    for (program, args) in readers {
        let mut command = tokio::process::Command::new(program);
        // Looked up in, and run with, the environment's PATH and displays.
        for var in ["PATH", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"] {
            match env(var) {
                Some(value) => command.env(var, value),
                None => command.env_remove(var),
            };
        }
        let run = command
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        match tokio::time::timeout(std::time::Duration::from_secs(3), run).await {
            Ok(Ok(out)) if out.status.success() && !out.stdout.is_empty() => return Ok(out.stdout),
            Ok(Ok(_)) => tried.push(format!("{program}: no image in the clipboard")),
            Ok(Err(e)) => tried.push(format!("{program}: {e}")),
            Err(_) => tried.push(format!("{program}: no answer in 3 s")),
        }
    }
    Err(format!(
        "No image pasted ({}); {FALLBACK}.",
        tried.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
        assert_eq!(osc52("hi\u{1b}"), "\u{1b}]52;c;aGkb\u{7}");
    }

    #[test]
    fn the_editor_is_visual_then_editor_then_vi() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            editor_command(s("code --wait"), s("nano")),
            ["code", "--wait"]
        );
        assert_eq!(editor_command(s(" "), s("nano")), ["nano"]);
        assert_eq!(editor_command(None, None), ["vi"]);
    }

    #[test]
    fn the_listing_honours_gitignore_and_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        std::fs::write(root.join("src/deep/x.rs"), "").unwrap();
        std::fs::write(root.join("target/junk"), "").unwrap();
        std::fs::write(root.join("has space.txt"), "").unwrap();
        let (files, cut) = list_files(root, 100);
        assert_eq!(files, ["src/", "src/deep/", "src/deep/x.rs", "src/main.rs"]);
        assert!(!cut);
        let (files, cut) = list_files(root, 2);
        assert_eq!(files.len(), 2);
        assert!(cut);
    }
}
