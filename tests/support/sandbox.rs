//! What the sandbox tests need of the machine: Landlock, user namespaces
//! (the sandbox's own world), root. Without one a test says it was
//! skipped and why; with `WAYPOINT_TEST_SANDBOX_REQUIRED` set (as `.ci/run`
//! does) it fails instead, so CI never passes on a printed skip.

/// Whether the kernel gives what `what` needs: true, or `false` after
/// saying the test is skipped (a failure when the switch is set).
pub fn needs(what: &str, have: bool, why: &str) -> bool {
    if !have {
        assert!(
            std::env::var_os("WAYPOINT_TEST_SANDBOX_REQUIRED").is_none(),
            "{what} cannot run here: {why} (WAYPOINT_TEST_SANDBOX_REQUIRED is set)"
        );
        eprintln!("SKIPPED {what}: {why}");
    }
    have
}

/// Landlock is there.
pub fn landlock(what: &str) -> bool {
    needs(
        what,
        waypoint::safety::landlock_abi().is_some(),
        "this kernel has no Landlock",
    )
}

/// The sandbox gets its own world here (user namespaces allowed), or why not.
pub fn world(what: &str) -> bool {
    if !landlock(what) {
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let sandbox = waypoint::safety::Sandbox::for_workspace(dir.path(), &[], true);
    let gaps = match sandbox.prepare() {
        Ok(c) => c.gaps().map(str::to_string),
        Err(e) => Some(e.to_string()),
    };
    needs(what, gaps.is_none(), gaps.as_deref().unwrap_or_default())
}

/// The tests run as root.
pub fn root(what: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    needs(what, root, "not running as root")
}

/// A folder for a test's HOME (and what it checks) outside every folder
/// the sandbox's world hides (`/tmp`, `/var/tmp`, `/dev`): under the
/// target folder, unless the checkout is in one of those (CI may clone
/// into /tmp), then under `$HOME/.cache`.
pub fn outside_hidden(prefix: &str) -> tempfile::TempDir {
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let hidden = ["/tmp", "/var/tmp", "/dev"]
        .iter()
        .any(|h| target.starts_with(h));
    let base = if hidden {
        let home =
            std::env::var_os("HOME").map_or_else(|| "/root".into(), std::path::PathBuf::from);
        home.join(".cache/waypoint-tests")
    } else {
        target
    };
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .unwrap()
}
