//! Subagents: the engine's side of the `task` tool. A task runs as a
//! child [`Session`]: a thread of its own (a fresh conversation started
//! from the task's prompt, a plan of its own, the tools its kind of agent
//! gets) in a host that shares the parent's transcript, approvals, policy
//! and outbox, under its own thread id. Invariants: a child never sees
//! the parent's conversation; at most `[task] max_parallel` children run
//! at once (the others wait for a place); a child stops at its limits
//! (requests, tokens, time) or the session's token budget for children,
//! returning what it has and saying why; cancelling the parent's call
//! cancels the child's turn (its tools are killed) and the child's
//! result says so; the item the children work for cannot be completed
//! while they run.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{Host, Session, Thread, TurnEnd, reminders};
use crate::chat::Role;
use crate::config::TaskLimits;
use crate::events::{Event, ThreadId};
use crate::todo::SharedPlan;
use crate::tools::task::{AgentKind, Subagents, TaskAccount, TaskEnd, TaskReport, TaskRequest};
use crate::tools::{Access, Origin};
use crate::units::whole_tokens;

/// What the session's subagents share: their places, their thread
/// numbers, what they spent, and the turn to write.
#[derive(Debug)]
pub(super) struct TaskPool {
    places: tokio::sync::Semaphore,
    /// The last thread number handed out.
    last: AtomicU32,
    spent: AtomicU64,
    /// Held by a child's call that writes files or runs commands, so such
    /// calls of parallel children never overlap.
    pub writes: tokio::sync::Mutex<()>,
    /// Background tasks running, those finished and not yet told to the
    /// parent, and the bell their ends ring.
    background: AtomicUsize,
    finished: Mutex<Vec<Background>>,
    bell: tokio::sync::Notify,
    /// The session's background jobs (its subagents' too); they end with it.
    pub jobs: Arc<crate::tools::jobs::Jobs>,
    /// The children at work, for the ops addressed to them.
    pub children: Arc<super::children::Children>,
}

/// A background task that finished: its call, its thread, the item it
/// worked for, and its report.
#[derive(Debug)]
pub(super) struct Background {
    pub call: String,
    pub finished: Finished,
    pub item: Option<String>,
    pub report: TaskReport,
}

impl TaskPool {
    /// Waits until a background task finishes (or the turn is cancelled,
    /// then until the interrupted ones have stopped, a second at most).
    pub(super) async fn wait_finished(&self, cancel: &CancellationToken) {
        let pool = self;
        let rung = pool.bell.notified();
        if !super::shared::lock(&pool.finished).is_empty() {
            return;
        }
        tokio::select! {
            () = rung => {}
            () = cancel.cancelled() => {
                let stopped = async {
                    while pool.background.load(Ordering::Relaxed) > 0 {
                        pool.bell.notified().await;
                    }
                };
                let _ = tokio::time::timeout(Duration::from_secs(1), stopped).await;
            }
        }
    }
    /// The background tasks that finished and were not yet told.
    pub(super) fn take_finished(&self) -> Vec<Background> {
        std::mem::take(&mut *super::shared::lock(&self.finished))
    }

    pub(super) fn new(limits: &TaskLimits) -> Self {
        Self {
            places: tokio::sync::Semaphore::new(limits.max_parallel.max(1)),
            last: AtomicU32::new(0),
            spent: AtomicU64::new(0),
            writes: tokio::sync::Mutex::new(()),
            background: AtomicUsize::new(0),
            finished: Mutex::new(Vec::new()),
            bell: tokio::sync::Notify::new(),
            jobs: Arc::default(),
            children: Arc::default(),
        }
    }

    /// A background task ended: kept for the parent, and the bell rung.
    fn finish(&self, done: Background) {
        super::shared::lock(&self.finished).push(done);
        self.background.fetch_sub(1, Ordering::Relaxed);
        self.bell.notify_one();
    }

    /// A resumed session's children had numbers up to `threads`: new ones
    /// come after.
    pub(super) fn numbered_from(&self, threads: u32) {
        self.last.fetch_max(threads, Ordering::Relaxed);
    }

    fn next_thread(&self) -> ThreadId {
        ThreadId(self.last.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }
}

/// A running child's limits and what it spent.
#[derive(Debug)]
pub(super) struct Budget {
    limits: TaskLimits,
    spent: u64,
    pool: Arc<TaskPool>,
}

impl Budget {
    /// Counts one request's tokens, the child's and the session's.
    pub(super) fn spend(&mut self, tokens: u64) {
        self.spent = self.spent.saturating_add(tokens);
        self.pool.spent.fetch_add(tokens, Ordering::Relaxed);
    }

    /// Why the child must stop now, if it must.
    pub(super) fn exceeded(&self) -> Option<String> {
        let limits = &self.limits;
        if self.spent >= limits.max_tokens {
            return Some(format!(
                "it reached its token limit ({} of {}, [task] max_tokens)",
                whole_tokens(self.spent),
                whole_tokens(limits.max_tokens)
            ));
        }
        let all = self.pool.spent();
        (all >= limits.session_tokens).then(|| {
            format!(
                "the session's token budget for subagents is spent ({} of {}, [task] session_tokens)",
                whole_tokens(all),
                whole_tokens(limits.session_tokens)
            )
        })
    }
}

/// A finished child's account, for the parent's record (`TaskDone`).
#[derive(Clone, Debug)]
pub(super) struct Finished {
    pub child: ThreadId,
    pub model: String,
    pub account: TaskAccount,
}

/// Runs subagents for one call of a thread (the tool reaches it through
/// its host).
pub(super) struct Spawner<'a> {
    pub session: &'a Session,
    pub call: &'a str,
    /// The call's token: cancelling it cancels the child.
    pub cancel: &'a CancellationToken,
}

impl Subagents for Spawner<'_> {
    fn run<'a>(&'a self, request: TaskRequest) -> BoxFuture<'a, Result<TaskReport, String>> {
        Box::pin(self.run_task(request))
    }
}

/// Marks the plan item a child works for as busy until dropped.
struct Busy {
    plan: SharedPlan,
    id: String,
}

impl Busy {
    fn new(plan: &SharedPlan, id: String) -> Self {
        plan.lock().busy.push(id.clone());
        Self {
            plan: plan.clone(),
            id,
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.plan.lock();
        if let Some(at) = state.busy.iter().position(|id| *id == self.id) {
            state.busy.remove(at);
        }
    }
}

impl Spawner<'_> {
    async fn run_task(&self, request: TaskRequest) -> Result<TaskReport, String> {
        let parent = self.session;
        let pool = parent.host.shared.tasks.clone();
        let limits = parent.host.config.tools.task.clone();
        let started = Instant::now();
        // A fan-out wider than the places waits for one.
        let place = tokio::select! {
            place = pool.places.acquire() => place,
            () = self.cancel.cancelled() => return Ok(TaskReport {
                answer: String::new(),
                end: TaskEnd::Interrupted,
                account: TaskAccount::default(),
            }),
        };
        let place = place.map_err(|_| "subagents cannot start any more".to_string())?;
        if pool.spent() >= limits.session_tokens {
            return Err(format!(
                "the session's token budget for subagents ({} tokens, [task] session_tokens) is spent; do this work yourself",
                whole_tokens(limits.session_tokens)
            ));
        }
        let item = parent
            .thread
            .plan
            .lock()
            .manager
            .in_progress()
            .map(|i| i.id.clone());
        let busy = item.clone().map(|id| Busy::new(&parent.thread.plan, id));
        let mut child = parent.child(pool.next_thread(), self.call, &request, limits);
        let at_work = pool.children.enter(
            child.host.events.thread(),
            child.thread.plan.clone(),
            child.host.events.clone(),
        );
        if request.background {
            drop(place);
            return Ok(self.start_background(child, request, item, (busy, at_work)));
        }
        let end = child.work(&request, self.cancel).await;
        drop(at_work);
        drop(busy);
        drop(place);
        let account = child
            .thread
            .account(started.elapsed(), &child.host.config.prices);
        let finished = Finished {
            child: child.host.events.thread(),
            model: child.thread.client.model().to_string(),
            account: account.clone(),
        };
        super::shared::lock(&parent.thread.run.tasks).push((self.call.to_string(), finished));
        Ok(TaskReport {
            answer: child.thread.final_answer(),
            end,
            account,
        })
    }

    /// Starts `child` on its own task: it waits for a place, works until
    /// it answers or stops (or the parent's turn is interrupted), and
    /// leaves its report for the parent. What the call answers at once.
    fn start_background(
        &self,
        mut child: Session,
        request: TaskRequest,
        item: Option<String>,
        held: (Option<Busy>, super::children::AtWork),
    ) -> TaskReport {
        let pool = self.session.host.shared.tasks.clone();
        let thread = child.host.events.thread();
        let token = self.cancel.clone();
        let call = self.call.to_string();
        pool.background.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let _held = held;
            let started = Instant::now();
            let place = tokio::select! {
                place = pool.places.acquire() => place.ok(),
                () = token.cancelled() => None,
            };
            let end = match place {
                Some(_place) => child.work(&request, &token).await,
                None => TaskEnd::Interrupted,
            };
            let account = child
                .thread
                .account(started.elapsed(), &child.host.config.prices);
            let finished = Finished {
                child: thread,
                model: child.thread.client.model().to_string(),
                account: account.clone(),
            };
            let report = TaskReport {
                answer: child.thread.final_answer(),
                end,
                account,
            };
            pool.finish(Background {
                call,
                finished,
                item,
                report,
            });
        });
        TaskReport {
            answer: format!(
                "Started in the background ({thread}). Its result will come as a message when it finishes; go on with other work meanwhile. Keep the plan item it works for in progress: it cannot be completed before the task returns."
            ),
            end: TaskEnd::Started,
            account: TaskAccount::default(),
        }
    }
}

/// What a child reads first: its role, then the task (told to keep a
/// plan when it has the todo tool).
fn first_message(request: &TaskRequest, plan_tool: bool) -> String {
    let tools = match request.agent {
        AgentKind::Explore => {
            "You have read-only tools (no subagents): find and read, do not try to change anything."
        }
        AgentKind::General => {
            "You have the main agent's tools and its approval mode, but cannot start subagents."
        }
    };
    let plan = if plan_tool {
        " Keep a plan with todo_write when the task has several steps."
    } else {
        ""
    };
    format!(
        "You are a subagent ({kind}) of Waypoint's main agent, doing one task for it. {tools}{plan} Your final message is your report: the main agent sees nothing else you wrote, so make it complete and concise (findings, file paths with line numbers, anything you changed).\n\nTask: {description}\n\n{prompt}",
        kind = request.agent.name(),
        description = request.description,
        prompt = request.prompt,
    )
}

impl Session {
    /// A child of this thread for `request`, numbered `thread`, started by
    /// call `call`: a new thread (the tools its kind of agent gets, under
    /// `limits`) in this thread's host.
    fn child(
        &self,
        thread: ThreadId,
        call: &str,
        request: &TaskRequest,
        limits: TaskLimits,
    ) -> Self {
        let explore = request.agent == AgentKind::Explore;
        // No child runs tasks of its own; an explore child only reads
        // (and has no jobs to read or stop: it runs no commands).
        let tools = self.thread.tools.subset(|s| match s.origin {
            Origin::Agent => false,
            Origin::Builtin if explore => {
                matches!(s.access, Access::Read | Access::Plan) && !s.name.starts_with("job_")
            }
            _ => !explore,
        });
        let mut config = self.host.config.clone();
        config.max_rounds = limits.max_turns;
        config.auto_continue = 0;
        config.plan.file = None;
        let mut own = Thread::new(
            self.thread.client.clone(),
            tools,
            SharedPlan::default(),
            &config,
        );
        own.run.budget = Some(Budget {
            limits,
            spent: 0,
            pool: self.host.shared.tasks.clone(),
        });
        let host = Host {
            shared: self.host.shared.clone(),
            config,
            events: self.host.events.child(thread, call),
            transcript: self.host.transcript.for_thread(thread),
            store: None,
            requests: self.host.requests.for_child(),
            mcp: if explore {
                crate::mcp::Servers::none()
            } else {
                self.host.mcp.clone()
            },
        };
        Session {
            thread: own,
            host,
            stages: self.stages.clone(),
        }
    }

    /// A child's one turn, from the task to its answer or its stop.
    async fn work(&mut self, request: &TaskRequest, cancel: &CancellationToken) -> TaskEnd {
        self.add_user_text(first_message(request, self.host.config.plan.tool), true);
        if self.host.config.plan.tool {
            self.add_user_text(reminders::INITIAL_REMINDER, false);
        }
        self.host.events.begin_turn();
        self.emit(Event::TurnStarted { resumed: false });
        let max_time = self
            .thread
            .run
            .budget
            .as_ref()
            .map_or(Duration::MAX, |b| b.limits.max_time);
        let token = cancel.child_token();
        let mut timed_out = false;
        let end = {
            let turn = self.run_turn(&token);
            tokio::pin!(turn);
            let deadline = tokio::time::sleep(max_time);
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    end = &mut turn => break end,
                    () = &mut deadline, if !timed_out => {
                        timed_out = true;
                        token.cancel();
                    }
                }
            }
        };
        match end {
            TurnEnd::Complete => TaskEnd::Answered,
            TurnEnd::Interrupted if timed_out => TaskEnd::Limit(format!(
                "it reached its time limit ({} min, [task] max_minutes)",
                max_time.as_secs().div_ceil(60)
            )),
            TurnEnd::Interrupted => TaskEnd::Interrupted,
            TurnEnd::Stopped => self
                .thread
                .run
                .stopped
                .take()
                .unwrap_or(TaskEnd::Failed("it stopped".into())),
        }
    }

    /// The accounts of the subagents call `id` ran, recorded for the
    /// parent (its plan item is charged with them).
    pub(super) fn record_tasks(&mut self, id: &str) {
        let finished: Vec<Finished> = {
            let mut tasks = super::shared::lock(&self.thread.run.tasks);
            let (mine, others) = tasks.drain(..).partition(|(call, _)| call == id);
            *tasks = others;
            mine.into_iter().map(|(_, f)| f).collect()
        };
        for f in finished {
            self.task_done(id, f, None);
        }
    }

    /// Records what a finished subagent spent (the item it worked for is
    /// charged with it).
    pub(super) fn task_done(&mut self, id: &str, f: Finished, item: Option<String>) {
        self.emit(Event::TaskDone {
            id: id.to_string(),
            child: f.child,
            item,
            model: f.model,
            usage: f.account.usage,
            tool_calls: f.account.tool_calls,
            duration_ms: u64::try_from(f.account.elapsed.as_millis()).unwrap_or(u64::MAX),
        });
    }
}

impl Thread {
    /// What a child spent in `elapsed`.
    pub(super) fn account(
        &self,
        elapsed: Duration,
        prices: &std::collections::BTreeMap<String, crate::pricing::Price>,
    ) -> TaskAccount {
        let usage = self.totals;
        let model = self.client.model();
        TaskAccount {
            tool_calls: self.run.tool_calls,
            usage,
            cost_usd: crate::pricing::price_of(model, prices)
                .map(|price| crate::pricing::cost(price, &usage)),
            elapsed,
        }
    }

    /// A child's answer: the text of its last reply that has any.
    pub(super) fn final_answer(&self) -> String {
        self.conversation
            .messages()
            .iter()
            .rev()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.text("\n"))
            .find(|text| !text.trim().is_empty())
            .unwrap_or_default()
    }
}

impl Host {
    /// The root thread has background tasks running or reports not yet
    /// told to its model.
    pub(super) fn awaits_background(&self) -> bool {
        let pool = &self.shared.tasks;
        self.events.thread().is_root()
            && (pool.background.load(Ordering::Relaxed) > 0
                || !super::shared::lock(&pool.finished).is_empty())
    }
}
