//! Path confinement. STUB (helper B).

use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Canonicalises `root`; fails if it is not an existing directory.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(Self { root: root.as_ref().canonicalize()? })
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// Resolves a model-given path inside the workspace, or explains why not.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        Ok(self.root.join(path))
    }
}
