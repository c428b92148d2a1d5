//! Helpers shared by the integration tests that are not about a model
//! provider: process liveness (`proc`), the MCP reference servers (`mcp`)
//! and the temp-workspace fixture of the tools (`workspace`). `repo`: git repositories and file
//! trees for the checkpoint tests. `sandbox`: what the sandbox tests need of
//! the machine, and the switch that makes a missing piece a failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod mcp;
pub mod proc;
pub mod repo;
pub mod sandbox;
pub mod tmux;
pub mod workspace;

/// Writes an executable file at `path` (a stand-in program, a copy of the
/// binary) through a child process: the tests are one process, and a file
/// this process held open for writing while another test forked would be
/// "busy" (ETXTBSY) when executed; a child's descriptor never is ours.
pub fn write_program(path: &std::path::Path, content: &[u8]) {
    use std::io::Write;
    let mut child = std::process::Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(content).unwrap();
    assert!(
        child.wait().unwrap().success(),
        "{} was not written",
        path.display()
    );
}

/// Copies the program at `from` to `to` as [`write_program`] writes one.
pub fn copy_program(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success(), "{} was not copied", from.display());
}
