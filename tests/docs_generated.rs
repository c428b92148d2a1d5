//! The book's generated pages: each is made from the code, and the
//! committed file must be what the code makes now, so a change in code
//! that is not in the docs fails the suite. [`GENERATED`] is the one list
//! of them; `WAYPOINT_BLESS=1 cargo test --test all docs_generated::`
//! writes them anew.

use std::path::Path;

use waypoint::config::schema;
use waypoint::events::schema as seam;
use waypoint::tui::{commands, keymap};

/// The command that rewrites every generated page.
const BLESS: &str = "WAYPOINT_BLESS=1 cargo test --test all docs_generated::";

/// Every generated file (from the repository's root), the code it is
/// made from (`None`: a JSON file, without the "generated" line) and what
/// makes it.
type Page = (&'static str, Option<&'static str>, fn() -> String);

const GENERATED: &[Page] = &[
    (
        "docs/src/reference/keys.md",
        Some("`waypoint::tui::keymap::BINDINGS`"),
        keys_page,
    ),
    (
        "docs/src/reference/commands.md",
        Some("`waypoint::tui::commands::COMMANDS`"),
        commands_page,
    ),
    (
        schema::REFERENCE_FILE,
        Some(
            "the settings types (`waypoint::config::Layer`), the flags (`waypoint::cli::Cli`) and `waypoint::config::ENV_VARS`",
        ),
        config_page,
    ),
    (schema::SCHEMA_FILE, None, schema::schema_text),
    (
        "docs/src/reference/events.md",
        Some("`waypoint::events::Event`, `Envelope` and `waypoint::headless::ResultLine`"),
        events_page,
    ),
    (
        "docs/src/dev/seam-schema.md",
        Some("`waypoint::events::Op` and `Envelope`"),
        seam::seam_page,
    ),
    (
        seam::SEAM_SCHEMA_FILE,
        None,
        waypoint::headless::schema_text,
    ),
];

/// A page as committed: the "generated" line, then what `make` makes.
fn page(from: Option<&str>, make: fn() -> String) -> String {
    match from {
        Some(from) => format!(
            "> Generated from {from} by `{BLESS}`; do not edit by hand.\n\n{}",
            make()
        ),
        None => make(),
    }
}

fn keys_page() -> String {
    format!(
        "# Keys\n\nEvery key binding of the full-screen app, where it works and what it does.\n\n{}",
        keymap::markdown_table()
    )
}

fn commands_page() -> String {
    format!(
        "# Slash commands\n\nEvery `/command` typed in the app's input, with its arguments and what it does.\n\n{}",
        commands::markdown_table()
    )
}

fn events_page() -> String {
    seam::events_page(&waypoint::headless::result_schema())
}

fn config_page() -> String {
    schema::reference_text(&waypoint::cli::setting_flags())
}

#[test]
fn the_generated_pages_are_made_from_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("WAYPOINT_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, from, make) in GENERATED {
        let file = root.join(path);
        let made = page(*from, *make);
        if bless {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &made).unwrap();
            continue;
        }
        if std::fs::read_to_string(&file).ok().as_deref() != Some(made.as_str()) {
            stale.push(*path);
        }
    }
    assert!(
        stale.is_empty(),
        "not what the code makes now: {}; rewrite them with `{BLESS}` and commit them",
        stale.join(", ")
    );
}

/// Every table row of a generated page has as many cells as its header
/// (a `|` inside a cell is escaped), so the tables render.
#[test]
fn the_generated_tables_are_well_formed() {
    for (path, from, make) in GENERATED.iter().filter(|(p, ..)| p.ends_with(".md")) {
        let page = page(*from, *make);
        let mut columns = None;
        for line in page.lines() {
            if !line.starts_with('|') {
                columns = None;
                continue;
            }
            let cells = cells(line);
            match columns {
                None => columns = Some(cells),
                Some(n) => assert_eq!(
                    cells, n,
                    "{path}: a row's cells differ from its header's: {line}"
                ),
            }
        }
    }
}

/// The cells of a table row: its unescaped `|`, less one.
fn cells(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '|' if !escaped => count += 1,
            _ => {}
        }
        escaped = c == '\\' && !escaped;
    }
    count - 1
}
