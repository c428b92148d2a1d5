//! `waypoint mcp list` and `waypoint mcp check NAME`, the real binary with
//! a config file of the test's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli_support;
mod support;

use std::path::PathBuf;

use cli_support::{output, waypoint};

fn config(dir: &std::path::Path, everything: Option<&PathBuf>) -> PathBuf {
    let mut text = String::from(
        "[mcp_servers.broken]\ncommand = \"bash\"\nargs = [\"-c\", \"echo 'no token set' >&2; exit 1\"]\n\n[mcp_servers.off]\ncommand = \"true\"\nenabled = false\n",
    );
    if let Some(program) = everything {
        text.push_str(&format!(
            "\n[mcp_servers.everything]\ncommand = {:?}\ndisabled_tools = [\"get-env\"]\n",
            program.to_string_lossy()
        ));
    }
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn list_shows_each_server_and_check_says_why_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = output(waypoint(dir.path()).args(["mcp", "list"])).await;
    assert_eq!(code, 0);
    assert!(out.contains("No MCP servers configured"), "{out}");

    let cfg = config(dir.path(), None);
    let run = |args: &'static [&'static str]| {
        let mut cmd = waypoint(dir.path());
        cmd.env("WAYPOINT_CONFIG", &cfg).args(args);
        cmd
    };
    let (code, out, _) = output(&mut run(&["mcp", "list"])).await;
    assert_eq!(code, 0);
    assert!(out.contains("broken\tenabled\tbash -c"), "{out}");
    assert!(out.contains("off\tdisabled\ttrue"), "{out}");

    let (code, _, err) = output(&mut run(&["mcp", "check", "broken"])).await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("MCP server broken failed: did not initialize"),
        "{err}"
    );
    assert!(err.contains("no token set"), "{err}");

    let (code, _, err) = output(&mut run(&["mcp", "check", "nope"])).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("configured: broken, off"), "{err}");
}

#[tokio::test]
async fn check_starts_a_real_server_and_lists_its_tools() {
    let Some(program) = support::mcp::reference_server("mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), Some(&program));
    let mut cmd = waypoint(dir.path());
    cmd.env("WAYPOINT_CONFIG", &cfg)
        .args(["mcp", "check", "everything"]);
    let (code, out, err) = output(&mut cmd).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("everything: ready in"), "{out}");
    assert!(out.contains("mcp__everything__echo  [reads]"), "{out}");
    assert!(
        out.contains("mcp__everything__get-env  [not offered]"),
        "{out}"
    );
    assert!(
        out.contains("mcp__everything__toggle-simulated-logging  [asks in ask mode]"),
        "{out}"
    );
}
