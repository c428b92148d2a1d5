//! End-to-end tests of the file tools through the dispatcher: a write, read,
//! edit and glob round trip stays inside the workspace and leaves no
//! temporary files behind; an interrupted call touches nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::workspace::Fixture;

fn fixture() -> Fixture {
    Fixture::new()
}

#[tokio::test]
async fn write_read_edit_glob_round_trip() {
    let f = fixture();
    let out = f
        .call(
            "write_file",
            json!({"path": "src/main.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"}),
        )
        .await;
    assert_eq!(
        out.content,
        "Wrote 34 bytes (3 lines) to src/main.rs (created)"
    );

    let out = f
        .call(
            "read_file",
            json!({"path": "src/main.rs", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(
        out.content,
        "     2\t    println!(\"hi\");\n… 1 more line; use offset=3 to continue\n"
    );

    let out = f
        .call(
            "edit_file",
            json!({"path": "src/main.rs", "old_text": "\"hi\"", "new_text": "\"hello\""}),
        )
        .await;
    assert!(!out.is_error(), "{}", out.content);
    assert!(
        out.content
            .starts_with("Edited src/main.rs: replaced 1 occurrence\n@@ line 2 @@\n")
    );
    assert!(out.content.contains("+    println!(\"hello\");"));

    let out = f.call("glob", json!({"pattern": "**/*"})).await;
    assert_eq!(out.content, "src/main.rs", "no temporary files left behind");
}

#[tokio::test]
async fn every_tool_refuses_paths_outside() {
    let f = fixture();
    let outside = tempfile::tempdir().unwrap();
    let abs = outside.path().join("x.txt");
    std::fs::write(&abs, "secret\n").unwrap();
    let abs = abs.to_str().unwrap();
    let calls = [
        ("read_file", json!({"path": abs})),
        ("write_file", json!({"path": abs, "content": "x"})),
        (
            "edit_file",
            json!({"path": abs, "old_text": "secret", "new_text": "x"}),
        ),
        ("read_file", json!({"path": "../x.txt"})),
        ("glob", json!({"pattern": "../*"})),
    ];
    for (name, input) in calls {
        let out = f.call(name, input.clone()).await;
        assert!(out.is_error(), "{name} {input}: {}", out.content);
        assert!(out.content.starts_with("Error: "));
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("x.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn wrong_typed_input_never_panics() {
    let f = fixture();
    for name in ["read_file", "write_file", "edit_file", "glob", "bash"] {
        for input in [
            json!(null),
            json!([]),
            json!("str"),
            json!({"path": {}, "pattern": 1, "command": []}),
        ] {
            let out = f.call(name, input.clone()).await;
            assert!(out.is_error(), "{name} {input}");
            assert!(
                out.content.starts_with("Error: "),
                "{name} {input}: {}",
                out.content
            );
        }
    }
}

#[tokio::test]
async fn an_interrupted_call_touches_nothing() {
    let f = fixture();
    std::fs::write(f.ws.root().join("a.txt"), "old\n").unwrap();
    f.cancel.cancel();
    let calls = [
        ("read_file", json!({"path": "a.txt"})),
        ("write_file", json!({"path": "b.txt", "content": "x"})),
        (
            "edit_file",
            json!({"path": "a.txt", "old_text": "old", "new_text": "new"}),
        ),
        ("glob", json!({"pattern": "**/*"})),
        ("bash", json!({"command": "touch c.txt"})),
    ];
    for (name, input) in calls {
        let out = f.call(name, input).await;
        assert!(out.is_error() && out.was_interrupted(), "{name}: {out:?}");
        assert!(
            out.content
                .starts_with("Error: interrupted by the user before this tool finished."),
            "{name}: {}",
            out.content
        );
    }
    let names: Vec<_> = std::fs::read_dir(f.ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.txt"]);
    assert_eq!(
        std::fs::read_to_string(f.ws.root().join("a.txt")).unwrap(),
        "old\n"
    );
}

#[tokio::test]
async fn write_through_a_dangling_link_keeps_the_link() {
    let f = fixture();
    std::os::unix::fs::symlink("docs/notes.md", f.ws.root().join("NOTES.md")).unwrap();
    let out = f
        .call(
            "write_file",
            json!({"path": "NOTES.md", "content": "# Notes\n"}),
        )
        .await;
    assert_eq!(out.content, "Wrote 8 bytes (1 line) to NOTES.md (created)");
    assert!(
        std::fs::symlink_metadata(f.ws.root().join("NOTES.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let out = f.call("read_file", json!({"path": "docs/notes.md"})).await;
    assert_eq!(out.content, "     1\t# Notes\n");
}
