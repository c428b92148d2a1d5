//! The offline demo's temporary workspace and its last words: how to point
//! Waypoint at a real model (and, when no `waypoint` is on the PATH, how to
//! put it there). Invariant: the workspace is removed when the demo ends
//! unless kept, and the user is told which.

/// The demo's temporary workspace: removed when dropped, unless kept.
pub struct DemoDir {
    pub dir: Option<tempfile::TempDir>,
    pub keep: bool,
    /// Say where it was (the full-screen app showed it only on its screen).
    pub tell: bool,
}

impl Drop for DemoDir {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        if self.keep {
            let path = dir.keep();
            if self.tell {
                eprintln!("waypoint: the demo workspace is kept at {}", path.display());
            }
        } else if self.tell {
            eprintln!(
                "waypoint: the demo workspace {} was removed (--keep keeps it)",
                dir.path().display()
            );
        }
        // What to do next, said once the demo is over.
        eprintln!("{}", demo_next());
    }
}

/// The demo's last words: how to point Waypoint at a real model, and how to
/// get `waypoint` onto the PATH first when it is not there (after
/// `cargo run`, it is not).
fn demo_next() -> String {
    let model = "That was the offline demo. To work on a real project, give Waypoint a model and \
run it in the project's folder: `export ANTHROPIC_API_KEY=…` (or `OPENAI_API_KEY=…`, or \
`OPENAI_BASE_URL=http://localhost:11434/v1` for a local Ollama), then";
    if on_path("waypoint") {
        format!("{model} `cd your-project && waypoint`.")
    } else {
        format!(
            "{model} `cargo install --path .` in Waypoint's folder (it puts `waypoint` on your \
PATH; there is none on it now) and `cd your-project && waypoint`."
        )
    }
}

/// Whether an executable file `name` is in a folder on the PATH.
fn on_path(name: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| crate::programs::is_executable(&dir.join(name)))
}
