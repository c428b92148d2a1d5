//! What one `bash` call costs, in the sandbox and bare: `bash -c true`
//! through the real tool (spawn, pipes, sweep), so the difference is the
//! sandbox's own price: bare; Landlock and seccomp alone prepared for each
//! command (the sandbox before its world); the separate world (namespaces,
//! mounts, no capability) with everything prepared once per session. And
//! what preparing costs, once. Skips the sandboxed cases on a kernel
//! without Landlock. `cargo bench --bench sandbox`.
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
    let sandbox = config.sandbox.clone().unwrap();
    // Before the world: Landlock and seccomp alone, prepared per command.
    let per_command = ToolConfig {
        sandbox: Some(Sandbox {
            world: None,
            ..sandbox.clone()
        }),
        ..ToolConfig::default()
    };
    let variants: [(&str, bool, &ToolConfig); 3] = [
        ("bare", false, &config),
        ("landlock_per_command", true, &per_command),
        ("world_per_session", true, &config),
    ];
    for (name, sandboxed, config) in variants {
        if sandboxed && landlock_abi().is_none() {
            eprintln!("skipped bash_call/{name}: this kernel has no Landlock");
            continue;
        }
        group.bench_function(name, |b| {
            b.iter(|| {
                // A fresh sandbox each time prepares it again (as every
                // command did before the world); the shared one once.
                let fresh;
                let config = if name == "landlock_per_command" {
                    fresh = ToolConfig {
                        sandbox: config.sandbox.as_ref().map(|s| Sandbox {
                            prepared: Default::default(),
                            ..s.clone()
                        }),
                        ..ToolConfig::default()
                    };
                    &fresh
                } else {
                    config
                };
                let env = ToolEnv {
                    workspace: &workspace,
                    config,
                    cancel: &cancel,
                    output: None,
                    kept: None,
                    sandboxed,
                    read_only: false,
                    narrowed: None,
                    call: None,
                };
                let out = rt.block_on(bash::run(&input, &env));
                assert!(!out.is_error(), "{}", out.content);
            })
        });
    }
    group.finish();
    let mut prepare = c.benchmark_group("sandbox_prepare");
    prepare.bench_function("landlock_only", |b| {
        let s = Sandbox {
            world: None,
            ..sandbox.clone()
        };
        b.iter(|| s.prepare().unwrap())
    });
    prepare.bench_function("with_world", |b| b.iter(|| sandbox.prepare().unwrap()));
    prepare.finish();
}

criterion_group!(benches, bench_bash);
criterion_main!(benches);
