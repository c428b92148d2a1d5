//! Terminal input, read on a thread of its own and guarded by its own
//! `poll(2)`. crossterm's reader loops forever once the terminal is gone
//! (the tty stays readable and `read` returns 0 or EIO: crossterm issues
//! #793 and #1110), which spun a core at 100% and left its caller stuck, so
//! the app never saw the SIGHUP that should end it. Here crossterm is asked
//! for events only when the tty has bytes and has not hung up; a hang-up
//! ends the stream. Invariants: this thread never reads while it is paused
//! (an editor has the terminal) and says so before `pause` returns; it
//! sleeps in `poll` with no timeout while nothing happens (no wakeups when
//! idle); a window resize is not seen here (the app takes SIGWINCH itself).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::mpsc;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

enum Control {
    /// Stop reading until `Resume`; the sender hears when it stopped.
    Pause(mpsc::Sender<()>),
    Resume,
}

/// The terminal's events, from the reading thread.
pub struct TermInput {
    events: UnboundedReceiver<io::Result<Event>>,
    control: mpsc::Sender<Control>,
    /// Written to wake the thread from its `poll`.
    wake: OwnedFd,
}

impl TermInput {
    /// Starts reading standard input (the terminal).
    pub fn start() -> io::Result<Self> {
        let (wake_read, wake) = pipe()?;
        let (tx, events) = unbounded_channel();
        let (control, control_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("terminal-input".into())
            .spawn(move || read_loop(&wake_read, &control_rx, &tx))?;
        Ok(Self {
            events,
            control,
            wake,
        })
    }

    /// The next event; `None` once the terminal is gone (it hung up).
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        self.events.recv().await
    }

    fn tell(&self, control: Control) -> bool {
        if self.control.send(control).is_err() {
            return false;
        }
        // SAFETY: writes one byte from a valid buffer to the pipe we own.
        unsafe { libc::write(self.wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        true
    }

    /// Stops reading (an editor takes the terminal); returns once the
    /// thread no longer reads.
    pub fn pause(&self) {
        let (ack, stopped) = mpsc::channel();
        if self.tell(Control::Pause(ack)) {
            // The thread may be gone (the terminal hung up): do not wait then.
            let _ = stopped.recv_timeout(Duration::from_secs(1));
        }
    }

    pub fn resume(&self) {
        self.tell(Control::Resume);
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-int buffer; pipe2 fills it on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just made and are owned by no one else.
    Ok(unsafe {
        use std::os::fd::FromRawFd;
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    })
}

fn drain(fd: &OwnedFd) {
    let mut buf = [0u8; 64];
    // SAFETY: reads into a valid buffer from a non-blocking pipe we own.
    while unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

/// What the thread does after its control pipe woke it: false to stop.
fn on_control(control: &mpsc::Receiver<Control>) -> bool {
    loop {
        let c = match control.try_recv() {
            Ok(c) => c,
            Err(mpsc::TryRecvError::Empty) => return true,
            // The app dropped its end.
            Err(mpsc::TryRecvError::Disconnected) => return false,
        };
        if let Control::Pause(ack) = c {
            let _ = ack.send(());
            // Asleep until resumed (or the app is gone).
            loop {
                match control.recv() {
                    Ok(Control::Resume) => break,
                    Ok(Control::Pause(ack)) => drop(ack.send(())),
                    Err(_) => return false,
                }
            }
        }
    }
}

/// What `poll` says of a terminal that went away.
const HUNG_UP: libc::c_short = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;

fn read_loop(
    wake: &OwnedFd,
    control: &mpsc::Receiver<Control>,
    events: &UnboundedSender<io::Result<Event>>,
) {
    // What crossterm read before this thread started (keys typed while the
    // terminal was asked what it supports) is in its queue, not on the fd.
    if !take_ready(events) {
        return;
    }
    loop {
        let mut fds = [
            libc::pollfd {
                fd: libc::STDIN_FILENO,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            let _ = events.send(Err(e));
            return;
        }
        if fds[1].revents != 0 {
            drain(wake);
            // After a pause, what the terminal's resume read is queued.
            if !on_control(control) || !take_ready(events) {
                return;
            }
            continue;
        }
        if fds[0].revents & HUNG_UP != 0 {
            // The terminal is gone: the stream ends (the app ends with it).
            return;
        }
        if fds[0].revents & libc::POLLIN == 0 {
            continue;
        }
        // Bytes are there: crossterm reads and parses them without waiting.
        if !take_ready(events) {
            return;
        }
    }
}

/// Sends the events crossterm has or can read now without waiting; false
/// when the app is gone or the terminal hung up (crossterm is not asked
/// then: it would spin).
fn take_ready(events: &UnboundedSender<io::Result<Event>>) -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    let looked = loop {
        // SAFETY: one valid pollfd; a zero timeout only looks.
        let n = unsafe { libc::poll(&mut fd, 1, 0) };
        if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break n;
        }
    };
    if looked < 0 || fd.revents & HUNG_UP != 0 {
        return false;
    }
    loop {
        match event::poll(Duration::ZERO) {
            Ok(true) => {
                if events.send(event::read()).is_err() {
                    return false;
                }
            }
            Ok(false) => return true,
            Err(e) => return events.send(Err(e)).is_ok(),
        }
    }
}
