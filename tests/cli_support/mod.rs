//! Running the real `waypoint` binary from a test: a clean environment
//! (only PATH), its log and its sessions in the test's folder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// `waypoint` with only PATH from the environment, its log in `dir` and its
/// sessions under `dir/home` (`WAYPOINT_HOME`).
pub fn waypoint(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WAYPOINT_LOG", dir.join("waypoint.log"))
        .env("WAYPOINT_HOME", dir.join("home"))
        // Headless runs bash in the sandbox; a kernel without Landlock runs it bare.
        .envs(
            waypoint::safety::landlock_abi()
                .is_none()
                .then_some(("WAYPOINT_APPROVAL", "yolo")),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs it to the end: exit code, stdout, stderr.
pub async fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("waypoint finished within 60 s")
        .expect("waypoint ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `waypoint` on the loopback Anthropic server at `url`: `home` is its
/// HOME and `WAYPOINT_HOME` (a config file there is found through
/// `WAYPOINT_CONFIG` when the test sets it), the workspace `ws`, yolo, a
/// test key and `model`.
pub fn on_loopback(home: &Path, ws: &Path, url: &str, model: &str) -> Command {
    on_provider("anthropic", home, ws, url, model)
}

/// The same on the `openai` provider: `model` picks the wire (Responses
/// for codex models) and whether images are taken.
pub fn on_loopback_openai(home: &Path, ws: &Path, url: &str, model: &str) -> Command {
    on_provider("openai", home, ws, url, model)
}

fn on_provider(provider: &str, home: &Path, ws: &Path, url: &str, model: &str) -> Command {
    let key_var = format!("{}_API_KEY", provider.to_ascii_uppercase());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("WAYPOINT_HOME", home)
        .env("WAYPOINT_LOG", home.join("waypoint.log"))
        .env("WAYPOINT_APPROVAL", "yolo")
        .env(key_var, "sk-loopback-test")
        .args(["--provider", provider, "--model", model, "--base-url", url])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}
