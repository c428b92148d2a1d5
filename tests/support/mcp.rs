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
