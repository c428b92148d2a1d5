//! The sandboxed command's own world, as an attacker meets it through the
//! real binary (headless, auto mode, a scripted model): the user's tmux
//! server by `-S` and by its default socket, an agent socket named by
//! `SSH_AUTH_SOCK`, the user's terminals in `/dev/pts`, root's
//! capabilities, and the API key in other processes' `/proc/PID/environ`.
//! Each escape is tried for real and must not happen. Linux with Landlock
//! and user namespaces (`support::sandbox` says when it was skipped, and
//! fails instead under `.ci/run`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const SECRET: &str = "sk-ant-api03-WORLD-TEST-SECRET";

/// A folder outside `/tmp` (which the sandbox hides): under the target
/// folder, unless that is in `/tmp` too (a checkout there), then `/var`.
fn outside_tmp() -> tempfile::TempDir {
    support::sandbox::outside_hidden("wp-world-")
}

/// Runs `waypoint -p` with `env` on a scenario whose one turn makes these
/// bash calls; each call's output.
fn run(ws: &Path, home: &Path, env: &[(&str, String)], commands: &[String]) -> Vec<String> {
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": "bash", "input": {"command": c}}))
        .collect();
    let scenario = home.join("scenario.json");
    let turns = json!({"turns": [{"text": "Trying.", "tool_calls": calls}, {"text": "Done."}]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(ws)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("WAYPOINT_HOME", home.join(".waypoint"))
        .env("WAYPOINT_APPROVAL", "auto")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_call_end")
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A tmux server of the test's own, on `socket` (or the default socket
/// under `TMUX_TMPDIR` = `tmpdir`), killed when dropped.
struct TmuxServer {
    args: Vec<String>,
    tmpdir: PathBuf,
}

impl TmuxServer {
    fn start(socket: Option<&Path>, tmpdir: &Path) -> Self {
        let args: Vec<String> = match socket {
            Some(s) => vec!["-S".into(), s.display().to_string()],
            None => Vec::new(),
        };
        let ok = Command::new("tmux")
            .args(&args)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "victim"])
            .env("TMUX_TMPDIR", tmpdir)
            .env_remove("TMUX")
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux started");
        Self {
            args,
            tmpdir: tmpdir.to_path_buf(),
        }
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(&self.args)
            .arg("kill-server")
            .env("TMUX_TMPDIR", &self.tmpdir)
            .status();
    }
}

#[test]
fn a_sandboxed_command_reaches_no_socket_terminal_process_or_capability_of_the_user() {
    if !support::sandbox::world("the sandbox world escapes") {
        return;
    }
    support::tmux::require_tmux();
    let ws = tempfile::tempdir().unwrap();
    let home = outside_tmp();
    let marks = outside_tmp();
    // A tmux server on a socket in /tmp (hidden by the private /tmp), one
    // on the default socket of a TMUX_TMPDIR in /tmp, and one on a socket
    // outside /tmp named by $TMUX (masked).
    let in_tmp = tempfile::tempdir().unwrap();
    let tmp_socket = in_tmp.path().join("user.sock");
    let _by_path = TmuxServer::start(Some(&tmp_socket), in_tmp.path());
    let _by_default = TmuxServer::start(None, in_tmp.path());
    let named_socket = home.path().join("tmux.sock");
    let _by_var = TmuxServer::start(Some(&named_socket), in_tmp.path());
    // An agent's socket outside /tmp, named by SSH_AUTH_SOCK.
    let agent_path = home.path().join("agent.sock");
    let agent = UnixListener::bind(&agent_path).unwrap();
    agent.set_nonblocking(true).unwrap();
    let mark = |name: &str| marks.path().join(name);
    let env = [
        ("ANTHROPIC_API_KEY", SECRET.to_string()),
        ("TMUX_TMPDIR", in_tmp.path().display().to_string()),
        ("TMUX", format!("{},1,0", named_socket.display())),
        ("SSH_AUTH_SOCK", agent_path.display().to_string()),
    ];
    let commands = [
        format!(
            "tmux -S {} new-window 'touch {}'; echo by_path=$?",
            tmp_socket.display(),
            mark("by_path").display()
        ),
        format!(
            "TMUX_TMPDIR={} tmux new-window 'touch {}'; echo by_default=$?",
            in_tmp.path().display(),
            mark("by_default").display()
        ),
        format!(
            "echo \"TMUX=[$TMUX] SSH_AUTH_SOCK=[$SSH_AUTH_SOCK]\"; \
             tmux -S {} new-window 'touch {}'; echo by_var=$?",
            named_socket.display(),
            mark("by_var").display()
        ),
        format!(
            "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
             s.sendall(b\"\\0\\0\\0\\1\\x0b\"); print(\"agent reached\")' {}; echo agent=$?",
            agent_path.display()
        ),
        "ls /dev/pts 2>&1; for t in /dev/pts/* /dev/tty /dev/tty0 /dev/console; do \
         timeout 1 cat \"$t\" >/dev/null 2>&1 && echo \"read $t\"; done; echo ttys=done"
            .to_string(),
        "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status".to_string(),
        format!(
            "n=0; for f in /proc/[0-9]*/environ; do grep -qa {SECRET} \"$f\" 2>/dev/null && n=$((n+1)); \
             done; echo \"environs with the key: $n of $(ls -d /proc/[0-9]* | wc -l)\""
        ),
    ];
    let out = run(ws.path(), home.path(), &env, &commands);
    assert_eq!(out.len(), commands.len(), "{out:#?}");
    std::thread::sleep(Duration::from_millis(300));
    for name in ["by_path", "by_default", "by_var"] {
        assert!(
            !mark(name).exists(),
            "tmux ran a window outside the sandbox ({name}): {out:#?}"
        );
    }
    assert!(out[0].contains("by_path=1"), "{}", out[0]);
    assert!(out[1].contains("by_default=1"), "{}", out[1]);
    assert!(
        out[2].contains("TMUX=[] SSH_AUTH_SOCK=[]"),
        "the socket variables reached the command: {}",
        out[2]
    );
    assert!(out[2].contains("by_var=1"), "{}", out[2]);
    assert!(
        agent.accept().is_err(),
        "the agent's socket was reached: {}",
        out[3]
    );
    assert!(!out[3].contains("agent reached"), "{}", out[3]);
    assert!(
        out[4].contains("ttys=done") && !out[4].contains("read /dev"),
        "{}",
        out[4]
    );
    for set in ["CapEff", "CapPrm", "CapBnd", "CapAmb"] {
        assert!(
            out[5].contains(&format!("{set}:\t0000000000000000")),
            "{set}: {}",
            out[5]
        );
    }
    assert!(out[6].contains("environs with the key: 0 of"), "{}", out[6]);
}

#[test]
fn root_loses_every_capability_inside() {
    if !support::sandbox::world("the capability test")
        || !support::sandbox::root("the capability test")
    {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let home = outside_tmp();
    let out = run(
        ws.path(),
        home.path(),
        &[],
        &[format!(
            "id -u; grep CapEff /proc/self/status; ip link add wp0 type dummy 2>&1; echo ip=$?; \
             mount -t tmpfs x /mnt 2>&1; echo mount=$?; \
             python3 -c 'import ctypes; print(\"bpf\", ctypes.CDLL(None).syscall({}, 0, 0, 0))'",
            libc::SYS_bpf
        )],
    );
    assert!(out[0].starts_with("0\n"), "still root inside: {}", out[0]);
    assert!(out[0].contains("CapEff:\t0000000000000000"), "{}", out[0]);
    assert!(!out[0].contains("ip=0"), "{}", out[0]);
    assert!(!out[0].contains("mount=0"), "{}", out[0]);
    assert!(out[0].contains("bpf -1"), "{}", out[0]);
}
