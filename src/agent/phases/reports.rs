//! At a round's start (the root thread's), the model hears what finished
//! in the background since it last heard: each background subagent's
//! report (its account recorded), then the background jobs that ended.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::RoundStart;
use crate::agent::invoke::Invocations;
use crate::agent::{Session, TurnEnd};

/// The phase (the reports wait in the session's task pool and jobs).
pub(super) struct Reports;

impl RoundStart for Reports {
    fn name(&self) -> &'static str {
        "background-reports"
    }

    fn start<'a>(
        &'a mut self,
        session: &'a mut Session,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<TurnEnd>> {
        Box::pin(async move {
            if session.host.events.thread().is_root() {
                task_reports(session);
                job_notes(session);
            }
            None
        })
    }
}

/// Tells the model of the background tasks that finished, each as a note
/// with its result (and records what each spent).
fn task_reports(session: &mut Session) {
    let finished = session.host.shared.tasks.take_finished();
    for done in finished {
        let result = crate::tools::task::report_output(&done.report);
        let note = format!(
            "[The background task of your call {} ({}) finished:]\n{}",
            done.call, done.finished.child, result.content
        );
        session.task_done(&done.call, done.finished, done.item);
        session.add_user_text(note, false);
    }
}

/// The model hears of the background jobs that ended since it last heard.
fn job_notes(session: &mut Session) {
    Invocations(session.voice()).tell_jobs();
    let notes = session.host.shared.tasks.jobs.take_ended();
    for note in notes {
        session.add_user_text(note, false);
    }
}
