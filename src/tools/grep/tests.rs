#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use serde_json::json;

use super::*;
use crate::tools::test_support::Fixture;

impl Fixture {
    async fn grep(&self, input: Value) -> ToolOutput {
        run(&input, &self.env()).await
    }

    /// Sets `rel`'s modification time `secs` seconds after the epoch.
    fn age(&self, rel: &str, secs: u64) {
        let file = std::fs::File::options()
            .write(true)
            .open(self.ws.root().join(rel))
            .unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    }
}

fn repo() -> Fixture {
    let f = Fixture::new();
    f.put(
        "src/main.rs",
        "fn main() {\n    let parser = Parser::new();\n    parser.run();\n}\n",
    );
    f.put("src/parse.rs", "// the Parser\npub struct Parser;\nimpl Parser {\n    pub fn new() -> Self { Parser }\n}\n");
    f.put("docs/guide.md", "Use the parser.\nparser docs\n");
    f.put("target/debug/out.rs", "Parser in a build folder\n");
    f.put(".gitignore", "target/\n");
    f.put(".hidden/secret.rs", "Parser hidden\n");
    f.age("src/main.rs", 3000);
    f.age("src/parse.rs", 2000);
    f.age("docs/guide.md", 1000);
    f
}

#[tokio::test]
async fn files_are_listed_newest_first_honouring_gitignore_and_hidden() {
    let f = repo();
    let out = f.grep(json!({"pattern": "Parser"})).await;
    assert_eq!(out.content, "src/main.rs\nsrc/parse.rs");
    let out = f.grep(json!({"pattern": "parser", "-i": true})).await;
    assert_eq!(out.content, "src/main.rs\nsrc/parse.rs\ndocs/guide.md");
    let out = f
        .grep(json!({"pattern": "parser", "-i": true, "type": "rust"}))
        .await;
    assert_eq!(out.content, "src/main.rs\nsrc/parse.rs");
    let out = f
        .grep(json!({"pattern": "parser", "-i": true, "glob": "*.md"}))
        .await;
    assert_eq!(out.content, "docs/guide.md");
    let out = f
        .grep(json!({"pattern": "Parser", "path": "src/parse.rs"}))
        .await;
    assert_eq!(out.content, "src/parse.rs");
}

#[tokio::test]
async fn content_has_line_numbers_and_context_and_count_counts_lines() {
    let f = repo();
    let out = f
        .grep(json!({"pattern": "Parser::new|struct", "output_mode": "content", "-n": true}))
        .await;
    assert_eq!(
        out.content,
        "src/main.rs:2:    let parser = Parser::new();\nsrc/parse.rs:2:pub struct Parser;"
    );
    let out = f
        .grep(json!({"pattern": "struct", "output_mode": "content", "-n": true, "-C": 1}))
        .await;
    assert_eq!(
        out.content,
        "src/parse.rs-1-// the Parser\nsrc/parse.rs:2:pub struct Parser;\nsrc/parse.rs-3-impl Parser {"
    );
    let out = f
        .grep(json!({"pattern": "Parser", "output_mode": "count"}))
        .await;
    assert!(
        out.content.starts_with("src/main.rs:1\nsrc/parse.rs:4"),
        "{}",
        out.content
    );
    assert!(out.content.contains("[5 matching lines in 2 files.]"));
    let out = f
        .grep(json!({"pattern": "struct Parser;\\nimpl", "multiline": true, "output_mode": "content"}))
        .await;
    assert_eq!(
        out.content,
        "src/parse.rs:pub struct Parser;\nsrc/parse.rs:impl Parser {"
    );
}

#[tokio::test]
async fn a_long_result_is_paged_and_says_how_to_narrow_it() {
    let f = Fixture::new();
    for i in 0..30 {
        f.put(&format!("f{i:02}.txt"), "needle\n");
        f.age(&format!("f{i:02}.txt"), 1000);
    }
    let out = f.grep(json!({"pattern": "needle", "head_limit": 10})).await;
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines[0], "f00.txt", "same time: by path");
    assert_eq!(lines.len(), 11);
    assert!(
        lines[10].contains("10 of 30 files shown (from 1)"),
        "{}",
        lines[10]
    );
    assert!(lines[10].contains("offset=10"));
    let out = f
        .grep(json!({"pattern": "needle", "head_limit": 10, "offset": 25}))
        .await;
    assert_eq!(out.content, "f25.txt\nf26.txt\nf27.txt\nf28.txt\nf29.txt");
}

#[tokio::test]
async fn binary_huge_and_linked_files_are_skipped_and_said() {
    let f = Fixture::new();
    f.put("a.txt", "needle\n");
    std::fs::write(f.ws.root().join("blob.bin"), b"needle\0\x01\x02").unwrap();
    let big = std::fs::File::create(f.ws.root().join("huge.log")).unwrap();
    big.set_len(MAX_FILE + 1).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "needle\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        f.ws.root().join("link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), f.ws.root().join("out")).unwrap();
    let out = f.grep(json!({"pattern": "needle"})).await;
    assert!(out.content.starts_with("a.txt\n"), "{}", out.content);
    assert!(
        out.content.contains("Skipped 1 binary file(s): blob.bin."),
        "{}",
        out.content
    );
    assert!(
        out.content
            .contains("Skipped 1 file(s) over 20 MiB: huge.log (20 MiB)"),
        "{}",
        out.content
    );
    assert!(
        !out.content.contains("secret") && !out.content.contains("link.txt"),
        "{}",
        out.content
    );
    let out = f.grep(json!({"pattern": "needle", "path": "../"})).await;
    assert!(out.outcome.is_error(), "{}", out.content);
    let out = f.grep(json!({"pattern": "needle", "path": "out"})).await;
    assert!(
        out.outcome.is_error(),
        "a link out is refused: {}",
        out.content
    );
}

#[tokio::test]
async fn bad_input_is_named() {
    let f = repo();
    let out = f.grep(json!({"pattern": "("})).await;
    assert!(
        out.content.contains("invalid pattern `(`"),
        "{}",
        out.content
    );
    let out = f
        .grep(json!({"pattern": "x", "output_mode": "lines"}))
        .await;
    assert!(
        out.content
            .contains("one of files_with_matches, content, count")
    );
    let out = f.grep(json!({"pattern": "x", "type": "nosuchtype"})).await;
    assert!(
        out.content.contains("invalid type `nosuchtype`"),
        "{}",
        out.content
    );
    let out = f.grep(json!({"pattern": "x", "-A": -1})).await;
    assert!(out.content.contains("`-A` must be a non-negative integer"));
    let out = f.grep(json!({"pattern": "zzz_not_there"})).await;
    assert_eq!(out.content, "No matches for `zzz_not_there`.");
}
