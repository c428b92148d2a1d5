//! Guards the seam: the engine knows nothing of terminals and never prints.

#![allow(clippy::expect_used)]

use std::path::Path;

const ENGINE: &[&str] = &[
    "src/agent",
    "src/llm",
    "src/tools",
    "src/todo",
    "src/json.rs",
    "src/pylit.rs",
    "src/events.rs",
];

fn rust_files(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("readable source folder") {
            rust_files(&entry.expect("entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

#[test]
fn engine_files_neither_touch_the_terminal_nor_print() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for part in ENGINE {
        rust_files(&root.join(part), &mut files);
    }
    assert!(files.len() >= 10, "found the engine sources: {files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable source");
        // Only the library code counts, not its unit tests.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for banned in [
            "ratatui",
            "crossterm",
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
fn the_seam_is_data_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("src/events.rs")).expect("events.rs");
    for banned in ["crate::llm", "crate::tools", "crate::agent"] {
        assert!(!text.contains(banned), "events.rs mentions `{banned}`");
    }
}
