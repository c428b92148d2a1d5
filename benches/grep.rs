//! The `grep` tool against ripgrep (criterion): the same queries on the
//! same tree, Waypoint's in-process search (ripgrep's crates over the
//! `ignore` walker, as the tool runs) beside the `rg` binary (Debian's
//! `ripgrep` package; skipped, and said, when it is not installed). The
//! tree the bench makes: a git repository of 20,000 source files in 200
//! folders (about 2.5 KB each, 50 MB), a `.gitignore`d `target/` of 2,000
//! more, and one match in every 50th file. Both list the matching files
//! (`-l`), then print matching lines with numbers (`-n`), with 2 worker
//! threads each on this 2-core machine. `cargo bench --bench grep`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use waypoint::tools::{ToolConfig, ToolEnv, Workspace};

fn make_tree(root: &Path) {
    let body: String = (0..60)
        .map(|i| format!("    let value_{i} = compute_something({i}, \"argument\");\n"))
        .collect();
    for d in 0..200 {
        let dir = root.join(format!("src/mod{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let n = d * 100 + f;
            let extra = if n % 50 == 0 {
                "    // FIXME: the needle_in_haystack case\n"
            } else {
                ""
            };
            std::fs::write(
                dir.join(format!("file{f:03}.rs")),
                format!("fn f{n}() {{\n{body}{extra}}}\n"),
            )
            .unwrap();
        }
    }
    let target = root.join("target/debug");
    std::fs::create_dir_all(&target).unwrap();
    for f in 0..2000 {
        std::fs::write(
            target.join(format!("gen{f}.rs")),
            "// needle_in_haystack, generated\n",
        )
        .unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path());
    let workspace = Workspace::new(dir.path()).unwrap();
    let config = ToolConfig::default();
    let cancel = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let env = ToolEnv::new(&workspace, &config, &cancel);
    let rg = Command::new("rg").arg("--version").output().is_ok();
    let queries = [
        (
            "files",
            json!({"pattern": "needle_in_haystack"}),
            vec!["-l"],
        ),
        (
            "lines",
            json!({"pattern": "FIXME: the \\w+", "output_mode": "content", "-n": true, "head_limit": 1000}),
            vec!["-n"],
        ),
    ];
    let mut group = c.benchmark_group("grep");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    for (name, input, flags) in &queries {
        let first = runtime.block_on(waypoint::tools::grep::run(input, &env));
        assert!(first.content.contains("src/mod"), "{}", first.content);
        group.bench_function(format!("waypoint grep ({name})"), |b| {
            b.iter(|| runtime.block_on(waypoint::tools::grep::run(input, &env)))
        });
        if !rg {
            eprintln!("skipped rg ({name}): ripgrep is not installed");
            continue;
        }
        let pattern = input["pattern"].as_str().unwrap();
        group.bench_function(format!("rg ({name})"), |b| {
            b.iter(|| {
                let out = Command::new("rg")
                    .args(flags)
                    .args(["-j", "2", pattern])
                    .current_dir(dir.path())
                    .output()
                    .unwrap();
                assert!(out.status.success());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
