//! The fixture the workspace tools' unit tests share: a temporary workspace,
//! a `ToolConfig` and a cancellation token. Invariant: the temporary folder
//! lives exactly as long as the fixture, and nothing here is compiled outside
//! `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{ToolConfig, ToolEnv, Workspace};

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub ws: Workspace,
    pub config: ToolConfig,
    pub cancel: CancellationToken,
}

impl Fixture {
    /// An empty workspace with the default limits.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        Self {
            _dir: dir,
            ws,
            config: ToolConfig::default(),
            cancel: CancellationToken::new(),
        }
    }

    /// A workspace holding `files`, each containing `x`.
    pub fn with_files(files: &[&str]) -> Self {
        let f = Self::new();
        for rel in files {
            f.put(rel, "x");
        }
        f
    }

    /// The environment a tool call runs in, without live output.
    pub fn env(&self) -> ToolEnv<'_> {
        ToolEnv::new(&self.ws, &self.config, &self.cancel)
    }

    /// The environment with live output sent to `tx`.
    pub fn env_with_output<'a>(&'a self, tx: &'a UnboundedSender<String>) -> ToolEnv<'a> {
        ToolEnv {
            output: Some(tx),
            sandboxed: false,
            read_only: false,
            narrowed: None,
            call: None,
            ..self.env()
        }
    }

    /// Writes `content` to `rel`, creating parent folders.
    pub fn put(&self, rel: &str, content: &str) {
        let p = self.ws.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// The text of `rel`.
    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.root().join(rel)).unwrap()
    }

    /// The sorted names in the folder `rel`.
    pub fn entries(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.ws.root().join(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}
