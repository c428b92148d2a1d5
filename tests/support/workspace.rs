//! The fixture of the integration tests that run tools: a temporary folder,
//! the workspace rooted there, a `ToolConfig` and a cancellation token.
//! Invariant: the folder lives exactly as long as the fixture (or, after
//! `into_parts`, as long as the `TempDir` handed out).
//!
//! The unit tests inside the crate have their own copy in
//! `src/tools/test_support.rs`: it is `cfg(test)`-only and `pub(crate)`, so
//! the integration tests, which see the library as a user does, cannot reach it.

use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use waypoint::tools::{ToolConfig, ToolEnv, ToolOutput, Workspace, run_workspace_tool};

pub struct Fixture {
    dir: tempfile::TempDir,
    pub ws: Workspace,
    pub config: ToolConfig,
    pub cancel: CancellationToken,
}

impl Fixture {
    /// An empty workspace with the default limits.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        Self {
            dir,
            ws,
            config: ToolConfig::default(),
            cancel: CancellationToken::new(),
        }
    }

    /// The folder and the workspace, for a test that hands the workspace to
    /// an agent; the folder is removed when the `TempDir` drops.
    pub fn into_parts(self) -> (tempfile::TempDir, Workspace) {
        (self.dir, self.ws)
    }

    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    /// The environment a tool call runs in, without live output.
    pub fn env(&self) -> ToolEnv<'_> {
        ToolEnv::new(&self.ws, &self.config, &self.cancel)
    }

    /// Runs the workspace tool `name` through the dispatcher.
    pub async fn call(&self, name: &str, input: Value) -> ToolOutput {
        run_workspace_tool(name, &input, &self.env()).await
    }

    /// Writes `content` to `rel`, creating parent folders.
    pub fn put(&self, rel: &str, content: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    /// The text of `rel`.
    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).expect("read")
    }
}
