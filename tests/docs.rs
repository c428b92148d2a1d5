//! The README's key and command tables are the ones the app uses: each is
//! generated from its table in the code (`tui::keymap::BINDINGS`,
//! `tui::commands::COMMANDS`) and must match it, so the docs can never
//! disagree with the keys; and its architecture map names every module of
//! `src/`.

#![allow(clippy::expect_used)]

use waypoint::tui::{commands, keymap};

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("README.md has a `{start}` marker"))
        + start.len();
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("README.md has a `{end}` marker"));
    text[from..from + to].trim()
}

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

#[test]
fn the_readme_key_table_is_the_keymap() {
    let readme = readme();
    let shown = between(&readme, "<!-- keymap:start -->", "<!-- keymap:end -->");
    let expected = keymap::markdown_table();
    assert_eq!(
        shown,
        expected.trim(),
        "paste this between the keymap markers in README.md:\n{expected}"
    );
}

#[test]
fn the_readme_command_table_is_the_registry() {
    let readme = readme();
    let shown = between(&readme, "<!-- commands:start -->", "<!-- commands:end -->");
    let expected = commands::markdown_table();
    assert_eq!(
        shown,
        expected.trim(),
        "paste this between the commands markers in README.md:\n{expected}"
    );
}

/// Every top-level module of `src/` (a folder or a file) is named in the
/// README's architecture map (a folder beside its `NAME.rs` by either
/// name), so the map cannot leave a folder out again.
#[test]
fn the_architecture_map_names_every_top_level_module() {
    let readme = readme();
    let map = between(
        &readme,
        "## Architecture",
        "`tests/architecture.rs` fails the build",
    );
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(src).expect("src/") {
        let entry = entry.expect("an entry of src/");
        let name = entry.file_name().to_string_lossy().into_owned();
        let (module, named) = match name.strip_suffix(".rs") {
            Some("lib") => continue,
            Some(module) => (
                module.to_string(),
                vec![
                    format!("{module}.rs"),
                    format!("{module},"),
                    format!("{module}:"),
                ],
            ),
            None => (
                name.clone(),
                vec![format!("src/{name}/"), format!("src/{name}.rs")],
            ),
        };
        if !named.iter().any(|n| map.contains(n.as_str())) {
            missing.push(module);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "README.md's architecture map does not name these modules of src/: {missing:?}"
    );
}
