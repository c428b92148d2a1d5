//! The docs cannot drift from the code or from each other: the book's
//! architecture page names every module of `src/`; every relative link and
//! anchor in the README, the contributor files and the book resolves
//! (checked offline, as `mdbook build` does not); every page of `docs/src`
//! is in `SUMMARY.md`; every TOML example parses as the config file; and
//! every flag a `waypoint …` example uses exists. The generated reference
//! pages are checked in `docs_generated.rs`.

#![allow(clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use clap::CommandFactory;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every Markdown file the docs check: the repository's own and the book's.
fn markdown_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "BENCHMARKS.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|f| root().join(f))
    .filter(|p| p.exists())
    .collect();
    let mut stack = vec![root().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/src") {
            let path = entry.expect("an entry of docs/src").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text outside fenced code blocks, line by line (fenced lines blank,
/// so line numbers stay).
fn prose(text: &str) -> Vec<&str> {
    let mut fence = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fence = !fence;
                return "";
            }
            if fence { "" } else { line }
        })
        .collect()
}

/// The fenced blocks whose info string starts with `lang`.
fn blocks(text: &str, lang: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match current.take() {
                Some(block) => out.push(block),
                None if info.split([',', ' ']).next() == Some(lang) => {
                    current = Some((n + 1, String::new()));
                }
                None => current = Some((n + 1, "\u{0}skip".into())),
            }
            continue;
        }
        if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out.retain(|(_, body)| !body.starts_with('\u{0}'));
    out
}

/// mdBook's anchor for a heading: lower case, letters, digits, `_` and `-`
/// kept, spaces made `-`, the rest dropped; a repeated one gets `-1`, `-2`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    for line in prose(text) {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect::<String>()
            .to_lowercase();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    for (i, _) in text.match_indices("id=\"") {
        if let Some(end) = text[i + 4..].find('"') {
            out.insert(text[i + 4..i + 4 + end].to_string());
        }
    }
    out
}

/// The targets of the inline links `[text](target)` outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose(text).iter().enumerate() {
        let mut code = false;
        let bytes: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                '`' => code = !code,
                ']' if !code && bytes.get(i + 1) == Some(&'(') => {
                    let rest: String = bytes[i + 2..].iter().collect();
                    if let Some(end) = rest.find(')') {
                        let target = rest[..end].split_whitespace().next().unwrap_or("");
                        out.push((n + 1, target.to_string()));
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut cache: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let files = markdown_files();
    assert!(files.len() > 20, "the book's pages are found: {files:?}");
    for file in &files {
        let text = read(file);
        let shown = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a folder").join(path)
            };
            let Ok(dest) = dest.canonicalize() else {
                broken.push(format!("{shown}:{line}: {target} (no such file)"));
                continue;
            };
            if let Some(anchor) = anchor {
                let known = cache
                    .entry(dest.clone())
                    .or_insert_with(|| anchors(&read(&dest)));
                if !known.contains(anchor) {
                    broken.push(format!("{shown}:{line}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let book = root().join("docs/src");
    let summary = read(&book.join("SUMMARY.md"));
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    let mut missing = Vec::new();
    for file in markdown_files() {
        let Ok(page) = file.strip_prefix(&book) else {
            continue;
        };
        let page = page.display().to_string();
        if page != "SUMMARY.md" && !listed.contains(&page) {
            missing.push(page);
        }
    }
    assert!(
        missing.is_empty(),
        "pages of docs/src missing from SUMMARY.md: {missing:?}"
    );
    for page in &listed {
        assert!(
            book.join(page).exists(),
            "SUMMARY.md lists {page}, which does not exist"
        );
    }
}

/// Every ```toml example is a config file Waypoint reads (blocks that show
/// another file say so in their first line: `# FILE.toml` other than
/// `config.toml`).
#[test]
fn every_toml_example_parses_as_the_config_file() {
    let mut failed = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        for (line, body) in blocks(&text, "toml") {
            let first = body.lines().next().unwrap_or("");
            if first.starts_with("# ") && first.contains(".toml") && !first.contains("config.toml")
            {
                continue;
            }
            checked += 1;
            if let Err(e) = toml::from_str::<waypoint::config::Layer>(&body) {
                let shown = file
                    .strip_prefix(root())
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                failed.push(format!("{shown}:{line}: {e}"));
            }
        }
    }
    assert!(checked >= 3, "the TOML examples are found ({checked})");
    assert!(
        failed.is_empty(),
        "config examples that do not parse:\n{}",
        failed.join("\n")
    );
}

/// The words of every `waypoint …` command shown: in ```sh / ```console
/// blocks (after an optional `$ `) and in inline code.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut take = |n: usize, cmd: &str| {
        let cmd = cmd.trim().trim_start_matches("$ ");
        if let Some(rest) = cmd.strip_prefix("waypoint ") {
            out.push((n, shell_words(rest)));
        }
    };
    for lang in ["sh", "console", "bash"] {
        for (start, body) in blocks(text, lang) {
            for (i, line) in body.lines().enumerate() {
                for part in line.split("&&").chain(line.split(';').skip(1)) {
                    take(start + i + 1, part);
                }
            }
        }
    }
    for (n, line) in prose(text).iter().enumerate() {
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                take(n + 1, span);
            }
        }
    }
    out
}

/// `line`'s words as a shell splits them (quotes kept together), up to a
/// comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.push('\u{0}');
            }
            (None, '#') if word.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    // A quoted word is an argument, never a flag.
    words.retain(|w| !w.starts_with('\u{0}'));
    words
}

/// The flags `words` use that `cmd` (and the subcommands they name) lack.
fn unknown_flags(cmd: &clap::Command, words: &[String]) -> Vec<String> {
    let mut path = vec![cmd.clone()];
    let mut unknown = Vec::new();
    for word in words {
        if word == "--" || word == "|" || word == ">" {
            break;
        }
        let current = path.last().expect("a command").clone();
        if let Some(sub) = current.find_subcommand(word.as_str()) {
            path.push(sub.clone());
            continue;
        }
        let known = |f: &dyn Fn(&clap::Arg) -> bool| {
            path.iter().any(|c| c.get_arguments().any(f))
                || word == "--help"
                || word == "-h"
                || word == "--version"
                || word == "-V"
        };
        if let Some(long) = word.strip_prefix("--") {
            let long = long.split('=').next().unwrap_or("");
            let long = long.trim_end_matches(['.', ',', ')', ';', ':']);
            if !long.is_empty()
                && !long.contains('…')
                && !known(&|a| {
                    a.get_long() == Some(long)
                        || a.get_all_aliases().is_some_and(|al| al.contains(&long))
                })
            {
                unknown.push(word.clone());
            }
        } else if let Some(short) = word.strip_prefix('-') {
            let mut chars = short.chars();
            if let (Some(c), None) = (chars.next(), chars.next())
                && c.is_ascii_alphabetic()
                && !known(&|a| a.get_short() == Some(c))
            {
                unknown.push(word.clone());
            }
        }
    }
    unknown
}

#[test]
fn every_flag_a_waypoint_example_uses_exists() {
    let cli = waypoint::cli::Cli::command();
    let mut bad = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        for (line, words) in commands(&text) {
            checked += 1;
            let unknown = unknown_flags(&cli, &words);
            if !unknown.is_empty() {
                let shown = file
                    .strip_prefix(root())
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                bad.push(format!(
                    "{shown}:{line}: waypoint {} → {unknown:?}",
                    words.join(" ")
                ));
            }
        }
    }
    assert!(checked >= 20, "the examples are found ({checked})");
    assert!(
        bad.is_empty(),
        "examples with flags waypoint lacks:\n{}",
        bad.join("\n")
    );
}

/// Every top-level module of `src/` (a folder or a file) is named in the
/// book's architecture page (a folder beside its `NAME.rs` by either name),
/// so the map cannot leave a folder out again.
#[test]
fn the_architecture_page_names_every_top_level_module() {
    let map = read(&root().join("docs/src/dev/architecture.md"));
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).expect("src/") {
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
        "docs/src/dev/architecture.md does not name these modules of src/: {missing:?}"
    );
}

/// The README stays a front page: short, with the two commands first.
#[test]
fn the_readme_is_a_front_page() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= 220,
        "README.md has {lines} lines; the book takes the rest"
    );
    let two = readme
        .find("## The two commands")
        .expect("the two commands");
    assert!(two < readme.find("## Install").expect("install"));
}

/// Every crate `Cargo.toml` depends on is named, as `` `crate` ``, on the
/// dependencies page, which says what each is for.
#[test]
fn the_dependencies_page_names_every_dependency() {
    let manifest: toml::Table =
        toml::from_str(&read(&root().join("Cargo.toml"))).expect("Cargo.toml parses");
    let page = read(&root().join("docs/src/dev/dependencies.md"));
    let mut missing = Vec::new();
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        let Some(deps) = manifest.get(table).and_then(toml::Value::as_table) else {
            continue;
        };
        for name in deps.keys() {
            if !page.contains(&format!("`{name}`")) {
                missing.push(name.clone());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/src/dev/dependencies.md does not say what these are for: {missing:?}"
    );
}
