//! Files Waypoint opens on the model's or the repository's behalf cannot
//! be turned against it: a folder swapped for a symlink while a tool writes
//! never redirects the write outside the workspace, and an `AGENTS.md` that
//! is a symlink out, a device or a FIFO is not read (and never hangs),
//! while one bigger than the cap is cut with a note.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use waypoint::context::{self, MAX_FILE_BYTES};
use waypoint::tools::{ToolConfig, ToolEnv, ToolOutput, Workspace, fs};

/// Calls of each tool while the folder flips.
const CALLS: usize = 2000;

/// Swaps `ws/d` (a folder) and `ws/d.swap` (a symlink to `outside`)
/// atomically, again and again, until `stop` is set: `d` is always there,
/// a folder one moment and a link out the next.
fn flipper(ws: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    symlink(&outside, ws.join("d.swap")).unwrap();
    let c = |name: &str| {
        std::ffi::CString::new(ws.join(name).into_os_string().into_encoded_bytes()).unwrap()
    };
    let (a, b) = (c("d"), c("d.swap"));
    std::thread::spawn(move || {
        // Each state held for a varying while (an odd count of them, so that
        // both states get each), so that some swaps fall between a check and
        // the open after it, whatever their spacing.
        let holds = [0u64, 10, 30, 100, 300];
        let mut n = 0usize;
        while !stop.load(Ordering::Relaxed) {
            // SAFETY: two valid C strings.
            let rc = unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            };
            assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
            std::thread::sleep(Duration::from_micros(holds[n % holds.len()]));
            n += 1;
        }
    })
}

/// What a race left outside: the names there, and whether the file
/// that was there (if any) is still the same file with the same text.
struct Outside {
    names: Vec<String>,
    untouched: bool,
}

/// Runs `input` through `tool` `CALLS` times while `d` flips; `outside_file`
/// is put outside as `f.txt` first.
async fn race(
    tool: for<'a> fn(&'a Value, &'a ToolEnv<'a>) -> futures_util::future::BoxFuture<'a, ToolOutput>,
    input: Value,
    outside_file: Option<&str>,
) -> Outside {
    let ws_dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws_dir.path().join("d")).unwrap();
    std::fs::write(ws_dir.path().join("d/f.txt"), "old text\n").unwrap();
    let file = outside.path().join("f.txt");
    let before = outside_file.map(|text| {
        std::fs::write(&file, text).unwrap();
        (inode(&file), text.to_string())
    });
    let workspace = Workspace::new(ws_dir.path()).unwrap();
    let config = ToolConfig::default();
    let cancel = CancellationToken::new();
    let env = ToolEnv::new(&workspace, &config, &cancel);
    let stop = Arc::new(AtomicBool::new(false));
    let flip = flipper(
        workspace.root().to_path_buf(),
        outside.path().to_path_buf(),
        stop.clone(),
    );
    for _ in 0..CALLS {
        let _ = tool(&input, &env).await;
    }
    stop.store(true, Ordering::Relaxed);
    flip.join().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let after = before
        .as_ref()
        .and_then(|_| Some((inode(&file), std::fs::read_to_string(&file).ok()?)));
    Outside {
        names,
        untouched: before == after,
    }
}

fn inode(path: &Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_never_lands_outside_while_a_folder_flips_to_a_symlink() {
    let outside = race(
        |i, e| Box::pin(fs::write_file(i, e)),
        json!({"path": "d/f.txt", "content": "pwned\n"}),
        None,
    )
    .await;
    assert!(
        outside.names.is_empty(),
        "written outside: {:?}",
        outside.names
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_file_never_lands_outside_while_a_folder_flips_to_a_symlink() {
    // Back and forth: every other call finds the text the last one left.
    let outside = race(
        |i, e| {
            Box::pin(async move {
                let there = fs::edit_file(i, e).await;
                let back =
                    json!({"path": "d/f.txt", "old_text": "new text", "new_text": "old text"});
                let _ = fs::edit_file(&back, e).await;
                there
            })
        },
        json!({"path": "d/f.txt", "old_text": "old text", "new_text": "new text"}),
        Some("old text\n"),
    )
    .await;
    assert_eq!(outside.names, ["f.txt"], "files created outside");
    assert!(outside.untouched, "the file outside was replaced");
}

/// `context::instructions` for `ws`, on a thread: `None` if it took more
/// than a second (a regression hangs instead of failing otherwise).
fn instructions_within_a_second(ws: &Path) -> Option<Vec<context::Instructions>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let ws = ws.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(context::instructions(&ws, None));
    });
    rx.recv_timeout(Duration::from_secs(1)).ok()
}

/// A repository (`.git`) whose root holds `AGENTS.md` as made by `make`.
fn repository(make: impl FnOnce(&Path)) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    std::fs::write(repo.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    make(repo.path());
    repo
}

#[test]
fn an_agents_md_linking_to_a_secret_outside_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("id_ed25519");
    std::fs::write(&secret, "-----BEGIN OPENSSH PRIVATE KEY----- hunter2").unwrap();
    let repo = repository(|r| symlink(&secret, r.join("AGENTS.md")).unwrap());
    let files = instructions_within_a_second(repo.path()).expect("returned within a second");
    let prompt = context::system_prompt("Base.", "env", &files);
    assert!(!prompt.contains("hunter2"), "{prompt}");
    assert!(files.is_empty(), "{files:?}");
    // Nor through a folder link, nor as CLAUDE.md.
    let repo = repository(|r| {
        symlink(outside.path(), r.join("docs")).unwrap();
        symlink("docs/id_ed25519", r.join("CLAUDE.md")).unwrap();
    });
    let files = instructions_within_a_second(repo.path()).expect("returned within a second");
    assert!(files.is_empty(), "{files:?}");
}

#[test]
fn an_agents_md_linking_to_a_device_or_being_a_fifo_is_skipped_at_once() {
    let zero = repository(|r| symlink("/dev/zero", r.join("AGENTS.md")).unwrap());
    let files = instructions_within_a_second(zero.path()).expect("/dev/zero: within a second");
    assert!(files.is_empty(), "{files:?}");
    let fifo = repository(|r| {
        let path =
            std::ffi::CString::new(r.join("AGENTS.md").into_os_string().into_encoded_bytes())
                .unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        std::fs::write(r.join("CLAUDE.md"), "claude rules").unwrap();
    });
    let files = instructions_within_a_second(fifo.path()).expect("a FIFO: within a second");
    // The FIFO is not a file to read; the folder's CLAUDE.md is.
    let texts: Vec<&str> = files.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["claude rules"]);
}

#[test]
fn a_huge_agents_md_is_cut_at_the_cap_with_a_note_and_read_no_further() {
    // 4 GiB, sparse: reading it whole would take seconds and gigabytes.
    let size: u64 = 4 << 30;
    let repo = repository(|r| {
        std::fs::write(r.join("AGENTS.md"), "rules first\n").unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(r.join("AGENTS.md"))
            .unwrap();
        f.set_len(size).unwrap();
    });
    let files = instructions_within_a_second(repo.path()).expect("returned within a second");
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].size, size);
    assert!(files[0].text.starts_with("rules first\n"));
    assert!(
        files[0].text.ends_with(&format!(
            "[… cut: the file has {size} bytes; read it for the rest]"
        )),
        "{}",
        &files[0].text[files[0].text.len().saturating_sub(100)..]
    );
    assert!(files[0].text.len() < MAX_FILE_BYTES + 200);
}

#[test]
fn an_agents_md_linking_inside_the_repository_is_still_read() {
    let repo = repository(|r| {
        std::fs::create_dir(r.join("docs")).unwrap();
        std::fs::write(r.join("docs/rules.md"), "shared rules").unwrap();
        symlink("docs/rules.md", r.join("AGENTS.md")).unwrap();
        std::fs::create_dir(r.join("app")).unwrap();
        symlink(r.join("docs/rules.md"), r.join("app/CLAUDE.md")).unwrap();
    });
    let files = instructions_within_a_second(&repo.path().join("app")).expect("in time");
    let texts: Vec<&str> = files.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["shared rules", "shared rules"]);
}

#[test]
fn a_git_head_that_is_a_fifo_or_a_device_does_not_hang_the_environment_block() {
    for make in [
        (|git: &Path| symlink("/dev/zero", git.join("HEAD")).unwrap()) as fn(&Path),
        |git: &Path| {
            let path =
                std::ffi::CString::new(git.join("HEAD").into_os_string().into_encoded_bytes())
                    .unwrap();
            // SAFETY: a valid C string.
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        },
    ] {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        make(&repo.path().join(".git"));
        let (tx, rx) = std::sync::mpsc::channel();
        let ws = repo.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(context::git_branch(&ws));
        });
        let branch = rx
            .recv_timeout(Duration::from_secs(1))
            .expect("returned within a second");
        assert_eq!(branch, None);
    }
}
