//! The real `waypoint` binary in a private tmux server (`tmux -L`, killed
//! on drop, so the user's server is never touched): start it with
//! arguments and environment, type, read the screen, quit, find its pid.
//! Needs `tmux` on the PATH (the CI script installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(20);
pub const POLL: Duration = Duration::from_millis(50);

/// A tmux server of our own (`tmux -L <socket>`), killed on drop even when
/// the test fails, so the user's server is never touched.
pub struct Tmux {
    pub socket: String,
    /// Where the shell in the pane writes the app's exit status.
    pub exit_file: PathBuf,
}

impl Tmux {
    /// Starts a detached session `w` of the given size running the app with
    /// `args`; its log and exit status go to `dir`.
    pub fn start(width: u16, height: u16, dir: &Path, args: &[&Path]) -> Self {
        Self::start_with_env(width, height, dir, &[], args)
    }

    /// The app in yolo mode playing `tests/fixtures/SCENARIO` in the
    /// workspace `ws`.
    pub fn scenario(width: u16, height: u16, dir: &Path, scenario: &str, ws: &Path) -> Self {
        let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(scenario);
        let args = [
            Path::new("--scenario"),
            &scenario,
            Path::new("--workspace"),
            ws,
        ];
        Self::start_with_env(width, height, dir, &[("WAYPOINT_APPROVAL", "yolo")], &args)
    }

    /// Like `start`, with extra `NAME=value` pairs in the app's environment.
    pub fn start_with_env(
        width: u16,
        height: u16,
        dir: &Path,
        env: &[(&str, &str)],
        args: &[&Path],
    ) -> Self {
        require_tmux();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let tmux = Self {
            socket: format!(
                "waypoint-e2e-{}-{}-{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            ),
            exit_file: dir.join("exit-status"),
        };
        let command = app_command(&dir.join("waypoint.log"), env, args, &tmux.exit_file);
        // The pane is kept when the app exits, so its exit can be observed.
        tmux.ok(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-s",
            "w",
            &command,
            ";",
            "set-option",
            "-t",
            "w",
            "remain-on-exit",
            "on",
        ]);
        tmux
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-f", "/dev/null", "-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux runs")
    }

    /// Runs a tmux command that must succeed; returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.ok(&["capture-pane", "-p", "-t", "w"])
    }

    pub fn pane_var(&self, var: &str) -> String {
        self.ok(&["display-message", "-p", "-t", "w", var])
            .trim()
            .to_string()
    }

    pub fn type_text(&self, text: &str) {
        self.ok(&["send-keys", "-t", "w", "-l", text]);
    }

    pub fn key(&self, key: &str) {
        self.ok(&["send-keys", "-t", "w", key]);
    }

    /// Polls the screen until `pred` holds; on timeout panics with the last screen.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > TIMEOUT {
                panic!(
                    "timed out after {TIMEOUT:?} waiting for {what}; last screen:\n{screen}\n--- end of screen ---"
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// The screen once `pred` holds, or as it is after `patience` (for a
    /// change that may not show).
    pub fn screen_within(&self, patience: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) || start.elapsed() >= patience {
                return screen;
            }
            std::thread::sleep(POLL);
        }
    }

    /// The app's exit status once it ended (after `what`), as the pane's
    /// shell wrote it.
    pub fn exit_status(&self, what: &str) -> String {
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.exit_file)
                && s.ends_with('\n')
            {
                return s.trim().to_string();
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "the app did not exit after {what}; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(POLL);
        }
    }

    /// Quits with Ctrl+C twice and waits until the app exited cleanly and
    /// left the alternate screen. `hint`: the status line is wide enough to
    /// show "Ctrl+C again to quit" after the first press.
    pub fn quit_and_wait(&self, hint: bool) {
        // While a turn runs the first Ctrl+C interrupts it; then two quit.
        let interrupted_before = self.screen().contains("Interrupted");
        self.key("C-c");
        // Either the turn is interrupted or the quit is armed; on a narrow
        // status line an armed quit shows nothing, hence the short patience.
        let screen = self.screen_within(Duration::from_millis(300), |s| {
            s.contains("Ctrl+C again to quit") || (!interrupted_before && s.contains("Interrupted"))
        });
        if !interrupted_before
            && screen.contains("Interrupted")
            && !screen.contains("Ctrl+C again to quit")
        {
            self.key("C-c");
        }
        if hint {
            self.wait_for("the quit hint", |s| s.contains("Ctrl+C again to quit"));
        }
        self.key("C-c");
        // tmux's own #{pane_dead_status} is sometimes never filled in
        // (tmux 3.3a), so the pane's shell writes the status to a file.
        let start = Instant::now();
        let status = self.exit_status("Ctrl+C twice");
        assert_eq!(status, "0", "exit status; screen:\n{}", self.screen());
        while self.pane_var("#{pane_dead}") != "1" {
            assert!(
                start.elapsed() < TIMEOUT,
                "the pane's shell did not exit; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(POLL);
        }
        assert_eq!(
            self.pane_var("#{alternate_on}"),
            "0",
            "the app left the alternate screen on; screen:\n{}",
            self.screen()
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // kill-server leaves the socket file behind; remove it too.
        let socket = self
            .run(&["display-message", "-p", "#{socket_path}"])
            .stdout;
        let _ = self.run(&["kill-server"]);
        let socket = String::from_utf8_lossy(&socket);
        if socket.trim().contains(&self.socket) {
            let _ = std::fs::remove_file(socket.trim());
        }
    }
}

pub fn require_tmux() {
    match Command::new("tmux").arg("-V").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`tmux -V` failed ({}): these tests need a working tmux; install it (e.g. `apt-get install tmux`)",
            out.status
        ),
        Err(e) => panic!(
            "these tests need tmux on the PATH and it cannot be run ({e}); install it (e.g. `apt-get install tmux`)"
        ),
    }
}

/// Single-quotes `s` for `sh`.
pub fn sh_quote(s: &Path) -> String {
    format!("'{}'", s.display().to_string().replace('\'', r"'\''"))
}

/// `env WAYPOINT_LOG=… NO_COLOR=1 ENV… waypoint ARGS; echo $? > EXIT_FILE`
pub fn app_command(log: &Path, env: &[(&str, &str)], args: &[&Path], exit_file: &Path) -> String {
    // The app sees only the settings a test gives it.
    let mut cmd = format!(
        "env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u ANTHROPIC_BASE_URL -u OPENAI_BASE_URL \
         -u ANTHROPIC_MODEL -u OPENAI_MODEL -u WAYPOINT_PROVIDER -u WAYPOINT_MODEL -u WAYPOINT_PROFILE \
         -u WAYPOINT_CONFIG WAYPOINT_LOG={} WAYPOINT_HOME={} NO_COLOR=1",
        sh_quote(log),
        sh_quote(&log.with_file_name("home"))
    );
    for (name, value) in env {
        cmd.push_str(&format!(" {name}={}", sh_quote(Path::new(value))));
    }
    cmd.push(' ');
    cmd.push_str(&sh_quote(Path::new(env!("CARGO_BIN_EXE_waypoint"))));
    for a in args {
        cmd.push(' ');
        cmd.push_str(&sh_quote(a));
    }
    cmd.push_str("; echo $? > ");
    cmd.push_str(&sh_quote(exit_file));
    cmd
}

/// The pid of the app: the child of the pane's shell.
pub fn app_pid(tmux: &Tmux) -> i32 {
    let shell: i32 = tmux.pane_var("#{pane_pid}").parse().unwrap();
    let start = Instant::now();
    loop {
        let child = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .find(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| {
                        let (_, rest) = s.rsplit_once(')')?;
                        rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                    })
                    == Some(shell)
            });
        if let Some(pid) = child {
            return pid;
        }
        assert!(start.elapsed() < TIMEOUT, "the app's process was not found");
        std::thread::sleep(POLL);
    }
}
