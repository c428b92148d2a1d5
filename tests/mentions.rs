//! `@path` mentions: the mentioned file's contents reach the model after
//! the user's words, which stay as typed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scripted_support;

use scripted_support::{scenario, start_with, stop, turn_end, until};
use serde_json::json;
use waypoint::agent::{AgentConfig, SessionSetup};
use waypoint::events::Op;

#[tokio::test]
async fn a_mentioned_file_reaches_the_model_after_the_message() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let client = scenario(json!([{"text": "Read it."}]));
    let mut h = start_with(
        client.clone(),
        ws.path(),
        AgentConfig::default(),
        SessionSetup::Off,
    );
    h.ops
        .send(Op::Submit {
            text: "summarise @notes.txt please".into(),
        })
        .unwrap();
    until(&mut h.events, turn_end).await;
    stop(h).await;
    let requests = client.requests.lock().unwrap().clone();
    let texts: Vec<String> = requests[0][0]
        .content
        .iter()
        .filter_map(|b| match b {
            waypoint::llm::ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts[0], "summarise @notes.txt please",
        "the user's words as typed"
    );
    assert!(
        texts[1].contains("<file path=\"notes.txt\">\n     1\talpha\n     2\tbeta\n</file>"),
        "{texts:?}"
    );
}
