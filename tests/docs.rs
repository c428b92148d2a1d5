//! The README's key and command tables are the ones the app uses: each is
//! generated from its table in the code (`tui::keymap::BINDINGS`,
//! `tui::commands::COMMANDS`) and must match it, so the docs can never
//! disagree with the keys.

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
