//! Headless mode: prints the engine's events for a person (`text`) or a
//! program (`jsonl`). Invariant: the answer, tool lines and plans go to
//! `out`; retries, errors and the usage summary go to `err`, so
//! `waypoint -p … > answer.txt` captures the work and shows the diagnostics.

use std::io::{self, Write};

use crate::events::{AbortReason, Event, ToolStatus};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Jsonl,
}

/// How a headless run ended, and the process exit code that says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    Failed,
    MaxTurns,
    Interrupted,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Completed => 0,
            Outcome::Failed => 1,
            Outcome::MaxTurns => 3,
            Outcome::Interrupted => 130,
        }
    }
}

pub struct Printer<O: Write, E: Write> {
    format: OutputFormat,
    out: O,
    err: E,
    /// The cursor is not at the start of a line on `out`.
    mid_line: bool,
    /// Name and summary of the running tool call, printed with its result.
    running: Option<(String, String)>,
    /// A plan update made by the running call, printed after its line.
    pending_plan: Option<String>,
}

impl<O: Write, E: Write> Printer<O, E> {
    pub fn new(format: OutputFormat, out: O, err: E) -> Self {
        Self {
            format,
            out,
            err,
            mid_line: false,
            running: None,
            pending_plan: None,
        }
    }

    /// Prints one event; returns the outcome when it ends the run.
    pub fn handle(&mut self, event: &Event) -> io::Result<Option<Outcome>> {
        let outcome = match event {
            Event::TurnComplete { .. } => Some(Outcome::Completed),
            Event::TurnAborted { reason, .. } => Some(match reason {
                AbortReason::Interrupted => Outcome::Interrupted,
                AbortReason::MaxTurns => Outcome::MaxTurns,
                AbortReason::Failed => Outcome::Failed,
            }),
            _ => None,
        };
        match self.format {
            OutputFormat::Jsonl => {
                serde_json::to_writer(&mut self.out, event)?;
                self.out.write_all(b"\n")?;
            }
            OutputFormat::Text => self.text(event)?,
        }
        self.out.flush()?;
        Ok(outcome)
    }

    fn end_line(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.mid_line) {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    fn text(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::TextDelta { text } => {
                self.out.write_all(text.as_bytes())?;
                self.mid_line = !text.ends_with('\n');
            }
            Event::ToolCallEnd {
                status,
                duration_ms,
                output,
                ..
            } => {
                self.end_line()?;
                let label = match status {
                    ToolStatus::Ok => "ok",
                    ToolStatus::Error => "error",
                    ToolStatus::Interrupted => "interrupted",
                };
                let detail = if *status == ToolStatus::Ok {
                    String::new()
                } else {
                    let first = output.lines().next().unwrap_or("");
                    format!(": {}", first.chars().take(160).collect::<String>())
                };
                let (name, summary) = self.running.take().unwrap_or_default();
                let sep = if summary.is_empty() { "" } else { " " };
                writeln!(
                    self.out,
                    "→ {name}{sep}{summary}  [{label} {duration_ms} ms{detail}]"
                )?;
                if let Some(plan) = self.pending_plan.take() {
                    self.out.write_all(plan.as_bytes())?;
                }
            }
            Event::ToolCallBegin { name, summary, .. } => {
                self.end_line()?;
                self.running = Some((name.clone(), summary.clone()));
            }
            Event::PlanUpdated { rendered, diff, .. } => {
                let summary = diff.summary();
                let mut text = if summary.is_empty() {
                    "Plan:\n".to_string()
                } else {
                    format!("Plan: {summary}\n")
                };
                for line in rendered.lines().filter(|l| !l.is_empty()) {
                    text.push_str("  ");
                    text.push_str(line);
                    text.push('\n');
                }
                if self.running.is_some() {
                    self.pending_plan = Some(text);
                } else {
                    self.end_line()?;
                    self.out.write_all(text.as_bytes())?;
                }
            }
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: retry {attempt} in {:.1} s ({reason})",
                    *delay_ms as f64 / 1000.0
                )?;
            }
            Event::RoundStarted { round } if *round > 1 => self.end_line()?,
            Event::TurnComplete { open_items, .. } => {
                self.end_line()?;
                if *open_items > 0 {
                    writeln!(
                        self.err,
                        "waypoint: finished with {open_items} plan item(s) still open"
                    )?;
                }
            }
            Event::TurnAborted { message, .. } => {
                self.end_line()?;
                writeln!(self.err, "waypoint: {message}")?;
            }
            Event::Error { message } => {
                self.end_line()?;
                writeln!(self.err, "waypoint: {message}")?;
            }
            Event::Usage { .. }
            | Event::TurnStarted { .. }
            | Event::RoundStarted { .. }
            | Event::ToolCallOutputDelta { .. }
            | Event::Queued { .. }
            | Event::Idle => {}
        }
        Ok(())
    }

    /// Prints the session's token totals on `err` (text mode only).
    pub fn summary(&mut self, input_tokens: u64, output_tokens: u64) -> io::Result<()> {
        if self.format == OutputFormat::Text {
            writeln!(
                self.err,
                "waypoint: tokens {input_tokens} in / {output_tokens} out"
            )?;
        }
        Ok(())
    }
}
