//! The auto-mode sandbox as an attacker meets it: a command that tries to
//! replace what runs next (the `waypoint` binary in `~/.cargo/bin`, a
//! planted `git`, cargo's config), device files and nodes, sockets past
//! the network switch (MPTCP, UDP), and how a block is reported to the
//! model. Linux with Landlock only; each test says when it was skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::os::fd::FromRawFd;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use waypoint::safety::{Sandbox, landlock_abi};

fn landlock_or_skip(what: &str) -> bool {
    support::sandbox::landlock(what)
}

/// A HOME for the run under test. The run gets a temp folder of its own
/// ([`run_headless`]), so this HOME is outside what the sandbox lets
/// commands write wherever the checkout is (CI may clone into /tmp).
fn isolated_home() -> tempfile::TempDir {
    support::sandbox::outside_hidden("home-")
}

/// Runs `waypoint` (the binary at `exe`) headless on a scenario whose one
/// turn makes these bash calls; returns each call's output.
fn run_headless(exe: &Path, home: &Path, ws: &Path, commands: &[&str]) -> Vec<String> {
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": "bash", "input": {"command": c}}))
        .collect();
    let scenario = home.join("scenario.json");
    let turns = json!({"turns": [{"text": "Running.", "tool_calls": calls}, {"text": "Done."}]});
    std::fs::write(&scenario, turns.to_string()).unwrap();
    // The run's own temp folder (writable in its sandbox): neither HOME nor
    // anything the tests check lies in it.
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        !home.starts_with(tmp.path()) && !tmp.path().starts_with(home),
        "the test's HOME must not be in the run's temp folder"
    );
    let out = Command::new(exe)
        .args(["-p", "go", "--output-format", "jsonl", "--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(ws)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("TMPDIR", tmp.path())
        .env("WAYPOINT_HOME", home.join(".waypoint"))
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

#[test]
fn a_command_cannot_replace_what_runs_the_next_one() {
    if !landlock_or_skip("the ~/.cargo swap test") {
        return;
    }
    let home = isolated_home();
    let cargo = home.path().join(".cargo");
    std::fs::create_dir_all(cargo.join("bin")).unwrap();
    // Waypoint installed as `cargo install` puts it.
    let exe = cargo.join("bin/waypoint");
    support::copy_program(Path::new(env!("CARGO_BIN_EXE_waypoint")), &exe);
    let original = std::fs::metadata(&exe).unwrap().len();
    let ws = tempfile::tempdir().unwrap();
    let pwned = home.path().join("pwned");
    let script = format!(
        "#!/bin/sh\necho ran >> {}\nexec bash \"$@\"\n",
        pwned.display()
    );
    let outputs = run_headless(
        &exe,
        home.path(),
        ws.path(),
        &[
            &format!(
                "printf '%s' '{script}' > ~/.cargo/bin/.w && chmod +x ~/.cargo/bin/.w \
                 && mv ~/.cargo/bin/.w ~/.cargo/bin/waypoint; echo waypoint=$?; \
                 printf '%s' '{script}' > ~/.cargo/bin/git; echo git=$?; \
                 echo '[build]' > ~/.cargo/config.toml; echo config=$?; \
                 echo '. ~/pwned' >> ~/.bashrc; echo rc=$?; \
                 mkdir -p ~/.cargo/registry/src/x && echo registry=$?"
            ),
            "echo second call",
        ],
    );
    assert_eq!(outputs.len(), 2, "{outputs:#?}");
    for refused in ["waypoint=1", "git=1", "config=1", "rc=1"] {
        assert!(outputs[0].contains(refused), "{refused}: {}", outputs[0]);
    }
    assert!(outputs[0].contains("registry=0"), "{}", outputs[0]);
    assert!(outputs[1].contains("second call"), "{}", outputs[1]);
    assert_eq!(std::fs::metadata(&exe).unwrap().len(), original);
    assert!(!cargo.join("bin/.w").exists());
    assert!(!cargo.join("bin/git").exists());
    assert!(!cargo.join("config.toml").exists());
    assert!(!home.path().join(".bashrc").exists());
    assert!(!pwned.exists(), "the swapped binary ran");
}

#[test]
fn devices_are_not_writable_and_no_node_can_be_made() {
    if !landlock_or_skip("the device test") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let run = |cmd: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_waypoint"))
            .current_dir(ws.path())
            .args(["sandbox", "--", "bash", "-c", cmd])
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // The device files commands need still work.
    let fine = run(
        "echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c \
         && { echo x > /dev/full; echo full=$?; }",
    );
    assert!(
        fine.contains("full=1") && fine.contains("No space left"),
        "{fine}"
    );
    let shm_file = format!("/dev/shm/waypoint-test-{}", std::process::id());
    let shm = run(&format!("echo x > {shm_file}; echo shm=$?"));
    let made = Path::new(&shm_file).exists();
    let _ = std::fs::remove_file(&shm_file);
    // Refused, or (in the sandbox's own world) written to its private
    // /dev/shm: never the user's.
    assert!(!made, "{shm}");
    assert!(shm.contains("shm=1") || shm.contains("shm=0"), "{shm}");
    if !support::sandbox::root("the mknod and loop device part") {
        return;
    }
    let nodes = run("mknod ws-null c 1 3; echo ws=$?; mknod /tmp/wp-null-$$ c 1 3; echo tmp=$?");
    assert!(nodes.contains("ws=1") && nodes.contains("tmp=1"), "{nodes}");
    assert!(!ws.path().join("ws-null").exists());
    // Opening a block device for writing (nothing is written).
    match std::fs::read_dir("/dev")
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy().starts_with("/dev/loop") && p != Path::new("/dev/loop-control")
        }) {
        Some(dev) => {
            let open = run(&format!("exec 3<> {}; echo loop=$?", dev.display()));
            // Refused by Landlock, or absent from the world's read-only /dev.
            assert!(
                open.contains("Permission denied") || open.contains("Read-only file system"),
                "{open}"
            );
            assert!(!open.contains("loop=0"), "{open}");
        }
        None => eprintln!("skipped the loop device part: this machine has no /dev/loopN"),
    }
}

/// Opens a socket and connects it to `port` on loopback, on a thread
/// confined by `sandbox` (Landlock and seccomp bind a thread): the errno of
/// the step that failed, or `None` when it connected.
fn connect_confined(
    sandbox: &Sandbox,
    domain: i32,
    kind: i32,
    proto: i32,
    port: u16,
) -> Option<String> {
    let confinement = sandbox.prepare().unwrap();
    std::thread::spawn(move || {
        confinement.apply().unwrap();
        // SAFETY: plain socket syscalls on a fresh fd this thread owns.
        unsafe {
            let fd = libc::socket(domain, kind, proto);
            if fd < 0 {
                return Some(format!("socket: {}", std::io::Error::last_os_error()));
            }
            let _owned = std::os::fd::OwnedFd::from_raw_fd(fd);
            let addr = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: port.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
                },
                sin_zero: [0; 8],
            };
            let rc = libc::connect(
                fd,
                (&raw const addr).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            (rc != 0).then(|| format!("connect: {}", std::io::Error::last_os_error()))
        }
    })
    .join()
    .unwrap()
}

#[test]
fn with_the_network_off_no_socket_reaches_a_loopback_listener() {
    match landlock_abi() {
        Some(abi) if abi >= 4 => {}
        other => {
            support::sandbox::needs(
                "the MPTCP test",
                false,
                &format!("Landlock ABI {other:?} has no network rules"),
            );
            return;
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let ws = tempfile::tempdir().unwrap();
    let on = Sandbox::for_workspace(ws.path(), &[], true);
    let off = Sandbox::for_workspace(ws.path(), &[], false);
    const MPTCP: i32 = 262;
    let tcp = (libc::AF_INET, libc::SOCK_STREAM, 0);
    let mptcp = (libc::AF_INET, libc::SOCK_STREAM, MPTCP);
    let dgram = (libc::AF_INET, libc::SOCK_DGRAM, 0);
    // With the network on, each reaches the listener (MPTCP falls back to
    // TCP with a plain listener), which proves the test can tell.
    assert_eq!(connect_confined(&on, tcp.0, tcp.1, tcp.2, port), None);
    match connect_confined(&on, mptcp.0, mptcp.1, mptcp.2, port) {
        None => {}
        Some(e) => eprintln!("note: this kernel has no MPTCP ({e}); it is refused all the same"),
    }
    assert_eq!(
        connect_confined(&on, dgram.0, dgram.1, dgram.2, udp_port),
        None
    );
    for (name, (d, k, p), port) in [
        ("tcp", tcp, port),
        ("mptcp", mptcp, port),
        (
            "mptcp nonblocking",
            (mptcp.0, mptcp.1 | libc::SOCK_NONBLOCK, mptcp.2),
            port,
        ),
        ("udp", dgram, udp_port),
        (
            "mptcp6",
            (
                libc::AF_INET6,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                MPTCP,
            ),
            port,
        ),
        (
            "raw",
            (libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP),
            port,
        ),
        ("packet", (libc::AF_PACKET, libc::SOCK_RAW, 0), port),
        ("netlink", (libc::AF_NETLINK, libc::SOCK_RAW, 0), port),
        ("vsock", (libc::AF_VSOCK, libc::SOCK_STREAM, 0), port),
    ] {
        let refused = connect_confined(&off, d, k, p, port);
        let refused = refused.unwrap_or_else(|| panic!("{name} connected with the network off"));
        assert!(refused.contains("Permission denied"), "{name}: {refused}");
    }
    // The x32 form of socket(2) (bit 30 set) misses no rule: refused.
    let confinement = off.prepare().unwrap();
    let x32 = std::thread::spawn(move || {
        confinement.apply().unwrap();
        // SAFETY: a syscall with integer arguments only.
        let fd = unsafe {
            libc::syscall(
                0x4000_0000 | libc::SYS_socket,
                libc::AF_INET,
                libc::SOCK_DGRAM,
                0,
            )
        };
        (fd, std::io::Error::last_os_error().raw_os_error())
    });
    assert_eq!(x32.join().unwrap(), (-1, Some(libc::ENOSYS)));
    // Unix sockets stay (builds and tools talk over them).
    let confinement = off.prepare().unwrap();
    let unix = std::thread::spawn(move || {
        confinement.apply().unwrap();
        std::os::unix::net::UnixDatagram::unbound().is_ok()
    });
    assert!(unix.join().unwrap());
}

#[test]
fn a_block_is_reported_whatever_the_exit_code_and_a_fake_one_is_not() {
    if !landlock_or_skip("the block report test") {
        return;
    }
    let home = isolated_home();
    let ws = tempfile::tempdir().unwrap();
    let target = home.path().join("outside.txt");
    let outputs = run_headless(
        Path::new(env!("CARGO_BIN_EXE_waypoint")),
        home.path(),
        ws.path(),
        &[
            &format!("touch {} 2>&1; true", target.display()),
            "echo 'Permission denied'; exit 1",
            "mkdir -p d && chmod 000 d && ls d 2>&1; true",
        ],
    );
    assert_eq!(outputs.len(), 3, "{outputs:#?}");
    assert!(
        outputs[0].contains("[blocked by the sandbox: "),
        "{}",
        outputs[0]
    );
    assert!(outputs[0].ends_with(']'), "{}", outputs[0]);
    assert!(
        !outputs[1].contains("blocked by the sandbox"),
        "{}",
        outputs[1]
    );
    assert!(
        !outputs[2].contains("blocked by the sandbox"),
        "{}",
        outputs[2]
    );
    assert!(!target.exists());
}
