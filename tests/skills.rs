//! Skills and custom commands through the real binary on a loopback
//! model: skills found in the project (`.agents/skills`, `.claude/skills`)
//! and the user's home are named in the system prompt and loaded by the
//! `skill` tool, whose `## Plan` seeds the plan as a user revision the
//! model hears of; 200 skills keep to the prompt budget; a broken
//! `SKILL.md` is reported and the run goes on; a `.claude/commands`
//! command typed as `/NAME args` reaches the model expanded, with its
//! `@file` attached.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::path::Path;
use std::sync::Arc;

use common::{Anthropic, Turn, sse};
use loopback::{FakeServer, ProviderWire, Recorded};
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn run(home: &Path, ws: &Path, url: &str, args: &[&str]) -> (i32, String, String) {
    cli_support::output(cli_support::on_loopback(home, ws, url, Anthropic::MODEL).args(args)).await
}

fn step(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn system(r: &Recorded) -> String {
    match &r.body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

const RELEASE: &str = "---\nname: release\ndescription: Cut a release of this project\nlicense: MIT\n---\n# Release\nFollow the steps; never skip the changelog.\n\n## Plan\n- [ ] Bump the version\n- [ ] Update the CHANGELOG\n- [ ] Tag and push\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_named_in_the_prompt_loaded_by_the_tool_and_seed_the_plan() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(&ws.path().join(".agents/skills/release/SKILL.md"), RELEASE);
    write(
        &home.path().join(".claude/skills/standup/SKILL.md"),
        "---\nname: standup\ndescription: Write the daily standup\n---\nList yesterday's commits.\n",
    );
    write(
        &ws.path().join(".claude/skills/broken/SKILL.md"),
        "---\nname: broken\n---\nno description\n",
    );
    let server = FakeServer::<Anthropic>::responding(Arc::new(|r: &Recorded| match step(r) {
        0 => sse(Turn::tool("skill", json!({"name": "release"}))),
        _ => sse(Turn::text("Starting on the plan.")),
    }))
    .await;
    let (code, out, err) = run(home.path(), ws.path(), &server.url, &["-p", "ship it"]).await;
    assert_eq!(code, 4, "stopped with open items: {out}\n{err}");
    assert!(err.contains("broken/SKILL.md skipped"), "{err}");
    let requests = server.requests();
    let first = &requests[0];
    let prompt = system(first);
    assert!(
        prompt.contains("- release: Cut a release of this project"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- standup: Write the daily standup"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("never skip the changelog"),
        "only names and descriptions"
    );
    let tools = first.body["tools"].to_string();
    assert!(tools.contains("\"skill\""), "{tools}");
    let after = requests[1].messages().last().unwrap().to_string();
    assert!(after.contains("never skip the changelog"), "{after}");
    // A repository's skill proposed it: never said to be the user's.
    assert!(!after.contains("The user changed the plan"), "{after}");
    assert!(
        after.contains("The skill you loaded proposed a plan"),
        "{after}"
    );
    assert!(after.contains("Bump the version"), "{after}");
    assert!(out.contains("Tag and push"), "the plan is printed: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_skills_keep_to_the_prompt_budget() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for i in 0..200 {
        write(
            &ws.path().join(format!(".claude/skills/s{i:03}/SKILL.md")),
            &format!(
                "---\nname: s{i:03}\ndescription: What skill number {i} is for, in a sentence of about this length.\n---\nBody {i}.\n"
            ),
        );
    }
    let server =
        FakeServer::<Anthropic>::responding(Arc::new(|_: &Recorded| sse(Turn::text("Hi.")))).await;
    let (code, out, err) = run(
        home.path(),
        ws.path(),
        &server.url,
        &["--context-window", "100000", "-p", "hello"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let prompt = system(&server.requests()[0]);
    let block = &prompt[prompt.find("# Skills").unwrap()..];
    let (described, more) = block.split_once("More skills").unwrap();
    // 2% of 100,000 tokens, at about 4 bytes a token.
    assert!(described.len() <= 8000, "{}", described.len());
    assert!(described.contains("- s000:"));
    assert!(more.contains("s199"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_command_reaches_the_model_expanded_with_its_file() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(
        &ws.path().join(".claude/commands/fix-issue.md"),
        "---\ndescription: Fix a numbered issue\nargument-hint: NUMBER\n---\nFix issue #$1 ($ARGUMENTS). The notes are in @notes.txt.\n!`git log -1`\n",
    );
    write(&ws.path().join("notes.txt"), "the crash is in the parser\n");
    let server =
        FakeServer::<Anthropic>::responding(Arc::new(|_: &Recorded| sse(Turn::text("On it."))))
            .await;
    let (code, out, err) = run(
        home.path(),
        ws.path(),
        &server.url,
        &["-p", "/fix-issue 42 urgent"],
    )
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let sent = server.requests()[0].messages()[0].to_string();
    assert!(sent.contains("/fix-issue 42 urgent"), "as typed: {sent}");
    assert!(sent.contains("Fix issue #42 (42 urgent)"), "{sent}");
    assert!(
        sent.contains("the crash is in the parser"),
        "@file attached: {sent}"
    );
    assert!(sent.contains("Waypoint did not run them"), "{sent}");
}
