//! What one `bash` call costs, in the sandbox and bare: `bash -c true`
//! through the real tool (spawn, pipes, sweep), so the difference is the
//! sandbox's own price (preparing the Landlock ruleset and seccomp filter
//! in the parent, applying them between fork and exec). Skips the
//! sandboxed case on a kernel without Landlock. `cargo bench --bench sandbox`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use waypoint::safety::{Sandbox, landlock_abi};
use waypoint::tools::{ToolConfig, ToolEnv, Workspace, bash};

fn bench_bash(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = ToolConfig {
        sandbox: Some(Sandbox::for_workspace(workspace.root(), &[], true)),
        ..ToolConfig::default()
    };
    let cancel = CancellationToken::new();
    let input = json!({"command": "true"});
    let mut group = c.benchmark_group("bash_call");
    group
        .sample_size(60)
        .measurement_time(Duration::from_secs(8));
    for sandboxed in [false, true] {
        if sandboxed && landlock_abi().is_none() {
            eprintln!("skipped bash_call/sandboxed: this kernel has no Landlock");
            continue;
        }
        let name = if sandboxed { "sandboxed" } else { "bare" };
        group.bench_function(name, |b| {
            b.iter(|| {
                let env = ToolEnv {
                    workspace: &workspace,
                    config: &config,
                    cancel: &cancel,
                    output: None,
                    sandboxed,
                };
                let out = rt.block_on(bash::run(&input, &env));
                assert!(!out.is_error(), "{}", out.content);
            })
        });
    }
    group.finish();
    c.bench_function("sandbox_prepare", |b| {
        let sandbox = config.sandbox.as_ref().unwrap();
        b.iter(|| sandbox.prepare().unwrap())
    });
}

criterion_group!(benches, bench_bash);
criterion_main!(benches);
