//! Guards the house: the engine knows nothing of terminals and never
//! prints, the seam (`events/`) is plain data that imports no provider
//! or tool code, no source file grows past 600 lines of code before its
//! unit tests, no function past 120 lines, no struct past 12 public
//! fields (the config's DTOs aside), and no two modules import each other
//! (so the house has floors: every import runs down).

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
    "src/events",
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

/// The file's library code: what comes before its unit tests (the first
/// `#[cfg(test)]` that opens a module with a body; a `#[cfg(test)]` on a
/// `mod x;` line or another item does not end the code).
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).expect("readable source");
    let mut at = 0;
    while let Some(found) = text[at..].find("#[cfg(test)]") {
        let start = at + found;
        let rest = &text[start + "#[cfg(test)]".len()..];
        // Further attributes may stand between it and the item.
        let item = rest
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("#["))
            .unwrap_or_default();
        if item.contains("mod ") && item.ends_with('{') {
            return text[..start].to_string();
        }
        at = start + 1;
    }
    text
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

/// The model clients speak the conversation's words (`chat`), never the
/// tools': a tool's definition reaches them as `chat::ToolDef`.
#[test]
fn the_model_clients_import_no_tools() {
    let mut files = Vec::new();
    rust_files(&root().join("src/llm"), &mut files);
    assert!(files.len() >= 5, "the model clients' files: {files:?}");
    for file in files {
        let code = code_of(&file);
        assert!(
            !code.contains("crate::tools"),
            "{} imports the tools: the model clients take `chat::ToolDef`",
            file.display()
        );
    }
}

#[test]
fn the_seam_is_plain_data() {
    let mut files = Vec::new();
    rust_files(&root().join("src/events"), &mut files);
    assert!(files.len() >= 2, "the seam's files: {files:?}");
    for file in files {
        let code = code_of(&file);
        for banned in [
            "crate::llm",
            "crate::tools",
            "crate::agent",
            "crate::checkpoint",
            "dyn ",
            "Arc<",
        ] {
            assert!(
                !code.contains(banned),
                "{} mentions `{banned}`: Ops and Events carry plain, serialisable data",
                file.display()
            );
        }
    }
}

/// The `n` largest of `sizes` (name, size), largest first, as one line:
/// what is nearest a cap, so the next split is planned before it fails.
fn nearest(sizes: &[(String, usize)], n: usize) -> String {
    let mut sizes = sizes.to_vec();
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sizes
        .iter()
        .take(n)
        .map(|(name, size)| format!("{name} ({size})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Files over [`NEW_FILE_LINES`] when that cap came: each may stay (under
/// [`MAX_LINES`]) until it is split, and none may join them.
const OVER_NEW_FILE_CAP: &[&str] = &[
    "src/agent/subagent.rs",
    "src/checkpoint/live.rs",
    "src/config/mod.rs",
    "src/events/mod.rs",
    "src/headless.rs",
    "src/llm/http.rs",
    "src/llm/openai/stream.rs",
    "src/mcp/manager.rs",
    "src/safety/evaluate.rs",
    "src/safety/sandbox.rs",
    "src/safety/shell.rs",
    "src/safety/wrappers.rs",
    "src/session/export.rs",
    "src/session/replay.rs",
    "src/setup.rs",
    "src/tui/app.rs",
    "src/tui/commands/mod.rs",
    "src/tui/state/conversation.rs",
    "src/tui/state/status.rs",
    "src/tui/state/trace.rs",
    "src/tui/update/keys.rs",
    "src/tui/widgets/checklist.rs",
];

/// A new file's cap, below [`MAX_LINES`] to leave room to grow.
const NEW_FILE_LINES: usize = 500;

#[test]
fn no_source_file_is_longer_than_600_lines_before_its_tests() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    assert!(files.len() >= 20, "found the sources: {files:?}");
    let sizes: Vec<(String, usize)> = files
        .iter()
        .map(|f| (rel(f), code_of(f).lines().count()))
        .collect();
    println!("nearest {MAX_LINES} lines: {}", nearest(&sizes, 5));
    let mut long: Vec<String> = sizes
        .iter()
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(file, lines)| format!("{file} ({lines})"))
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "split these by responsibility (at most {MAX_LINES} lines before the tests): {long:?}; \
         nearest: {}",
        nearest(&sizes, 5)
    );
    let mut grown: Vec<String> = sizes
        .iter()
        .filter(|(file, lines)| {
            *lines > NEW_FILE_LINES && !OVER_NEW_FILE_CAP.contains(&file.as_str())
        })
        .map(|(file, lines)| format!("{file} ({lines})"))
        .collect();
    grown.sort();
    // The list only shrinks: a file split below the cap leaves it.
    let split: Vec<&&str> = OVER_NEW_FILE_CAP
        .iter()
        .filter(|file| {
            sizes
                .iter()
                .all(|(f, lines)| f != *file || *lines <= NEW_FILE_LINES)
        })
        .collect();
    assert!(
        split.is_empty(),
        "these are no longer over {NEW_FILE_LINES} lines: take them off OVER_NEW_FILE_CAP: {split:?}"
    );
    assert!(
        grown.is_empty(),
        "a file that was not over {NEW_FILE_LINES} lines is now (a new feature is a component in \
         files of its own): {grown:?}"
    );
}

/// Structs whose public fields are the point: the settings read from
/// flags and files (a DTO each), checked field by field by serde and clap.
const DTOS: &[(&str, &str)] = &[
    ("src/cli.rs", "Cli"),
    ("src/config/mod.rs", "Layer"),
    ("src/config/mod.rs", "Settings"),
];

const MAX_FN_LINES: usize = 120;
const MAX_PUB_FIELDS: usize = 12;

fn src_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    files
}

fn rel(file: &Path) -> String {
    file.strip_prefix(root())
        .unwrap_or(file)
        .display()
        .to_string()
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).expect("readable source");
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", rel(file)))
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Walks the library code of one file (test modules left out).
#[derive(Default)]
struct Survey {
    /// Functions: name and lines, from `fn` to the closing brace.
    fns: Vec<(String, usize)>,
    /// Structs: name and their public fields (`pub` or `pub(…)`).
    structs: Vec<(String, usize)>,
    /// Paths that start at the crate root, `super` or `self`, as written.
    paths: Vec<Vec<String>>,
}

impl Survey {
    fn function(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let start = fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        self.fns.push((name.to_string(), end - start + 1));
    }
}

impl<'ast> syn::visit::Visit<'ast> for Survey {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.function(&f.sig.ident, &f.sig.fn_token, &f.block);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_cfg_test(&f.attrs) {
            return;
        }
        self.function(&f.sig.ident, &f.sig.fn_token, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig.ident, &f.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        let public = s
            .fields
            .iter()
            .filter(|f| !matches!(f.vis, syn::Visibility::Inherited))
            .count();
        self.structs.push((s.ident.to_string(), public));
        syn::visit::visit_item_struct(self, s);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&u.tree, Vec::new(), &mut out);
        self.paths
            .extend(out.into_iter().filter(|p| is_local(p.first())));
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if is_local(segments.first()) {
            self.paths.push(segments);
        }
        syn::visit::visit_path(self, p);
    }
}

fn is_local(first: Option<&String>) -> bool {
    first.is_some_and(|f| f == "crate" || f == "super" || f == "self")
}

fn use_paths(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let with = |name: String| {
        let mut p = prefix.clone();
        p.push(name);
        p
    };
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree, with(p.ident.to_string()), out),
        syn::UseTree::Name(n) => out.push(with(n.ident.to_string())),
        syn::UseTree::Rename(r) => out.push(with(r.ident.to_string())),
        syn::UseTree::Glob(_) => out.push(prefix),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix.clone(), out);
            }
        }
    }
}

fn survey(file: &Path) -> Survey {
    let mut s = Survey::default();
    syn::visit::Visit::visit_file(&mut s, &parse(file));
    s
}

#[test]
fn no_function_is_longer_than_120_lines() {
    let mut long = Vec::new();
    let mut sizes = Vec::new();
    for file in src_files() {
        for (name, lines) in survey(&file).fns {
            if lines > MAX_FN_LINES {
                long.push(format!("{}: {name} ({lines})", rel(&file)));
            }
            sizes.push((format!("{}: {name}", rel(&file)), lines));
        }
    }
    println!("nearest {MAX_FN_LINES} lines: {}", nearest(&sizes, 5));
    assert!(
        long.is_empty(),
        "split these into named steps (at most {MAX_FN_LINES} lines): {long:?}; nearest: {}",
        nearest(&sizes, 5)
    );
}

#[test]
fn no_struct_has_more_than_12_public_fields() {
    let mut wide = Vec::new();
    let mut sizes = Vec::new();
    for file in src_files() {
        let path = rel(&file);
        for (name, public) in survey(&file).structs {
            let dto = DTOS.iter().any(|(f, n)| *f == path && *n == name);
            if public > MAX_PUB_FIELDS && !dto {
                wide.push(format!("{path}: {name} ({public})"));
            }
            if !dto {
                sizes.push((format!("{path}: {name}"), public));
            }
        }
    }
    println!(
        "nearest {MAX_PUB_FIELDS} public fields: {}",
        nearest(&sizes, 5)
    );
    assert!(
        wide.is_empty(),
        "group these fields into small structs that keep their invariants \
         (at most {MAX_PUB_FIELDS} public): {wide:?}; nearest: {}",
        nearest(&sizes, 5)
    );
}

/// A source file's module path (`src/agent/turn.rs` → `agent::turn`).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The modules each file imports, as files (by the longest module path a
/// reference starts with).
fn import_graph() -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let files = src_files();
    let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    files
        .iter()
        .zip(&modules)
        .map(|(file, here)| {
            let is_root = file.ends_with("mod.rs");
            let mut targets = Vec::new();
            for path in survey(file).paths {
                // Make the path absolute (from the crate root).
                let mut abs: Vec<String> = Vec::new();
                let mut rest: &[String];
                match path.first().map(String::as_str) {
                    Some("crate") => rest = &path[1..],
                    Some("self" | "super") => {
                        // `self` of a file is its module; of a `mod.rs`, the folder's.
                        abs = here.clone();
                        if path[0] == "super" && !is_root {
                            abs.pop();
                        }
                        rest = &path[1..];
                        while rest.first().is_some_and(|s| s == "super") {
                            abs.pop();
                            rest = &rest[1..];
                        }
                        if path[0] == "super" && is_root {
                            abs.pop();
                        }
                    }
                    _ => continue,
                }
                abs.extend(rest.iter().cloned());
                let target = modules
                    .iter()
                    .filter(|m| !m.is_empty() && abs.starts_with(m))
                    .max_by_key(|m| m.len());
                if let Some(target) = target
                    && target != here
                    && !targets.contains(target)
                {
                    targets.push(target.clone());
                }
            }
            (here.clone(), targets)
        })
        .collect()
}

/// A circle in `edges` (each node's targets), if there is one.
fn find_circle(edges: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &[(String, Vec<String>)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.iter().any(|d| d == node) {
            return None;
        }
        path.push(node.to_string());
        for (from, targets) in edges {
            if from == node {
                for t in targets {
                    if let Some(c) = visit(t, edges, path, done) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        done.push(node.to_string());
        None
    }
    let mut done = Vec::new();
    for (node, _) in edges {
        if let Some(c) = visit(node, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    // Folder by folder (`agent`, `llm`, `session`, …): a circle here is an
    // import that runs back up a floor.
    let mut edges: Vec<(String, Vec<String>)> = Vec::new();
    for (module, targets) in import_graph() {
        let Some(top) = module.first().cloned() else {
            continue;
        };
        let mut tops: Vec<String> = targets
            .iter()
            .filter_map(|t| t.first().cloned())
            .filter(|t| *t != top)
            .collect();
        match edges.iter_mut().find(|(m, _)| *m == top) {
            Some((_, known)) => known.append(&mut tops),
            None => edges.push((top, tops)),
        }
    }
    assert!(edges.len() >= 15, "found the modules: {edges:?}");
    let circle = find_circle(&edges);
    assert!(
        circle.is_none(),
        "these modules import each other; move what they share down a floor: {circle:?}"
    );
}

#[test]
fn no_two_files_import_each_other() {
    // File by file, inside the folders too; a folder's `mod.rs` and the
    // files under it are one room (the parent hands its children's names on).
    let graph = import_graph();
    let edges: Vec<(String, Vec<String>)> = graph
        .iter()
        .map(|(module, targets)| {
            let targets = targets
                .iter()
                .filter(|t| !t.starts_with(module) && !module.starts_with(t))
                .map(|t| t.join("::"))
                .collect();
            (module.join("::"), targets)
        })
        .collect();
    let circle = find_circle(&edges);
    assert!(
        circle.is_none(),
        "these files import each other; move what they share into one of them or below both: {circle:?}"
    );
}

#[test]
fn the_engine_never_imports_the_drivers() {
    for (module, targets) in import_graph() {
        let engine = ENGINE.iter().any(|part| {
            let name = part.trim_start_matches("src/").trim_end_matches(".rs");
            module.first().is_some_and(|m| m == name)
        });
        if engine {
            for target in targets {
                let top = target.first().map(String::as_str);
                assert!(
                    !matches!(top, Some("tui" | "headless" | "setup" | "resume" | "cli")),
                    "{} imports {}",
                    module.join("::"),
                    target.join("::")
                );
            }
        }
    }
}
