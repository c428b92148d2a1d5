#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

const OPTS: WriteOptions = WriteOptions {
    create_parents: true,
    temp_prefix: ".waypoint-",
    mode: None,
};

/// A root (with and without openat2), its folder, and a folder outside.
fn roots() -> Vec<(Root, tempfile::TempDir, tempfile::TempDir)> {
    [true, false]
        .into_iter()
        .map(|fast| {
            let dir = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            let root = Root::open(dir.path(), fast).unwrap();
            (root, dir, outside)
        })
        .collect()
}

fn read(root: &Root, rel: &str) -> io::Result<String> {
    let mut f = root.open_file(Path::new(rel))?;
    let mut s = String::new();
    f.read_to_string(&mut s)?;
    Ok(s)
}

#[test]
fn links_inside_are_followed_and_links_out_refused() {
    for (root, dir, outside) in roots() {
        let d = dir.path();
        std::fs::create_dir(d.join("real")).unwrap();
        std::fs::write(d.join("real/a.txt"), "inside").unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        symlink("real", d.join("rel_alias")).unwrap();
        symlink(d.join("real"), d.join("abs_alias")).unwrap();
        symlink("../real/a.txt", d.join("real/up.txt")).unwrap();
        symlink(outside.path(), d.join("out_dir")).unwrap();
        symlink(outside.path().join("secret"), d.join("out_file")).unwrap();
        let dotdots = "../".repeat(d.components().count());
        symlink(format!("{dotdots}etc/passwd"), d.join("climb")).unwrap();
        symlink("/dev/zero", d.join("zero")).unwrap();
        for ok in [
            "real/a.txt",
            "rel_alias/a.txt",
            "abs_alias/a.txt",
            "real/up.txt",
        ] {
            assert_eq!(
                read(&root, ok).unwrap(),
                "inside",
                "{ok} (fast {})",
                root.openat2
            );
        }
        for bad in ["out_dir/secret", "out_file", "climb", "zero"] {
            let err = read(&root, bad).unwrap_err();
            assert!(
                err.to_string().contains("leads outside"),
                "{bad} (fast {}): {err}",
                root.openat2
            );
        }
        assert!(root.metadata(Path::new("abs_alias")).unwrap().is_dir());
        assert!(root.metadata(Path::new("out_dir")).is_err());
        assert!(checked(Path::new("../x")).is_err() && checked(Path::new("/etc")).is_err());
    }
}

#[test]
fn only_regular_files_are_opened_and_a_fifo_does_not_block() {
    for (root, dir, _o) in roots() {
        let fifo = dir.path().join("fifo");
        let (cwd, mode) = (rustix::fs::CWD, rustix::fs::Mode::from_bits_retain(0o644));
        rustix::fs::mknodat(cwd, &fifo, rustix::fs::FileType::Fifo, mode, 0).unwrap();
        let err = root.open_file(Path::new("fifo")).unwrap_err();
        assert_eq!(not_regular(&err), Some("a FIFO"), "{err}");
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let err = root.open_file(Path::new("d")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        let err = root.open_file(Path::new("missing")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let err = root.replace(Path::new("fifo"), b"x", &OPTS).unwrap_err();
        assert_eq!(not_regular(&err), Some("a FIFO"), "{err}");
    }
}

#[test]
fn replace_writes_through_links_inside_and_never_outside() {
    use std::os::unix::fs::PermissionsExt;
    for (root, dir, outside) in roots() {
        let d = dir.path();
        assert!(!root.replace(Path::new("a/b/c.txt"), b"new", &OPTS).unwrap());
        assert_eq!(std::fs::read_to_string(d.join("a/b/c.txt")).unwrap(), "new");
        std::fs::set_permissions(d.join("a/b/c.txt"), std::fs::Permissions::from_mode(0o750))
            .unwrap();
        assert!(
            root.replace(Path::new("a/b/c.txt"), b"again", &OPTS)
                .unwrap()
        );
        let mode = std::fs::metadata(d.join("a/b/c.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750);
        // A dangling link is written through: its target is created.
        symlink("a/later/x.txt", d.join("dangling")).unwrap();
        symlink(d.join("a"), d.join("abs")).unwrap();
        root.replace(Path::new("dangling"), b"via link", &OPTS)
            .unwrap();
        root.replace(Path::new("abs/b/c.txt"), b"via abs", &OPTS)
            .unwrap();
        assert!(
            std::fs::symlink_metadata(d.join("dangling"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(d.join("a/later/x.txt")).unwrap(),
            "via link"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("a/b/c.txt")).unwrap(),
            "via abs"
        );
        symlink(outside.path(), d.join("out")).unwrap();
        symlink(outside.path().join("f"), d.join("out_file")).unwrap();
        for bad in ["out/f", "out/deep/f", "out_file"] {
            let err = root.replace(Path::new(bad), b"x", &OPTS).unwrap_err();
            assert!(err.to_string().contains("leads outside"), "{bad}: {err}");
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        let no_parents = WriteOptions {
            create_parents: false,
            ..OPTS
        };
        let err = root
            .replace(Path::new("nope/x"), b"x", &no_parents)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let err = root.replace(Path::new("a"), b"x", &OPTS).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        let leftovers: Vec<_> = walkdir(d)
            .into_iter()
            .filter(|p| p.contains(".waypoint-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

fn walkdir(d: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let e = e.unwrap();
        out.push(e.path().display().to_string());
        if e.file_type().unwrap().is_dir() {
            out.extend(walkdir(&e.path()));
        }
    }
    out
}

#[test]
fn read_dir_lists_names_and_marks_folders_inside() {
    for (root, dir, outside) in roots() {
        let d = dir.path();
        std::fs::create_dir_all(d.join("src/sub")).unwrap();
        std::fs::write(d.join("src/a.rs"), "").unwrap();
        symlink("sub", d.join("src/alias")).unwrap();
        symlink(outside.path(), d.join("src/out")).unwrap();
        let mut got = root.read_dir(Path::new("src")).unwrap();
        got.sort_by(|a, b| a.name.cmp(&b.name));
        let got: Vec<(String, bool)> = got
            .into_iter()
            .map(|e| (e.name.to_string_lossy().into_owned(), e.is_dir))
            .collect();
        assert_eq!(
            got,
            [
                ("a.rs".to_string(), false),
                ("alias".to_string(), true),
                ("out".to_string(), false),
                ("sub".to_string(), true)
            ]
        );
        assert!(root.read_dir(Path::new("src/out")).is_err());
    }
}

/// A thread flips `d` between a real folder and a symlink to a folder
/// outside while the root writes `d/f.txt` again and again: not one write
/// may land outside.
#[test]
fn a_folder_flipped_to_a_symlink_never_redirects_a_write() {
    for (root, dir, outside) in roots() {
        let d = dir.path().to_path_buf();
        let out = outside.path().to_path_buf();
        std::fs::create_dir(d.join("d")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let stop = stop.clone();
            let d = d.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::rename(d.join("d"), d.join("d.real"));
                    let _ = symlink(&out, d.join("d"));
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(d.join("d"));
                    let _ = std::fs::rename(d.join("d.real"), d.join("d"));
                }
            })
        };
        let options = WriteOptions {
            create_parents: false,
            ..OPTS
        };
        let mut landed = 0;
        for _ in 0..300 {
            if root.replace(Path::new("d/f.txt"), b"x", &options).is_ok() {
                landed += 1;
            }
            let _ = read(&root, "d/f.txt");
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
        let escaped: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(
            escaped.is_empty(),
            "{} of {landed} writes landed outside",
            escaped.len()
        );
    }
}

#[test]
fn a_failed_rename_keeps_the_target_and_removes_the_temp_file() {
    // rename(2) of a file over a non-empty folder fails for every user,
    // root included; the temporary file exists by then.
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/keep.txt"), "original").unwrap();
    let err =
        write::write_in(root.fd.as_fd(), OsStr::new("d"), b"changed", None, &OPTS).unwrap_err();
    assert!(
        err.to_string().starts_with("renaming into place: "),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d/keep.txt")).unwrap(),
        "original"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["d"], "no temporary file left behind");
}
