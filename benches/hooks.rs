//! What hooks and skills cost (criterion). A call where no hook is
//! configured pays a lookup in an empty set; a call through one
//! `PreToolUse` hook pays its run: `bash -c` started contained with the
//! event on stdin, waited for, its group swept (a shell `exit 0`, and a
//! Python script that reads the JSON, as hooks copied from Claude Code
//! projects are). Skills: finding 200 `SKILL.md` files and building the
//! prompt's list, which every session start pays once.
//! `cargo bench --bench hooks`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tokio_util::sync::CancellationToken;
use waypoint::hooks::{Hook, HookEvent, HookOrigin, HookSet, Matcher};
use waypoint::skills::{Catalog, Places};
use waypoint::tools::hook_run::{Place, run};

const PAYLOAD: &str = r#"{"session_id":"3f2a","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_use_id":"toolu_1"}"#;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let place = Place {
        root: dir.path(),
        session: None,
        confinement: None,
        cancel: &cancel,
    };
    let mut group = c.benchmark_group("hooks");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));

    let empty = HookSet::default();
    group.bench_function("a call with no hook: the lookup", |b| {
        b.iter(|| {
            empty
                .matching(HookEvent::PreToolUse, &["bash", "Bash"])
                .len()
        })
    });
    let event = HookEvent::PreToolUse;
    let many = HookSet::new(
        (0..50)
            .map(|i| Hook {
                event,
                matcher: Matcher::new(&format!("tool{i}|Edit"), event.subject()).unwrap(),
                command: format!("hook{i}"),
                timeout: Duration::from_secs(60),
                origin: HookOrigin::Config(PathBuf::from("c.toml")),
            })
            .collect(),
    );
    group.bench_function("50 hooks, none matching: the lookup", |b| {
        b.iter(|| {
            many.matching(HookEvent::PreToolUse, &["bash", "Bash"])
                .len()
        })
    });
    group.bench_function("one PreToolUse hook run (exit 0)", |b| {
        b.iter(|| {
            runtime.block_on(run(
                "exit 0",
                PAYLOAD.as_bytes(),
                Duration::from_secs(10),
                &place,
            ))
        })
    });
    let script = "python3 -c 'import json,sys; e=json.load(sys.stdin); sys.exit(2 if \"rm \" in e[\"tool_input\"][\"command\"] else 0)'";
    group.bench_function("one PreToolUse hook run (python3 reading the JSON)", |b| {
        b.iter(|| {
            runtime.block_on(run(
                script,
                PAYLOAD.as_bytes(),
                Duration::from_secs(10),
                &place,
            ))
        })
    });

    let ws = tempfile::tempdir().unwrap();
    for i in 0..200 {
        let folder = ws.path().join(format!(".agents/skills/skill-{i:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: skill-{i:03}\ndescription: What skill {i} is for, in one sentence of some length.\nlicense: MIT\n---\n# Skill {i}\n{}\n", "Do the steps. ".repeat(200)),
        )
        .unwrap();
    }
    group.bench_function("200 skills: find, read and list them in the prompt", |b| {
        b.iter(|| {
            let catalog = Catalog::discover(&Places::of(ws.path(), None, None));
            waypoint::skills::prompt_block(&catalog.skills, 10_240).len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
