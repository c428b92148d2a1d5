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
use std::os::fd::OwnedFd;
use std::sync::mpsc;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
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
        let _ = rustix::io::write(&self.wake, &[1u8]);
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
    use rustix::pipe::PipeFlags;
    Ok(rustix::pipe::pipe_with(
        PipeFlags::CLOEXEC | PipeFlags::NONBLOCK,
    )?)
}

fn drain(fd: &OwnedFd) {
    let mut buf = [0u8; 64];
    while matches!(rustix::io::read(fd, &mut buf), Ok(n) if n > 0) {}
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
const HUNG_UP: PollFlags = PollFlags::HUP.union(PollFlags::ERR).union(PollFlags::NVAL);

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
    let stdin = io::stdin();
    loop {
        let mut fds = [
            PollFd::new(&stdin, PollFlags::IN),
            PollFd::new(wake, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            Err(e) => {
                let _ = events.send(Err(e.into()));
                return;
            }
        }
        if !fds[1].revents().is_empty() {
            drain(wake);
            // After a pause, what the terminal's resume read is queued.
            if !on_control(control) || !take_ready(events) {
                return;
            }
            continue;
        }
        if fds[0].revents().intersects(HUNG_UP) {
            // The terminal is gone: the stream ends (the app ends with it).
            return;
        }
        if !fds[0].revents().contains(PollFlags::IN) {
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
    let stdin = io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    // A zero timeout only looks.
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let looked = loop {
        match rustix::event::poll(&mut fds, Some(&now)) {
            Err(Errno::INTR) => {}
            looked => break looked,
        }
    };
    if looked.is_err() || fds[0].revents().intersects(HUNG_UP) {
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
