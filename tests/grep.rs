//! The `grep` tool through the real binary on a loopback model: the model
//! searches a repository the test makes (a `.gitignore`d folder, a binary
//! file, a link out of the workspace) and reads the matching lines with
//! numbers and context, newest file first, with the binary file named as
//! skipped; a path outside the workspace is an error it can recover from.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded};
use serde_json::json;

fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn write(root: &std::path::Path, rel: &str, text: &[u8], secs: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_greps_the_workspace_and_reads_what_was_skipped() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "src/old.rs",
        b"fn old() {\n    // TODO: remove\n}\n",
        1_000,
    );
    write(
        root,
        "src/new.rs",
        b"fn new() {\n    // TODO: test it\n}\n",
        2_000,
    );
    write(root, "target/gen.rs", b"// TODO: generated\n", 3_000);
    write(root, ".gitignore", b"target/\n", 1_000);
    write(root, "data.bin", b"TODO\0\x01", 1_000);
    std::fs::write(outside.path().join("secret.rs"), "// TODO: secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), root.join("src/link.rs")).unwrap();
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool(
            "grep",
            json!({"pattern": "TODO", "output_mode": "content", "-n": true, "-B": 1}),
        )),
        1 => sse(Turn::tool(
            "grep",
            json!({"pattern": "TODO", "path": "/etc"}),
        )),
        _ => sse(Turn::text("Two TODOs.")),
    }))
    .await;
    let mut cmd = cli_support::on_loopback(home.path(), root, &server.url, Anthropic::MODEL);
    cmd.args(["-p", "find the TODOs"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let requests = server.requests();
    let found = requests[1].last_tool_results()[0]["content"].to_string();
    assert!(
        found.contains(
            "src/new.rs-1-fn new() {\\nsrc/new.rs:2:    // TODO: test it\\n--\\nsrc/old.rs-1-fn old() {\\nsrc/old.rs:2:    // TODO: remove"
        ),
        "newest first, with numbers and context: {found}"
    );
    assert!(
        found.contains("Skipped 1 binary file(s): data.bin."),
        "{found}"
    );
    assert!(
        !found.contains("generated") && !found.contains("secret"),
        "{found}"
    );
    let refused = &requests[2].last_tool_results()[0];
    assert_eq!(refused["is_error"], true);
    assert!(
        refused["content"]
            .to_string()
            .contains("outside the workspace"),
        "{refused}"
    );
}
