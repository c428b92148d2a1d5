//! What a background job costs (criterion): starting one (`bash` with
//! `run_in_background`, which returns as soon as the job is started)
//! beside a foreground `bash` call of the same command, which waits for
//! it; and reading a job's output with `job_output`. `cargo bench --bench jobs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use waypoint::tools::jobs::Jobs;
use waypoint::tools::{ToolConfig, ToolEnv, Workspace};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = ToolConfig::default();
    let cancel = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let env = ToolEnv::new(&workspace, &config, &cancel);
    let mut group = c.benchmark_group("jobs");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    let command = json!({"command": "sleep 0.05"});
    group.bench_function("foreground bash `sleep 0.05` (waits)", |b| {
        b.iter(|| runtime.block_on(waypoint::tools::bash::run(&command, &env)))
    });
    group.bench_function("background job `sleep 0.05`: the call", |b| {
        b.iter_batched(
            || Arc::new(Jobs::default()),
            |jobs| {
                let _guard = runtime.enter();
                jobs.start("sleep 0.05", &env).unwrap();
                jobs
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
