//! Helpers shared by the integration tests that are not about a model
//! provider: process liveness (`proc`), the MCP reference servers (`mcp`),
//! the ACP clients (`acp`: the TypeScript SDK's, acpx)
//! and the temp-workspace fixture of the tools (`workspace`). `repo`: git repositories and file
//! trees for the checkpoint tests. `sandbox`: what the sandbox tests need of
//! the machine, and the switch that makes a missing piece a failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod acp;
pub mod mcp;
pub mod proc;
pub mod repo;
pub mod sandbox;
pub mod tmux;
pub mod workspace;

/// Runs the real binary with `args` in workspace `ws`, with a clean
/// environment whose home and data folder are under `home` (nothing of
/// the machine's user is read), stdin closed.
pub fn run_waypoint(
    home: &std::path::Path,
    ws: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    waypoint_command(home, ws, args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The command [`run_waypoint`] runs, for a test that talks to it while
/// it runs (its stdin and stdout are the test's to set).
pub fn waypoint_command(
    home: &std::path::Path,
    ws: &std::path::Path,
    args: &[&str],
) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"));
    command
        .args(args)
        .arg("--workspace")
        .arg(ws)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("WAYPOINT_HOME", home.join(".waypoint"));
    command
}

/// The JSON lines of a run's stdout (`--output-format jsonl`).
pub fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

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

/// The text of the one session transcript under `home` (a test's
/// `WAYPOINT_HOME` is `home/.waypoint`).
pub fn transcript_text(home: &std::path::Path) -> String {
    let dir = home.join(".waypoint/sessions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    std::fs::read_to_string(file).unwrap()
}

/// A `release` skill in `ws` whose plan has two items (Bump the version,
/// Tag it).
pub fn release_skill(ws: &std::path::Path) {
    let skill = ws.join(".agents/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: Cut a release.\n---\nCut the release.\n\n## Plan\n- [ ] Bump the version\n- [ ] Tag it\n",
    )
    .unwrap();
}

/// Runs the binary on the scripted `turns` (written to `home/NAME.json`)
/// with `args`, its events as JSON lines.
pub fn run_scripted(
    home: &std::path::Path,
    ws: &std::path::Path,
    name: &str,
    turns: serde_json::Value,
    args: &[&str],
) -> std::process::Output {
    let script = home.join(format!("{name}.json"));
    std::fs::write(&script, serde_json::json!({ "turns": turns }).to_string()).unwrap();
    let mut all = args.to_vec();
    all.extend(["--output-format", "jsonl", "--scenario"]);
    all.push(script.to_str().unwrap());
    run_waypoint(home, ws, &all)
}
