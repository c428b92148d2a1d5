//! Runs one task through a spawned engine, for the benchmarks that drive
//! the real agent loop.

use waypoint::agent::AgentHandle;
use waypoint::events::{Event, Op, ToolStatus};

/// Submits `prompt` and reads the events until the turn completes, then
/// quits; returns (tool calls, tool calls that did not end `Ok`).
pub async fn run_task(handle: AgentHandle, prompt: &str) -> (usize, usize) {
    run_task_with(handle, prompt, |_| {}).await
}

/// [`run_task`], each event also handed to `seen` (a TUI, say).
pub async fn run_task_with(
    mut handle: AgentHandle,
    prompt: &str,
    mut seen: impl FnMut(&Event),
) -> (usize, usize) {
    handle
        .ops
        .send(Op::Submit {
            text: prompt.into(),
        })
        .expect("the engine takes the prompt");
    let (mut calls, mut errors) = (0, 0);
    loop {
        let event = handle.events.recv().await.expect("engine stopped").event;
        seen(&event);
        match event {
            Event::ToolCallEnd { status, .. } => {
                calls += 1;
                if status != ToolStatus::Ok {
                    errors += 1;
                }
            }
            Event::TurnComplete { .. } => break,
            Event::TurnAborted { message, .. } => panic!("turn aborted: {message}"),
            _ => {}
        }
    }
    handle
        .ops
        .send(Op::Quit)
        .expect("the engine takes the quit");
    handle.task.await.expect("the engine ends");
    (calls, errors)
}
