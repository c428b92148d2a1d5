//! Plan mode's lines in headless text output: a proposed plan says how to
//! approve it (the run then exits 5), an approval says the mode it runs in.

use std::io::{self, Write};

use super::Printer;
use crate::events::Event;
use crate::text::clean_line;

impl<O: Write, E: Write> Printer<O, E> {
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
                    "waypoint: the plan above is proposed (plan mode; exit code 5): approve it with `{resume} [--approval MODE] [--fresh]`, or ask for changes with `waypoint -r {again} -p --approval plan \"…\"`"
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
            _ => Ok(()),
        }
    }
}
