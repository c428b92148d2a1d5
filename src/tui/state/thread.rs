//! One agent thread's panes — its conversation, its tool trace, its plan
//! — and the threads other than the root, by id. An engine event of a
//! thread goes to that thread's view; the app holds the root's, a child
//! thread (a subagent a tool call started) gets one on first sight.
//! Invariant: after every event the view is in line with itself: the
//! trace's filter and the conversation's marked cells follow the plan
//! pane's selection ([`ThreadView::sync_plan`], the one cross-pane step).

use std::collections::BTreeMap;
use std::time::Instant;

use super::{Checklist, Conversation, Trace};
use crate::events::{Envelope, Event, ThreadId};
use crate::todo::{PlanDiff, TodoStatus};

/// One thread's panes.
#[derive(Debug, Default)]
pub struct ThreadView {
    pub conversation: Conversation,
    pub trace: Trace,
    pub plan: Checklist,
}

impl ThreadView {
    /// Takes one event of this thread into its panes: the trace first (a
    /// tool cell, a refusal follow from it), then the conversation and the
    /// plan, then the one step that brings them in line. `max_retries`
    /// numbers the retry notice. Output for a spill file, if any: the
    /// entry's serial and the text.
    pub fn apply(
        &mut self,
        event: &Event,
        max_retries: Option<u32>,
        now: Instant,
    ) -> Option<(u64, String)> {
        let traced = self.trace.apply(event, now);
        self.conversation
            .apply(event, traced.cell.as_ref(), max_retries);
        let replanned = self.plan.apply(event, traced.refused.as_deref(), now);
        if replanned || traced.grew {
            self.sync_plan();
        }
        traced.spill
    }

    /// Brings the trace's filter and the marked tool cells in line with the
    /// plan pane's selection (call after the selection, the plan or the
    /// trace changed). A selection whose item left the plan is dropped.
    pub fn sync_plan(&mut self) {
        let filter = self
            .plan
            .selected_index()
            .and_then(|i| self.plan.items.get(i).map(|item| (item.id.clone(), i + 1)));
        if filter.is_none() {
            self.plan.view.selected = None;
        }
        let id = |f: &Option<(String, usize)>| f.as_ref().map(|(id, _)| id.clone());
        if id(&self.trace.filter) != id(&filter) {
            // The trace's selection named an entry of the old filter.
            self.trace.selected = None;
            self.trace.expanded = false;
        }
        // The item's place may have changed (a move): the title follows.
        self.trace.filter = filter;
        let trace = &self.trace;
        self.conversation.marked_tools = match &trace.filter {
            Some(_) => trace
                .entries
                .iter()
                .filter(|t| trace.shows(t))
                .map(|t| t.serial)
                .collect(),
            None => Vec::new(),
        };
    }

    /// Another session (or a new one): the plan's history, accounts,
    /// selection and prompt go.
    pub fn forget_plan_history(&mut self) {
        self.plan.forget_history();
        self.sync_plan();
    }

    /// A resumed session's history follows: the panes start empty.
    pub fn clear_for_history(&mut self, now: Instant) {
        self.conversation.clear();
        self.trace.clear();
        self.plan.update(Vec::new(), &PlanDiff::default(), now);
        self.forget_plan_history();
    }
}

/// A child thread's plan, drawn nested in its parent's plan pane.
#[derive(Debug)]
pub struct NestedPlan<'a> {
    /// The parent's item (0-based) it goes under: the one in progress.
    pub under: usize,
    /// What the child works on: its parent call's line, else its thread.
    pub label: String,
    pub plan: &'a Checklist,
    /// How it is getting on: time, tokens, cost.
    pub live: &'a ChildLive,
    /// The call it runs now: the tool and what it acts on.
    pub running: Option<String>,
}

impl ThreadView {
    /// The plans of the child threads to draw under this view's item in
    /// progress and under its selected item: those whose parent call (in
    /// this view's trace) served that item, in thread order.
    pub fn nested_plans<'a>(&self, threads: &'a Threads) -> Vec<NestedPlan<'a>> {
        let active = self
            .plan
            .items
            .iter()
            .position(|i| i.status == TodoStatus::InProgress);
        // The selected item shows the children that worked for it too.
        let selected = self.plan.selected_index().filter(|s| Some(*s) != active);
        if active.is_none() && selected.is_none() {
            return Vec::new();
        }
        threads
            .iter()
            .filter(|(_, child)| !child.view.plan.items.is_empty() || child.live.started.is_some())
            .filter_map(|(id, child)| {
                // A child whose call is not in this trace (an earlier
                // session's) does not nest.
                let call = child
                    .parent_call
                    .as_deref()
                    .and_then(|call| self.trace.entries.iter().rev().find(|t| t.id == call))?;
                // Under the item its call was made for (the one in
                // progress, when the call names none), if shown.
                let under = match call.plan_item.id.as_deref() {
                    None => active?,
                    Some(item) => [active, selected]
                        .into_iter()
                        .flatten()
                        .find(|&i| self.plan.items[i].id == item)?,
                };
                let label = Some(call.summary.line.clone())
                    .filter(|line| !line.is_empty())
                    .unwrap_or_else(|| id.to_string());
                Some(NestedPlan {
                    under,
                    label,
                    plan: &child.view.plan,
                    live: &child.live,
                    running: child
                        .view
                        .trace
                        .entries
                        .iter()
                        .rev()
                        .find(|t| t.status == super::trace::TraceStatus::Running)
                        .map(|t| {
                            format!("{} {}", t.display_name(), t.summary.line)
                                .trim_end()
                                .to_string()
                        }),
                })
            })
            .collect()
    }
}

/// A thread other than the root: the parent's tool call that started it
/// (when the engine said), its view and how it is getting on.
#[derive(Debug, Default)]
pub struct ChildThread {
    pub parent_call: Option<String>,
    pub view: ThreadView,
    pub live: ChildLive,
}

/// A child thread's run: since when, until when (and how it ended), the
/// tokens it spent and their cost (when every model's price is known).
#[derive(Debug, Default)]
pub struct ChildLive {
    pub started: Option<Instant>,
    pub ended: Option<(Instant, ChildEnd)>,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    /// Some request's price was unknown: no cost is shown.
    pub unpriced: bool,
}

/// How a child's turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEnd {
    Answered,
    Stopped,
    Interrupted,
}

impl ChildLive {
    /// Takes what `event` tells of the run (`price`: the request's model's).
    fn apply(&mut self, event: &Event, price: Option<crate::pricing::Price>, now: Instant) {
        match event {
            Event::TurnStarted { .. } => {
                self.started.get_or_insert(now);
                self.ended = None;
            }
            Event::TurnComplete { .. } => self.ended = Some((now, ChildEnd::Answered)),
            Event::TurnAborted { reason, .. } => {
                let end = match reason {
                    crate::events::AbortReason::Interrupted => ChildEnd::Interrupted,
                    _ => ChildEnd::Stopped,
                };
                self.ended = Some((now, end));
            }
            Event::Usage { request, .. } => {
                self.tokens += request.prompt_tokens() + request.output_tokens;
                match price {
                    Some(price) => {
                        *self.cost_usd.get_or_insert(0.0) += crate::pricing::cost(price, request);
                    }
                    None => self.unpriced = true,
                }
            }
            _ => {}
        }
    }

    /// How long it has run (until `now`, or its end).
    pub fn elapsed(&self, now: Instant) -> std::time::Duration {
        let until = self.ended.map_or(now, |(at, _)| at);
        self.started
            .map(|s| until.saturating_duration_since(s))
            .unwrap_or_default()
    }

    /// Its cost, when every request's price was known.
    pub fn cost(&self) -> Option<f64> {
        self.cost_usd.filter(|_| !self.unpriced)
    }
}

/// The threads other than the root, by id, each made on first sight.
#[derive(Debug, Default)]
pub struct Threads {
    children: BTreeMap<ThreadId, ChildThread>,
}

impl Threads {
    /// Takes an event of a child thread into its view and its run (made
    /// now if it is new; `price`: a `Usage` event's model's). Its output is held in memory only: spill files are the root
    /// trace's.
    pub fn apply(
        &mut self,
        envelope: &Envelope,
        price: Option<crate::pricing::Price>,
        now: Instant,
    ) {
        let child = self.children.entry(envelope.thread).or_default();
        if child.parent_call.is_none() {
            child.parent_call.clone_from(&envelope.parent_call);
        }
        child.live.apply(&envelope.event, price, now);
        let _ = child.view.apply(&envelope.event, None, now);
    }

    /// The child thread `id`, once it has been seen.
    pub fn get(&self, id: ThreadId) -> Option<&ChildThread> {
        self.children.get(&id)
    }

    /// The child threads seen, by id.
    pub fn iter(&self) -> impl Iterator<Item = (ThreadId, &ChildThread)> {
        self.children.iter().map(|(id, child)| (*id, child))
    }

    /// A new session, or another one's history: no child threads.
    pub fn clear(&mut self) {
        self.children.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }
}
