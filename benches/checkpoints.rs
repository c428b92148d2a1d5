//! Checkpoints on a big work tree (criterion): a git repository of 20,000
//! files and 500 MB (200 folders, 25 KB each, random bytes), plus three
//! untracked 12 MB files over the size cap. Measured: the first snapshot
//! (cold: every file hashed and stored, once per workspace), a snapshot at
//! a plan item boundary after a step changed three files (what a session
//! pays per point), and what opening a session's checkpoints costs the
//! engine's start (the shadow repository opens on its own thread, so
//! this is the first frame's share). `cargo bench --bench checkpoints`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use waypoint::checkpoint::live::{Checkpoints, Setup};
use waypoint::checkpoint::{DEFAULT_CAP, History, Shadow};

const FOLDERS: usize = 200;
const PER_FOLDER: usize = 100;
const FILE_BYTES: usize = 25_000;

fn make_tree(root: &Path) {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut buf = vec![0u8; FILE_BYTES];
    for d in 0..FOLDERS {
        let dir = root.join(format!("mod{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..PER_FOLDER {
            rng.fill(&mut buf);
            std::fs::write(dir.join(format!("file{f:03}.rs")), &buf).unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    for n in 0..3 {
        let mut big = std::fs::File::create(root.join(format!("dump{n}.bin"))).unwrap();
        let mut chunk = vec![0u8; 1 << 20];
        for _ in 0..12 {
            rng.fill(&mut chunk);
            big.write_all(&chunk).unwrap();
        }
    }
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    make_tree(ws.path());
    let made = Instant::now();
    let shadow = Shadow::open(data.path(), ws.path(), "bench", DEFAULT_CAP)
        .unwrap()
        .expect("a git work tree");
    let first = shadow.snapshot("first").unwrap();
    println!(
        "first snapshot of 20,000 files / 500 MB (cold, once per workspace): {:?}; {} untracked files over the cap left out: {:?}",
        made.elapsed(),
        first.skipped.len(),
        first.skipped
    );
    let made = Instant::now();
    let second = Shadow::open(data.path(), ws.path(), "second", DEFAULT_CAP)
        .unwrap()
        .expect("a git work tree");
    second.snapshot("first").unwrap();
    println!(
        "a later session's first snapshot of the same tree (its index seeded from the last one's): {:?}",
        made.elapsed()
    );
    let mut group = c.benchmark_group("checkpoints");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(20));
    let mut step = 0u32;
    group.bench_function("snapshot at an item boundary (3 files changed)", |b| {
        b.iter_batched(
            || {
                step += 1;
                let name = format!("p{step}");
                for f in 0..3 {
                    let path = ws
                        .path()
                        .join(format!("mod{:03}/file{f:03}.rs", step % 200));
                    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                    writeln!(file, "// step {step}").unwrap();
                }
                name
            },
            |name| shadow.snapshot(&name).unwrap(),
            BatchSize::PerIteration,
        );
    });
    group.finish();
    // The engine's start pays only the call; the shadow repository, the
    // recovery and the warm-up snapshot run on the checkpoints' thread
    // (waited for outside the timing).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut took: Vec<Duration> = (0..21)
        .map(|_| {
            let checkpoints = Checkpoints::default();
            let started = Instant::now();
            checkpoints.open(Setup {
                blobs: data.path().join("bench.blobs"),
                shadows: data.path().to_path_buf(),
                work_tree: ws.path().to_path_buf(),
                session: "open".into(),
                history: History::default(),
                sink: Arc::new(|_| {}),
                notify: Arc::new(|_| {}),
            });
            let took = started.elapsed();
            rt.block_on(checkpoints.settled());
            took
        })
        .collect();
    took.sort();
    println!(
        "opening a session's checkpoints on the engine's start (the first frame's share): median {:?} of 21",
        took[10]
    );
    println!(
        "shadow repository on disk: {} MB",
        waypoint::checkpoint::dir_bytes(data.path()) / 1_000_000
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
