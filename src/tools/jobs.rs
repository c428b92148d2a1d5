//! Background jobs: a `bash` call with `run_in_background: true` starts
//! its command as a job and returns at once; `job_output` reads what it
//! printed since a byte offset, `job_kill` stops it. A job runs contained
//! like any command (own session, no terminal, dying with Waypoint,
//! sandboxed in auto mode), and its whole group and whatever left it are
//! killed when it is stopped, when its command ends, and when the session
//! ends ([`Jobs`] dropped). The engine tells the model when a job ends.
//!
//! Invariant: at most [`KEEP`] bytes of a job's output are kept (its
//! tail); offsets count every byte it printed, so `since` stays valid.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::args::TypedTool;
use super::procs::{self, Sweep};
use super::shell::{GroupGuard, Handover};
use super::spawn::Child;
use super::{
    Access, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, summary_line,
};
use crate::events::JobInfo;

/// The most output kept per job (its tail).
pub const KEEP: usize = 1024 * 1024;

/// The most output one `job_output` call returns.
const SHOW: usize = 30_000;

/// The session's jobs.
#[derive(Default)]
pub struct Jobs {
    next: AtomicU32,
    list: Mutex<Vec<Arc<Job>>>,
    /// Counts starts, ends and kills; `told` is the count the app last saw.
    changes: Arc<AtomicU64>,
    told: AtomicU64,
    /// Tells the app the jobs when one ends (set by the engine), so a job
    /// that ends while the agent is idle is shown as ended at once.
    teller: Mutex<Option<Teller>>,
}

/// What tells the app every job as it is now.
pub type Teller = Arc<dyn Fn(Vec<JobInfo>) + Send + Sync>;

/// One job.
pub struct Job {
    pub id: u32,
    pub command: String,
    pub pid: i32,
    started: Instant,
    state: Mutex<JobState>,
    /// Kills the job's group (and what left it) when taken and dropped.
    guard: Mutex<Option<GroupGuard>>,
}

#[derive(Default)]
struct JobState {
    /// The kept tail of the output, as printed (text is made when read,
    /// so a character split between two reads stays whole).
    output: Vec<u8>,
    /// Bytes printed in all (the offset of the end of `output`).
    total: usize,
    /// How it ended, once it has.
    ended: Option<String>,
    /// The model was told it ended.
    reported: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Job {
    fn push(&self, bytes: &[u8]) {
        let mut state = lock(&self.state);
        state.total += bytes.len();
        state.output.extend_from_slice(bytes);
        let over = state.output.len().saturating_sub(KEEP);
        state.output.drain(..over);
    }

    /// What the app shows of it.
    pub fn info(&self) -> JobInfo {
        let state = lock(&self.state);
        JobInfo {
            id: self.id,
            command: crate::text::clean_line(&self.command).into_owned(),
            ended: state.ended.clone(),
        }
    }

    /// Stops its group (and what left it).
    fn stop(&self) {
        drop(lock(&self.guard).take());
    }
}

impl Jobs {
    /// Starts `command` as a job, contained as `env` says.
    pub fn start(self: &Arc<Self>, command: &str, env: &ToolEnv<'_>) -> Result<Arc<Job>, String> {
        let confinement = match env.config.sandbox.as_ref().filter(|_| env.sandboxed) {
            Some(sandbox) => Some(sandbox.confinement_of(env.read_only, env.narrowed)?),
            None => None,
        };
        procs::become_subreaper();
        let sweep = Sweep::new();
        let mut child =
            super::shell::spawn_shell(command, env, &sweep.token, confinement.as_deref())
                .map_err(|e| format!("could not start the job: {e}"))?;
        let pid = child.id();
        let group = GroupGuard::new(
            Some(pid),
            Sweep {
                session: Some(pid),
                shell: Some(pid),
                ..sweep
            },
        );
        let handover = Handover {
            out: child.stdout.take(),
            err: child.stderr.take(),
            shown: String::new(),
            pending: Vec::new(),
        };
        Ok(self.adopt(command, child, group, handover))
    }

    /// Makes a running command a job: its group (killed when the job ends
    /// or is stopped), its pipes, read from now on, and what was read of
    /// them before (the job's output starts with it).
    pub(crate) fn adopt(
        self: &Arc<Self>,
        command: &str,
        mut child: Child,
        group: GroupGuard,
        handover: Handover,
    ) -> Arc<Job> {
        let pid = child.id();
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let job = Arc::new(Job {
            id,
            command: command.to_string(),
            pid,
            started: Instant::now(),
            state: Mutex::new(JobState::default()),
            guard: Mutex::new(Some(group)),
        });
        job.push(handover.shown.as_bytes());
        job.push(&handover.pending);
        lock(&self.list).push(job.clone());
        self.changes.fetch_add(1, Ordering::Relaxed);
        let (out, err) = (handover.out, handover.err);
        let watched = job.clone();
        let changes = self.changes.clone();
        // Not kept alive by its jobs: dropping the list stops them.
        let jobs = Arc::downgrade(self);
        tokio::spawn(async move {
            let read = |pipe: Option<tokio::net::unix::pipe::Receiver>, job: Arc<Job>| async move {
                let Some(mut pipe) = pipe else { return };
                let mut buf = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    job.push(&buf[..n]);
                }
            };
            let status = tokio::join!(
                read(out, watched.clone()),
                read(err, watched.clone()),
                child.wait()
            )
            .2;
            let how = match status {
                Ok(st) => {
                    use std::os::unix::process::ExitStatusExt;
                    match (st.code(), st.signal()) {
                        (Some(code), _) => format!("exit code {code}"),
                        (_, Some(sig)) => format!("killed by signal {sig}"),
                        _ => "ended".to_string(),
                    }
                }
                Err(e) => format!("lost: {e}"),
            };
            // Whatever it left running goes with it.
            watched.stop();
            {
                let mut state = lock(&watched.state);
                if state.ended.is_none() {
                    state.ended = Some(how);
                    changes.fetch_add(1, Ordering::Relaxed);
                }
            }
            if let Some(jobs) = jobs.upgrade() {
                jobs.tell();
            }
        });
        job
    }

    /// From now on the app is told the jobs through `teller` as soon as
    /// one ends (not only when the engine next looks).
    pub fn tell_with(&self, teller: Teller) {
        *lock(&self.teller) = Some(teller);
    }

    /// Tells the app the jobs, when they changed since it last heard.
    fn tell(&self) {
        let teller = lock(&self.teller).clone();
        if let Some(teller) = teller
            && self.take_changed()
        {
            teller(self.infos());
        }
    }

    pub fn get(&self, id: u32) -> Option<Arc<Job>> {
        lock(&self.list).iter().find(|j| j.id == id).cloned()
    }

    /// Whether a job started, ended or was stopped since this was last
    /// asked (what the app shows is then out of date).
    pub fn take_changed(&self) -> bool {
        let now = self.changes.load(Ordering::Relaxed);
        self.told.swap(now, Ordering::Relaxed) != now
    }

    /// Every job, oldest first.
    pub fn infos(&self) -> Vec<JobInfo> {
        lock(&self.list).iter().map(|j| j.info()).collect()
    }

    /// The jobs that ended since they were last asked for, each once: a
    /// line for the model about each.
    pub fn take_ended(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for job in lock(&self.list).iter() {
            let mut state = lock(&job.state);
            if let (Some(how), false) = (&state.ended, state.reported) {
                notes.push(format!(
                    "[Background job {} (`{}`) ended: {how}, after {} s; {} bytes of output (job_output {{\"id\": {}}} shows it).]",
                    job.id,
                    crate::text::clean_line(&job.command),
                    job.started.elapsed().as_secs(),
                    state.total,
                    job.id
                ));
                state.reported = true;
            }
        }
        notes
    }
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("jobs", &self.infos())
            .finish_non_exhaustive()
    }
}

impl Drop for Jobs {
    /// The session ends: every job's group goes.
    fn drop(&mut self) {
        for job in lock(&self.list).iter() {
            job.stop();
        }
    }
}

/// The `job_output` tool.
pub struct JobOutput;

/// The `job_kill` tool.
pub struct JobKill;

/// A `job_output` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OutputArgs {
    // The job's number.
    pub id: u64,
    /// a byte offset from an earlier job_output
    pub since: Option<u64>,
}

/// A `job_kill` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct KillArgs {
    // The job's number.
    pub id: u64,
}

/// A job was stopped: the app's list is out of date.
fn jobs_changed(ctx: &ToolCtx<'_>) {
    if let Some(jobs) = ctx.host.jobs() {
        jobs.changes.fetch_add(1, Ordering::Relaxed);
    }
}

fn job_of(id: u64, ctx: &ToolCtx<'_>) -> Result<Arc<Job>, String> {
    let id = u32::try_from(id).map_err(|_| "`id` is too large".to_string())?;
    let jobs = ctx.host.jobs().ok_or("there are no background jobs here")?;
    jobs.get(id)
        .ok_or_else(|| format!("there is no background job {id}"))
}

/// How a job tool's call is shown: `job N`.
fn summary(id: Option<u64>) -> ToolSummary {
    let id = id.map_or_else(|| "?".to_string(), |id| id.to_string());
    ToolSummary {
        line: summary_line(&format!("job {id}")),
        detail: ToolDetail::Output,
    }
}

impl TypedTool for JobOutput {
    type Args = OutputArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "job_output",
            "What a background job (bash with run_in_background) printed, and whether it still runs. \
Pass `since` (the offset a previous call returned) to get only what is new.",
            schema,
            Access::Read,
        )
    }
    fn summary_of(&self, args: Option<&OutputArgs>) -> ToolSummary {
        summary(args.map(|a| a.id))
    }
    fn call<'a>(&'a self, args: OutputArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let job = match job_of(args.id, &ctx) {
                Ok(job) => job,
                Err(e) => return ToolOutput::error(e),
            };
            let since = usize::try_from(args.since.unwrap_or(0)).unwrap_or(usize::MAX);
            ToolOutput::ok(output_since(&job, since))
        })
    }
}

/// The job's state and its output from byte `since` on (the last
/// [`SHOW`] bytes of it at most).
fn output_since(job: &Job, since: usize) -> String {
    let state = lock(&job.state);
    let kept_from = state.total - state.output.len();
    let from = since
        .clamp(kept_from, state.total)
        .max(state.total.saturating_sub(SHOW));
    let text = String::from_utf8_lossy(&state.output[from - kept_from..]);
    let how = state
        .ended
        .as_deref()
        .map_or_else(|| "still running".to_string(), |h| format!("ended ({h})"));
    let skipped = if from > since {
        format!(" [bytes {since}..{from} are not shown]")
    } else {
        String::new()
    };
    format!(
        "Job {} (`{}`), {how}, pid {}; bytes {from}..{} (next since: {}){skipped}\n{text}",
        job.id,
        crate::text::clean_line(&job.command),
        job.pid,
        state.total,
        state.total
    )
}

impl TypedTool for JobKill {
    type Args = KillArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "job_kill",
            "Stop a background job: its whole process group and whatever it started.",
            schema,
            Access::Read,
        )
    }
    fn summary_of(&self, args: Option<&KillArgs>) -> ToolSummary {
        summary(args.map(|a| a.id))
    }
    fn call<'a>(&'a self, args: KillArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let job = match job_of(args.id, &ctx) {
                Ok(job) => job,
                Err(e) => return ToolOutput::error(e),
            };
            let was = lock(&job.state).ended.clone();
            if let Some(how) = was {
                return ToolOutput::ok(format!("Job {} had already ended ({how}).", job.id));
            }
            job.stop();
            let mut state = lock(&job.state);
            if state.ended.is_none() {
                state.ended = Some("killed by job_kill".into());
                jobs_changed(&ctx);
            }
            state.reported = true;
            ToolOutput::ok(format!(
                "Job {} (`{}`) was stopped, with everything it started.",
                job.id,
                crate::text::clean_line(&job.command)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            id: 1,
            command: "make".into(),
            pid: 0,
            started: Instant::now(),
            state: Mutex::new(JobState::default()),
            guard: Mutex::new(None),
        }
    }

    #[test]
    fn output_keeps_characters_whole_and_offsets_count_every_byte() {
        let j = job();
        j.push("caf".as_bytes());
        j.push(&[0xc3]);
        j.push(&[0xa9, b'\n']);
        let all = output_since(&j, 0);
        assert!(all.contains("bytes 0..6 (next since: 6)"), "{all}");
        assert!(all.ends_with("café\n"), "{all}");
        let new = output_since(&j, 6);
        assert!(new.contains("bytes 6..6"), "{new}");
        j.push(&vec![b'x'; KEEP + 10]);
        let tail = output_since(&j, 0);
        let total = 6 + KEEP + 10;
        assert!(
            tail.contains(&format!("bytes {}..{total}", total - SHOW)),
            "{}",
            &tail[..120]
        );
        assert!(tail.contains(&format!("[bytes 0..{} are not shown]", total - SHOW)));
        assert_eq!(lock(&j.state).output.len(), KEEP);
    }
}
