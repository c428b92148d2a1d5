//! Where a stdio server starts and what it runs. A server started in the
//! workspace runs what a command wrote there (`python3 -m pkg` imports
//! from its folder, `npx` finds a planted `node_modules`), so it starts in
//! a neutral folder (Waypoint's config folder, else the home folder)
//! unless its `cwd` says otherwise, and `waypoint mcp list` warns when its
//! program or folder lies inside the workspace.

use std::path::{Path, PathBuf};

use crate::config::McpServerConfig;

/// The folder a stdio server starts in: its `cwd` (a relative one taken
/// from the workspace, as written), else a neutral folder.
pub fn cwd(config: &McpServerConfig, workspace: &Path) -> PathBuf {
    match &config.cwd {
        Some(dir) => workspace.join(dir),
        None => neutral(),
    }
}

/// Waypoint's config folder if there is one, else the home folder, else `/`.
fn neutral() -> PathBuf {
    let config = directories::ProjectDirs::from("", "", "waypoint")
        .map(|d| d.config_dir().to_path_buf())
        .filter(|d| d.is_dir());
    let home = || {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute() && h.is_dir())
    };
    config.or_else(home).unwrap_or_else(|| PathBuf::from("/"))
}

/// The program a stdio server runs: a relative path (`./srv.sh`) is the
/// workspace's, as it was when servers started there; a bare name is
/// looked up on `PATH` when it starts.
pub fn program(command: &str, workspace: &Path) -> PathBuf {
    let path = Path::new(command);
    if command.contains('/') && path.is_relative() {
        workspace.join(path)
    } else {
        path.to_path_buf()
    }
}

/// What `waypoint mcp list` warns of: the server's program or folder lies
/// inside the workspace (a command there could rewrite what it runs).
pub fn warning(config: &McpServerConfig, workspace: &Path) -> Option<String> {
    let command = config.command.as_deref()?;
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let inside = |p: &Path| {
        let real = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        real.starts_with(&ws) || p.starts_with(workspace)
    };
    let program = program(command, workspace);
    let found = if program.is_absolute() {
        Some(program)
    } else {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|dir| if dir.is_relative() { ws.join(dir) } else { dir })
                .map(|dir| dir.join(&program))
                .find(|c| c.is_file())
        })
    };
    let mut said = Vec::new();
    if let Some(found) = found.filter(|p| inside(p)) {
        said.push(format!(
            "its program {} is inside the workspace",
            found.display()
        ));
    }
    if config.cwd.is_some() && inside(&cwd(config, workspace)) {
        said.push("it starts inside the workspace (cwd)".to_string());
    }
    (!said.is_empty()).then(|| {
        format!(
            "warning: {}: what a command writes there runs as this server",
            said.join(" and ")
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn stdio(command: &str, cwd: Option<&str>) -> McpServerConfig {
        McpServerConfig {
            command: Some(command.to_string()),
            cwd: cwd.map(PathBuf::from),
            ..McpServerConfig::default()
        }
    }

    #[test]
    fn a_server_starts_outside_the_workspace_unless_its_cwd_says_so() {
        let ws = tempfile::tempdir().unwrap();
        let plain = stdio("python3", None);
        assert!(!cwd(&plain, ws.path()).starts_with(ws.path()));
        assert_eq!(warning(&plain, ws.path()), None);
        let inside = stdio("python3", Some("srv"));
        assert_eq!(cwd(&inside, ws.path()), ws.path().join("srv"));
        let warned = warning(&inside, ws.path()).unwrap();
        assert!(warned.contains("starts inside the workspace"), "{warned}");
    }

    #[test]
    fn a_program_in_the_workspace_is_warned_of() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("srv.sh"), "#!/bin/sh\n").unwrap();
        let relative = stdio("./srv.sh", None);
        assert_eq!(program("./srv.sh", ws.path()), ws.path().join("./srv.sh"));
        let warned = warning(&relative, ws.path()).unwrap();
        assert!(warned.contains("its program"), "{warned}");
    }
}
