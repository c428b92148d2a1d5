//! The headless run's loop: the engine's events printed as they come,
//! and where its ops come from. With `--input-format text` the task is the
//! one op: the run ends with its turn, and an approval is refused (nobody
//! is there to answer). With `--input-format jsonl` a program drives it
//! without ACP: each line of stdin is an [`Op`] as JSON (the seam's
//! schema, `waypoint schema`); approvals wait for its answer; the run ends
//! on `{"op":"quit"}` (a running turn is interrupted) or when stdin closes
//! and the engine has handled every op (the running turn and the queued
//! messages ended). A line that is no op is told on stderr with its number
//! and skipped.
//!
//! Invariant: the run ends on an `Idle` event that counts every op sent
//! (the engine's `ops`), never on an earlier one still on its way.

use std::io::{BufRead, Write};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{Outcome, OutputFormat, Printer, Tally};
use crate::events::{Decision, Envelope, Event, Op};
use crate::text::clean_line;

/// Where a headless run's ops come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// The task (`-p TEXT`, or stdin): one turn.
    Text,
    /// One op per line of stdin, as JSON (`{"op":"submit","text":"…"}`).
    Jsonl,
}

/// A line of the driver's input: its number (from 1), and the op it holds
/// or why it holds none.
type Line = (usize, Result<Op, String>);

/// The ops a driver sends on stdin (`--input-format jsonl`), read on a
/// thread of their own, and how many were sent to the engine.
pub struct OpsIn {
    lines: UnboundedReceiver<Line>,
    /// Still reading (stdin open, no `quit` yet).
    reading: bool,
    /// The ops sent to the engine (the task's, the driver's, interrupts).
    sent: u64,
    /// The `ops` of the last `Idle`: every op taken by then is handled.
    idle: Option<u64>,
    /// How the last turn of the root thread ended.
    last: Option<Outcome>,
}

impl OpsIn {
    /// The ops on stdin, for `--input-format jsonl`; `None` for `text`.
    pub fn stdin(format: InputFormat) -> Option<Self> {
        match format {
            InputFormat::Text => None,
            InputFormat::Jsonl => Some(Self::from(std::io::BufReader::new(std::io::stdin()))),
        }
    }

    /// The ops on `input`, one JSON object per line (blank lines skipped).
    pub fn from(input: impl BufRead + Send + 'static) -> Self {
        let (tx, lines) = unbounded_channel();
        // A thread, not the runtime's blocking pool: a read that never
        // returns (a driver keeping stdin open) must not hold up the exit.
        std::thread::spawn(move || {
            let mut input = input;
            let mut line = Vec::new();
            for number in 1.. {
                line.clear();
                match input.read_until(b'\n', &mut line) {
                    Ok(0) => return,
                    Ok(_) => {}
                    Err(e) => {
                        let _ = tx.send((number, Err(format!("cannot read stdin: {e}"))));
                        return;
                    }
                }
                if let Some(op) = parse(&line).transpose()
                    && tx.send((number, op)).is_err()
                {
                    return;
                }
            }
        });
        Self {
            lines,
            reading: true,
            sent: 0,
            idle: None,
            last: None,
        }
    }

    /// Every op sent is handled and stdin has ended: the run is over.
    fn done(&self) -> bool {
        !self.reading && self.idle.is_some_and(|ops| ops >= self.sent)
    }
}

/// The op a line of input holds; `None` for a blank line.
fn parse(line: &[u8]) -> Result<Option<Op>, String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| format!("not an op ({e}); see `waypoint schema`"))
}

/// What ended the wait for the next event.
enum Wake {
    Event(Option<Box<Envelope>>),
    Line(Option<Line>),
    Stop(Outcome),
    Interrupt,
}

/// The engine's ends of the seam: where ops go, where events come from.
pub struct Seam<'a> {
    pub ops: &'a UnboundedSender<Op>,
    pub events: &'a mut UnboundedReceiver<Envelope>,
}

/// Sends the run's first op (the task, the resume, the goal or the plan's
/// approval) to the engine, then prints its events until the run ends
/// (`ops`: see the module's doc); `None` when the engine vanished. `first`
/// is not sent when ops come in and it is a plain resume: the driver's
/// first op starts the run.
pub async fn print_events<O: Write, E: Write>(
    handle: Seam<'_>,
    printer: &mut Printer<O, E>,
    first: Op,
    mut ops: Option<OpsIn>,
) -> Result<Option<(Outcome, Tally)>, String> {
    if ops.is_some() && printer.format != OutputFormat::Jsonl {
        return Err(
            "--input-format jsonl needs --output-format jsonl: the driver answers approvals by the ids its events give"
                .into(),
        );
    }
    // Driven without a task, the run waits for the driver's first op.
    if ops.is_none() || first != Op::Resume {
        send(&handle, first, ops.as_mut())
            .map_err(|_| "the engine stopped before it took the task".to_string())?;
    }
    let mut totals = Tally::default();
    let mut interrupts = 0;
    // Created once, so a signal that arrives while printing is not missed.
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    let watch = |kind, name| signal(kind).map_err(|e| format!("cannot watch for {name}: {e}"));
    let mut term = watch(SignalKind::terminate(), "SIGTERM")?;
    let mut hup = watch(SignalKind::hangup(), "SIGHUP")?;
    loop {
        let reading = ops.as_ref().is_some_and(|o| o.reading);
        let wake = tokio::select! {
            ev = handle.events.recv() => Wake::Event(ev.map(Box::new)),
            line = next_line(&mut ops), if reading => Wake::Line(line),
            // Terminated or hung up: stop now; the caller's Quit stops a
            // running tool, which kills everything it started.
            _ = term.recv() => Wake::Stop(Outcome::Terminated),
            _ = hup.recv() => Wake::Stop(Outcome::HungUp),
            _ = &mut ctrl_c => {
                ctrl_c.set(tokio::signal::ctrl_c());
                interrupts += 1;
                match interrupts {
                    1 => Wake::Interrupt,
                    _ => Wake::Stop(Outcome::Interrupted),
                }
            }
        };
        match wake {
            Wake::Stop(outcome) => return Ok(Some((outcome, totals))),
            Wake::Interrupt => {
                let _ = send(&handle, Op::Interrupt, ops.as_mut());
            }
            Wake::Line(line) => {
                if let Some(ops) = ops.as_mut() {
                    take_line(&handle, printer, ops, line)?;
                }
            }
            Wake::Event(None) => return Ok(None),
            Wake::Event(Some(envelope)) => {
                let event = &envelope.event;
                match ops.as_mut() {
                    // Nobody can answer an approval here: the call is
                    // refused (the printer says so) and the turn goes on.
                    None => refuse(&handle, event),
                    Some(ops) => {
                        if let Event::Idle { ops: taken } = event {
                            ops.idle = Some(*taken);
                        }
                    }
                }
                totals.add(event);
                let outcome = printer
                    .handle(&envelope)
                    .map_err(|e| format!("cannot write the output: {e}"))?;
                match (ops.as_mut(), outcome) {
                    (None, Some(outcome)) => return Ok(Some((outcome, totals))),
                    (Some(ops), Some(outcome)) => ops.last = Some(outcome),
                    _ => {}
                }
            }
        }
        if let Some(ops) = ops.as_ref().filter(|o| o.done()) {
            // A run that started no turn failed at nothing.
            return Ok(Some((ops.last.unwrap_or(Outcome::Completed), totals)));
        }
    }
}

/// The driver's next line; `None` when stdin has ended.
async fn next_line(ops: &mut Option<OpsIn>) -> Option<Line> {
    match ops {
        Some(ops) => ops.lines.recv().await,
        None => std::future::pending().await,
    }
}

/// Sends `op` to the engine, counted when ops come in.
fn send(handle: &Seam<'_>, op: Op, ops: Option<&mut OpsIn>) -> Result<(), ()> {
    handle.ops.send(op).map_err(|_| ())?;
    if let Some(ops) = ops {
        ops.sent += 1;
    }
    Ok(())
}

/// Refuses an approval request: nobody can answer it in a run without a driver.
fn refuse(handle: &Seam<'_>, event: &Event) {
    if let Event::ApprovalRequested { id, reason, .. } = event {
        let _ = handle.ops.send(Op::Approve {
            id: id.clone(),
            decision: Decision::Refuse {
                reason: Some(super::notes::headless_refusal(reason)),
            },
        });
    }
}

/// A line of the driver's input: its op sent (`quit`: the running turn
/// interrupted, and no more read), or why it is none told on stderr;
/// `None`: stdin has ended.
fn take_line<O: Write, E: Write>(
    handle: &Seam<'_>,
    printer: &mut Printer<O, E>,
    ops: &mut OpsIn,
    line: Option<Line>,
) -> Result<(), String> {
    let op = match line {
        None => {
            ops.reading = false;
            return Ok(());
        }
        Some((_, Ok(op))) => op,
        Some((number, Err(why))) => {
            return writeln!(
                printer.err,
                "waypoint: stdin line {number}: {}",
                clean_line(&why)
            )
            .map_err(|e| format!("cannot write the output: {e}"));
        }
    };
    let op = if op == Op::Quit {
        ops.reading = false;
        Op::Interrupt
    } else {
        op
    };
    // An engine that stopped takes no more; its events' end says so.
    let _ = send(handle, op, Some(ops));
    Ok(())
}

/// The seam's schema as `waypoint schema` prints it (and the book serves
/// it): the ops, the envelope and events, and the `result` line.
pub fn schema_text() -> String {
    crate::events::schema::seam_schema_text(&super::result_schema())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_an_op_a_blank_or_an_error_that_says_why() {
        assert_eq!(
            parse(br#"{"op":"submit","text":"hi"}"#).unwrap(),
            Some(Op::Submit { text: "hi".into() })
        );
        assert_eq!(parse(b"  \n").unwrap(), None);
        let why = parse(b"{oops}\n").unwrap_err();
        assert!(
            why.starts_with("not an op (") && why.contains("waypoint schema"),
            "{why}"
        );
        assert!(parse(br#"{"op":"fly"}"#).is_err());
        assert_eq!(parse(b"\xff\n").unwrap_err(), "not UTF-8");
    }

    #[tokio::test]
    async fn lines_are_numbered_blanks_skipped_and_the_end_closes_them() {
        let input = "{\"op\":\"interrupt\"}\n\nnope\n{\"op\":\"quit\"}";
        let mut ops = OpsIn::from(std::io::Cursor::new(input.as_bytes().to_vec()));
        let mut got = Vec::new();
        while let Some((number, op)) = ops.lines.recv().await {
            got.push((number, op.is_ok()));
        }
        assert_eq!(got, vec![(1, true), (3, false), (4, true)]);
    }

    #[test]
    fn the_run_is_done_once_stdin_ended_and_an_idle_counts_every_op() {
        let mut ops = OpsIn::from(std::io::Cursor::new(Vec::new()));
        ops.sent = 2;
        ops.idle = Some(1);
        assert!(!ops.done(), "still reading");
        ops.reading = false;
        assert!(!ops.done(), "an idle before the second op was taken");
        ops.idle = Some(2);
        assert!(ops.done());
    }
}
