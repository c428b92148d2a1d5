//! Plan mode's lines in headless text output: a proposed plan says how to
//! approve it (the run then exits 5), an approval says the mode it runs in.

use std::io::{self, Write};

use super::Printer;
use super::result_line::AgreementProgress;
use crate::events::Event;
use crate::text::clean_line;
use crate::todo::{Author, TodoStatus};

pub(super) use crate::events::Agreement;

/// What became of the approved items; none when nothing was approved.
pub(super) fn progress(agreement: &Agreement) -> Option<AgreementProgress> {
    let agreed = agreement.agreed.as_ref()?;
    let mut progress = AgreementProgress::default();
    for item in agreed {
        match agreement.now.iter().find(|i| i.id == item.id) {
            None => progress.dropped += 1,
            Some(i) if i.status == TodoStatus::Completed => progress.done += 1,
            Some(_) => progress.open += 1,
        }
    }
    Some(progress)
}

impl<O: Write, E: Write> Printer<O, E> {
    /// The run's last word on the approved plan, on `err` (text format).
    pub(super) fn agreement_line(&mut self) -> io::Result<()> {
        let Some(p) = progress(&self.agreement) else {
            return Ok(());
        };
        writeln!(
            self.err,
            "waypoint: the approved plan: {} of {} items done, {} dropped, {} open",
            p.done,
            p.done + p.dropped + p.open,
            p.dropped,
            p.open
        )
    }

    /// Keeps the plan's progress for the `result` line.
    pub(super) fn note_plan(&mut self, event: &Event) {
        self.agreement.note(event);
        match event {
            Event::PlanUpdated {
                items,
                author,
                revision,
                ..
            } => {
                self.plan = crate::todo::progress(items);
                if *author == Author::Model && self.proposed != Some(*revision) {
                    self.proposed = None;
                }
            }
            Event::PlanProposed { revision } => self.proposed = Some(*revision),
            Event::PlanApproved { .. } => self.proposed = None,
            _ => {}
        }
    }

    /// `PlanProposed` and `PlanApproved`, on `err`.
    pub(super) fn proposal_line(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::PlanProposed { .. } => {
                self.end_line()?;
                let id = self.session.as_deref().map(clean_line);
                let resume = id.as_deref().map_or_else(
                    || "waypoint -c -p --approve-plan".to_string(),
                    |id| format!("waypoint -r {id} -p --approve-plan"),
                );
                let again = id.as_deref().unwrap_or("ID");
                writeln!(
                    self.err,
                    "waypoint: the plan above is proposed (plan mode; exit code 5): approve it with `{resume} [--approval MODE] [--fresh] [--plan-from EDITED.md]`, or ask for changes with `waypoint -r {again} -p --approval plan \"…\"`"
                )
            }
            Event::PlanApproved { revision, mode, .. } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: plan approved (revision {revision}); it runs in {} mode",
                    mode.as_str()
                )
            }
            Event::PlanChangeAccepted { lines, asked } => {
                self.end_line()?;
                let how = if *asked { "signed off" } else { "made" };
                writeln!(
                    self.err,
                    "waypoint: a change to the approved plan was {how}: {}",
                    clean_line(&lines.join("; "))
                )
            }
            Event::PlanChangeRefused { lines } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "waypoint: a change to the approved plan was refused (--accept-plan-changes allows it): {}",
                    clean_line(&lines.join("; "))
                )
            }
            _ => Ok(()),
        }
    }
}
