//! File tool benchmarks (criterion): one `read_file`, `write_file` and
//! `edit_file` call each, on a file three folders deep, through the same
//! entry points the agent uses. On tmpfs (`/dev/shm`, where fsync is free)
//! when there is one, so what is measured is the path handling and the
//! copying, not the disk. A second group measures the open alone: by path
//! after `Workspace::resolve` (as the tools did before they opened through
//! the root fd), through the root fd with `openat2`, and through the
//! per-component walk kept for kernels without `openat2`. Sized to finish
//! in about a minute on a 2-core machine: `cargo bench --bench fs_tools`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use waypoint::fsx::Root;
use waypoint::tools::{ToolConfig, ToolEnv, Workspace, fs};

/// Where the file lives, relative to the workspace.
const PATH: &str = "src/module/deep/file.rs";

/// A 200-line source file (about 8 KiB).
fn source() -> String {
    (0..200)
        .map(|i| format!("    let value_{i} = compute_something({i}, \"argument\");\n"))
        .collect()
}

fn bench_fs_tools(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = ToolConfig::default();
    let cancel = CancellationToken::new();
    let env = ToolEnv::new(&workspace, &config, &cancel);
    let text = source();
    let file = dir.path().join(PATH);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &text).unwrap();

    let mut group = c.benchmark_group("fs_tools");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let read = json!({"path": PATH});
    group.bench_function("read_file", |b| {
        b.iter(|| {
            let out = rt.block_on(fs::read_file(black_box(&read), &env));
            assert!(!out.is_error(), "{}", out.content);
            out
        })
    });
    let write = json!({"path": PATH, "content": text});
    group.bench_function("write_file", |b| {
        b.iter(|| {
            let out = rt.block_on(fs::write_file(black_box(&write), &env));
            assert!(!out.is_error(), "{}", out.content);
            out
        })
    });
    // Back and forth, so every call finds its text exactly once.
    let there = json!({"path": PATH, "old_text": "value_100 ", "new_text": "renamed_100 "});
    let back = json!({"path": PATH, "old_text": "renamed_100 ", "new_text": "value_100 "});
    let mut forth = true;
    group.bench_function("edit_file", |b| {
        b.iter(|| {
            let input = if forth { &there } else { &back };
            forth = !forth;
            let out = rt.block_on(fs::edit_file(black_box(input), &env));
            assert!(!out.is_error(), "{}", out.content);
            out
        })
    });
    group.finish();
}

fn bench_open(c: &mut Criterion) {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let workspace = Workspace::new(dir.path()).unwrap();
    let walking = Root::without_openat2(dir.path()).unwrap();
    let file = dir.path().join(PATH);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, source()).unwrap();
    let rel = std::path::Path::new(PATH);

    let mut group = c.benchmark_group("open");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("resolve_then_open_by_path", |b| {
        b.iter(|| {
            let path = workspace.resolve(black_box(PATH)).unwrap();
            let f = std::fs::File::open(&path).unwrap();
            f.metadata().unwrap().len()
        })
    });
    group.bench_function("resolve_then_open_beneath", |b| {
        b.iter(|| {
            let path = workspace.resolve(black_box(PATH)).unwrap();
            let f = workspace
                .files()
                .open_file(workspace.relative(&path))
                .unwrap();
            f.metadata().unwrap().len()
        })
    });
    group.bench_function("open_beneath_openat2", |b| {
        b.iter(|| workspace.files().open_file(black_box(rel)).unwrap())
    });
    group.bench_function("open_beneath_walk", |b| {
        b.iter(|| walking.open_file(black_box(rel)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_fs_tools, bench_open);
criterion_main!(benches);
