//! What a call costs through an MCP server against a built-in tool: the
//! published `server-everything`'s `echo` (a JSON-RPC round trip over its
//! pipes, through the SDK) and `read_file` of a small file, each called
//! sequentially, wall time per call (median of 500, after 50 to warm up),
//! and Waypoint's own CPU per call (this process's, the server's apart).
//! Also how long the server takes to start and list its tools, and the
//! real binary's first frame (from exec to the screen's first bytes of the
//! conversation pane, in a pseudo-terminal made by `script`) with no MCP
//! server and with three configured: the servers start in the background,
//! so the first frame must not move.
//!
//! `WAYPOINT_TEST_MCP_BIN=…/node_modules/.bin cargo bench --bench mcp`
//! (`.ci/run` installs the server into `~/.cache/waypoint-ci`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use waypoint::mcp::{McpServerConfig, McpTool, start};
use waypoint::todo::SharedPlan;
use waypoint::tools::{
    Tool, ToolConfig, ToolCtx, ToolEnv, ToolHost, Workspace, run_workspace_tool,
};

const CALLS: usize = 500;
const WARM: usize = 50;

fn cpu_ns() -> u64 {
    // SAFETY: an all-zero timespec is valid to be overwritten.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times from spawning the binary (in a 120x40 pseudo-terminal) to the
/// first frame's conversation pane on its screen, with the config file
/// `config`.
fn first_frame(config: &std::path::Path, dir: &std::path::Path) -> Duration {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let scenario = dir.join("scenario.json");
    std::fs::write(&scenario, r#"{"turns": [{"text": "Hi."}]}"#).unwrap();
    let command = format!(
        "stty cols 120 rows 40; exec env WAYPOINT_CONFIG='{}' WAYPOINT_HOME='{}' '{}' --scenario '{}' --workspace '{}'",
        config.display(),
        dir.join("home").display(),
        env!("CARGO_BIN_EXE_waypoint"),
        scenario.display(),
        dir.display()
    );
    let began = Instant::now();
    let mut child = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("script runs");
    let mut out = child.stdout.take().unwrap();
    let mut input = child.stdin.take().unwrap();
    let (mut seen, mut buf) = (Vec::new(), [0u8; 8192]);
    let needle = b" Conversation ";
    let mut answered = false;
    let took = loop {
        let n = out.read(&mut buf).unwrap_or(0);
        assert!(n > 0, "the app ended before its first frame");
        seen.extend_from_slice(&buf[..n]);
        // The app asks the terminal what it is (primary device
        // attributes) and waits for the answer: answer as a terminal does.
        if !answered && seen.windows(3).any(|w| w == b"\x1b[c") {
            use std::io::Write;
            input.write_all(b"\x1b[?62;22c").unwrap();
            answered = true;
        }
        if seen.windows(needle.len()).any(|w| w == needle) {
            break began.elapsed();
        }
    };
    // The pseudo-terminal closes: the app gets SIGHUP and stops its servers.
    // SAFETY: kill(2) on the group `script` leads (process_group(0)).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(300));
    took
}

/// First frames with no server and with three, alternating, 15 of each.
fn first_frames(program: &std::path::Path) {
    if std::process::Command::new("script")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("mcp bench: first frame SKIPPED (no `script` on the PATH)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none.toml");
    std::fs::write(&none, "").unwrap();
    let three = dir.path().join("three.toml");
    let mut text = String::new();
    for name in ["a", "b", "c"] {
        text.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = {:?}\n",
            program.to_string_lossy()
        ));
    }
    std::fs::write(&three, text).unwrap();
    let (mut bare, mut with) = (Vec::new(), Vec::new());
    for i in 0..32 {
        let (b, w) = (
            first_frame(&none, dir.path()),
            first_frame(&three, dir.path()),
        );
        // The first two of each warm the page cache.
        if i >= 2 {
            bare.push(b);
            with.push(w);
        }
    }
    let (bare, with) = (median(bare), median(with));
    println!(
        "mcp: first frame of the real binary: {:.1} ms with no MCP server, {:.1} ms with three configured (median of 30 each, alternating; {:.2}x)",
        bare.as_secs_f64() * 1e3,
        with.as_secs_f64() * 1e3,
        with.as_secs_f64() / bare.as_secs_f64()
    );
}

fn main() {
    let Some(program) = std::env::var_os("WAYPOINT_TEST_MCP_BIN")
        .map(|d| PathBuf::from(d).join("mcp-server-everything"))
        .filter(|p| p.is_file())
    else {
        eprintln!(
            "mcp bench: SKIPPED (set WAYPOINT_TEST_MCP_BIN to the node_modules/.bin holding mcp-server-everything)"
        );
        return;
    };
    first_frames(&program);
    if std::env::args().any(|a| a == "--first-frame") {
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "hello\n".repeat(20)).unwrap();
    rt.block_on(async {
        let config = McpServerConfig {
            command: Some(program.to_string_lossy().into_owned()),
            ..McpServerConfig::default()
        };
        let mut starts = Vec::new();
        let mut running = None;
        for _ in 0..5 {
            let t = Instant::now();
            let r = start("everything", &config, dir.path()).await.unwrap();
            starts.push(t.elapsed());
            running = Some(r);
        }
        let running = running.unwrap();
        let def = running.tools.iter().find(|t| t.name == "echo").unwrap().clone();
        let echo = McpTool::new("everything", def, running.peer().unwrap(), Duration::from_secs(30));
        let workspace = Workspace::new(dir.path()).unwrap();
        let tool_config = ToolConfig::default();
        let plan = SharedPlan::default();
        let cancel = CancellationToken::new();
        let env = ToolEnv::new(&workspace, &tool_config, &cancel);
        let input = json!({"message": "hello"});
        let (mut mcp, mut mcp_cpu) = (Vec::new(), 0u64);
        for i in 0..WARM + CALLS {
            let (t, c) = (Instant::now(), cpu_ns());
            let ctx = ToolCtx {
                env,
                plan: &plan,
                host: ToolHost::detached(),
            };
            let out = echo.run(&input, ctx).await;
            if i >= WARM {
                mcp.push(t.elapsed());
                mcp_cpu += cpu_ns() - c;
            }
            assert!(out.content.contains("hello"));
        }
        let read = json!({"path": "small.txt"});
        let (mut builtin, mut builtin_cpu) = (Vec::new(), 0u64);
        for i in 0..WARM + CALLS {
            let (t, c) = (Instant::now(), cpu_ns());
            let out = run_workspace_tool("read_file", &read, &env).await;
            if i >= WARM {
                builtin.push(t.elapsed());
                builtin_cpu += cpu_ns() - c;
            }
            assert!(out.content.contains("hello"));
        }
        println!(
            "mcp: server-everything started and listed its tools in {:.0} ms (median of 5)",
            median(starts).as_secs_f64() * 1e3
        );
        println!(
            "mcp: echo through the server: {:.1} µs per call (median of {CALLS}), Waypoint's own CPU {:.1} µs per call",
            median(mcp).as_secs_f64() * 1e6,
            mcp_cpu as f64 / CALLS as f64 / 1e3
        );
        println!(
            "mcp: built-in read_file: {:.1} µs per call (median of {CALLS}), CPU {:.1} µs per call",
            median(builtin).as_secs_f64() * 1e6,
            builtin_cpu as f64 / CALLS as f64 / 1e3
        );
    });
}
