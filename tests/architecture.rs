//! Guards the house: the engine knows nothing of terminals and never
//! prints, the seam (`events.rs`) is plain data that imports no provider
//! or tool code, and no source file grows past 600 lines of code before
//! its unit tests.

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

/// The engine: everything below the seam, which any driver (TUI, headless,
/// tests) uses through `Op`s and `Event`s.
const ENGINE: &[&str] = &[
    "src/agent",
    "src/llm",
    "src/tools",
    "src/todo",
    "src/session",
    "src/safety",
    "src/pylit.rs",
    "src/json.rs",
    "src/events.rs",
];

const MAX_LINES: usize = 600;

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("readable source folder") {
            rust_files(&entry.expect("entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") && path.exists() {
        out.push(path.to_path_buf());
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The file's library code: what comes before its `#[cfg(test)]` module.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).expect("readable source");
    text.split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .to_string()
}

fn engine_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for part in ENGINE {
        let path = root().join(part);
        // A module may be a file or a folder (`todo.rs` or `todo/`).
        let before = files.len();
        rust_files(&path, &mut files);
        rust_files(&path.with_extension("rs"), &mut files);
        assert!(files.len() > before, "{part} has no sources");
    }
    files
}

#[test]
fn engine_files_neither_touch_the_terminal_nor_print() {
    let files = engine_files();
    assert!(files.len() >= 10, "found the engine sources: {files:?}");
    for file in files {
        let code = code_of(&file);
        for banned in [
            "ratatui",
            "crossterm",
            "crate::tui",
            "waypoint::tui",
            "crate::headless",
            "println!",
            "print!(",
            "eprintln!",
            "eprint!(",
            "std::io::stdout",
            "dbg!(",
        ] {
            assert!(
                !code.contains(banned),
                "{} mentions `{banned}`",
                file.display()
            );
        }
    }
}

#[test]
fn the_seam_is_plain_data() {
    let code = code_of(&root().join("src/events.rs"));
    for banned in ["crate::llm", "crate::tools", "crate::agent", "dyn ", "Arc<"] {
        assert!(
            !code.contains(banned),
            "src/events.rs mentions `{banned}`: Ops and Events carry plain, serialisable data"
        );
    }
}

#[test]
fn no_source_file_is_longer_than_600_lines_before_its_tests() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    assert!(files.len() >= 20, "found the sources: {files:?}");
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = code_of(f).lines().count();
            (lines > MAX_LINES).then(|| {
                format!(
                    "{} ({lines})",
                    f.strip_prefix(root()).unwrap_or(f).display()
                )
            })
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "split these by responsibility (at most {MAX_LINES} lines before the tests): {long:?}"
    );
}
