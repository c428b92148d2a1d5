//! The full-screen app whose terminal goes away without a SIGHUP (its
//! terminal is a pseudo-terminal that is not its controlling one, so the
//! kernel sends no signal when the other end closes): it must see the
//! hang-up on its input and end, not spin. crossterm's reader loops forever
//! on a dead tty (crossterm #793), which left the app at 100% CPU with its
//! loop stuck; the app now reads the terminal on its own thread behind its
//! own `poll`. Linux only (openpty, `/proc`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the app's output stays quiet before it counts as idle.
const QUIET: Duration = Duration::from_millis(400);

fn openpty(cols: u16, rows: u16) -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: valid out-pointers and a valid winsize; no name buffer.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Not inherited by the app: it must hold only its own end.
    for fd in [master, slave] {
        // SAFETY: fcntl on fds we own.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both fds were just made by openpty and are ours alone.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

/// CPU ticks (user + system) the process `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime: the 14th and 15th fields (the 12th and 13th after the name).
    fields
        .get(11)
        .and_then(|u| u.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
}

#[test]
fn the_app_ends_when_its_terminal_goes_away_without_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.json");
    std::fs::write(&scenario, r#"{"turns": [{"text": "Hi."}]}"#).unwrap();
    let (mut master, slave) = openpty(120, 40);
    let mut child = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["--scenario"])
        .arg(&scenario)
        .arg("--workspace")
        .arg(dir.path())
        .env("WAYPOINT_HOME", dir.path().join("home"))
        .env("WAYPOINT_LOG", dir.path().join("waypoint.log"))
        .env("TERM", "xterm-256color")
        .env_remove("WAYPOINT_CONFIG")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(slave);
    // Read the screen until the first frame, answering the terminal query
    // (primary device attributes) as a terminal does.
    let (mut seen, mut buf, mut answered) = (Vec::new(), [0u8; 8192], false);
    let began = Instant::now();
    while !seen.windows(14).any(|w| w == b" Conversation ") {
        assert!(began.elapsed() < Duration::from_secs(20), "no first frame");
        let n = master.read(&mut buf).unwrap();
        seen.extend_from_slice(&buf[..n]);
        if !answered && seen.windows(3).any(|w| w == b"\x1b[c") {
            master.write_all(b"\x1b[?62;22c").unwrap();
            answered = true;
        }
    }
    // Idle: everything drawn (the engine's first events too), the app
    // waits for input: its output has been quiet for a while.
    let settle = Instant::now();
    let mut quiet = Instant::now();
    // SAFETY: fcntl on the master fd we own.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::fcntl(master.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK)
    };
    while quiet.elapsed() < QUIET {
        assert!(
            settle.elapsed() < Duration::from_secs(20),
            "the app never rests"
        );
        match master.read(&mut buf) {
            Ok(n) if n > 0 => quiet = Instant::now(),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    // The other end goes away: no signal reaches the app (this terminal is
    // not its controlling one).
    drop(master);
    let gone = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if gone.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let Some(status) = status else {
        let ticks = cpu_ticks(child.id());
        let _ = child.kill();
        panic!("the app still runs 10 s after its terminal went away ({ticks} CPU ticks)");
    };
    // Ended as by SIGHUP: 128 + 1.
    assert_eq!(status.code(), Some(129), "{status:?}");
}
