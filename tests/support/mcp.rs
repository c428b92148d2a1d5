//! The MCP reference servers published on npm, as `.ci/run` installs them:
//! their `node_modules/.bin` in `WAYPOINT_TEST_MCP_BIN`. Without them a test
//! says it was skipped; with `WAYPOINT_TEST_MCP_REQUIRED` set (as `.ci/run`
//! does) it fails instead.

use std::path::PathBuf;

/// The server program `name` (`mcp-server-everything`, …), or `None`
/// after saying the test is skipped.
pub fn reference_server(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("WAYPOINT_TEST_MCP_BIN")
        .map(|dir| PathBuf::from(dir).join(name))
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("WAYPOINT_TEST_MCP_REQUIRED").is_none(),
            "{name} is not installed: .ci/run installs it (npm) and sets WAYPOINT_TEST_MCP_BIN"
        );
        eprintln!(
            "SKIPPED: {name} not found (set WAYPOINT_TEST_MCP_BIN to the node_modules/.bin \
             that holds it; .ci/run does)"
        );
    }
    found
}

/// `tests/fixtures/mcp/sdk-server.cjs`, a server written with the official
/// TypeScript SDK the reference servers are built on (installed with
/// them), with `env` added (`WAYPOINT_TEST_DELAY_MS`); `None` after saying
/// the test is skipped.
pub fn sdk_server(env: &[(&str, &str)]) -> Option<waypoint::mcp::McpServerConfig> {
    // The SDK is a dependency of the everything server: the same folder.
    let bin = reference_server("mcp-server-everything")?;
    let modules = bin.parent()?.parent()?.to_path_buf();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/sdk-server.cjs");
    let mut vars: std::collections::BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    vars.insert("NODE_PATH".into(), modules.to_string_lossy().into_owned());
    Some(waypoint::mcp::McpServerConfig {
        command: Some("node".into()),
        args: vec![script.to_string_lossy().into_owned()],
        env: vars,
        ..waypoint::mcp::McpServerConfig::default()
    })
}

/// The everything server in its Streamable HTTP mode, on a free port of
/// 127.0.0.1, killed with its group when the guard drops.
pub struct HttpEverything {
    child: std::process::Child,
    pub url: String,
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        // SAFETY: kill has no memory-safety preconditions; the child leads
        // its own group (process_group(0)).
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

pub fn http_everything() -> Option<HttpEverything> {
    use std::os::unix::process::CommandExt;
    let program = reference_server("mcp-server-everything")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(program)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let server = HttpEverything {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let listening = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(listening, "the HTTP everything server did not listen");
    Some(server)
}

/// `node` from PATH (`.ci/run` needs it for the servers above), or `None`
/// after saying the test is skipped; a failure under
/// `WAYPOINT_TEST_MCP_REQUIRED`.
pub fn node() -> Option<String> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("node"))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned());
    if found.is_none() {
        assert!(
            std::env::var_os("WAYPOINT_TEST_MCP_REQUIRED").is_none(),
            "node is not on PATH: the MCP tests need Node.js 20 or newer"
        );
        eprintln!("SKIPPED: node not found on PATH");
    }
    found
}
