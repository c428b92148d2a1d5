//! The task of a headless run: from `-p TEXT`, the positional prompt, the
//! demo, or stdin; text piped on stdin along with a prompt is attached to
//! it (`git diff | waypoint -p "review this"`). Invariant: an empty task is
//! refused with a message that says where it came from, and stdin is read
//! only when something was piped (never a terminal, never `/dev/null`
//! blocking a run), and at most [`STDIN_CAP`] bytes of it.

use std::io::{IsTerminal, Read};

/// Bytes of piped text a task may carry.
pub const STDIN_CAP: usize = 1024 * 1024;

/// The largest `--plan-from` file read.
const EDITED_PLAN_MAX_BYTES: u64 = 256 * 1024;

/// What `-p` given alone stands for: the task comes from stdin.
pub const FROM_STDIN: &str = "-";

/// What stdin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdin {
    Terminal,
    /// A pipe or a file: something was given to read.
    Piped,
    /// Anything else (`/dev/null`, a socket): nothing to attach.
    Other,
}

/// What this process's stdin is.
pub fn stdin_kind() -> Stdin {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Stdin::Terminal;
    }
    let piped = std::fs::metadata("/dev/stdin").is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_fifo() || m.is_file()
    });
    if piped { Stdin::Piped } else { Stdin::Other }
}

/// Reads stdin to its end, refusing more than [`STDIN_CAP`] bytes.
pub fn read_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(STDIN_CAP as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if bytes.len() > STDIN_CAP {
        return Err(format!(
            "the text on stdin is larger than {} MiB; name the file in the prompt and let the agent read it",
            STDIN_CAP / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|_| "the text on stdin is not UTF-8".to_string())
}

/// Where the task comes from, as the command line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sources<'a> {
    /// `-p`'s value ([`FROM_STDIN`] for a bare `-p`).
    pub print: Option<&'a str>,
    pub positional: Option<&'a str>,
    /// The demo's own task, with `--demo`.
    pub demo: Option<&'a str>,
}

/// The task, with piped text attached; `read` reads stdin (called at most once).
pub fn task(
    given: Sources<'_>,
    stdin: Stdin,
    read: impl FnOnce() -> Result<String, String>,
) -> Result<String, String> {
    let text = match (given.print, given.positional, given.demo) {
        (Some(p), _, _) if p != FROM_STDIN && p.trim().is_empty() => {
            return Err("the prompt given with -p is empty".into());
        }
        (Some(p), _, _) if p != FROM_STDIN => p,
        (_, Some(p), _) if !p.trim().is_empty() => p,
        (_, _, Some(demo)) => return Ok(demo.to_string()),
        (_, Some(_), _) => return Err("the prompt is empty".into()),
        // A bare `-p`, or nothing: the task is on stdin.
        _ => {
            if stdin == Stdin::Terminal {
                return Err(
                    "no prompt: use `waypoint -p \"TASK\"` or pipe the task on stdin; try `waypoint --demo` to see it work offline"
                        .into(),
                );
            }
            let text = read()?;
            if text.trim().is_empty() {
                return Err("the prompt on stdin is empty".into());
            }
            return Ok(text);
        }
    };
    if stdin != Stdin::Piped {
        return Ok(text.to_string());
    }
    let piped = read()?;
    if piped.trim().is_empty() {
        return Ok(text.to_string());
    }
    let newline = if piped.ends_with('\n') { "" } else { "\n" };
    Ok(format!("{text}\n\n<stdin>\n{piped}{newline}</stdin>"))
}

/// `--plan-from`'s items (with `--approve-plan`, the plan as the user
/// edited it is the task), read before anything else happens: the
/// message that says why not when the file is unreadable or holds no
/// checklist items.
pub fn edited_plan(
    path: Option<&std::path::Path>,
) -> Result<Option<Vec<crate::todo::TodoItem>>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    let shown = path.display();
    let cannot = |e: std::io::Error| format!("--plan-from: cannot read {shown}: {e}");
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(EDITED_PLAN_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > EDITED_PLAN_MAX_BYTES {
        return Err(format!(
            "--plan-from: {shown} is larger than {} KiB; a plan is a page",
            EDITED_PLAN_MAX_BYTES / 1024
        ));
    }
    let items = crate::todo::items_in_plan_file(&String::from_utf8_lossy(&bytes));
    if items.is_empty() {
        return Err(format!(
            "--plan-from: {shown} has no checklist items (lines like `- [ ] Write the parser`)"
        ));
    }
    Ok(Some(items))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn given(print: Option<&'static str>, positional: Option<&'static str>) -> Sources<'static> {
        Sources {
            print,
            positional,
            demo: None,
        }
    }

    fn never() -> Result<String, String> {
        panic!("stdin must not be read here")
    }

    #[test]
    fn piped_text_is_attached_to_the_prompt() {
        let t = task(given(Some("explain"), None), Stdin::Piped, || {
            Ok("fn main() {}\n".into())
        });
        assert_eq!(t.unwrap(), "explain\n\n<stdin>\nfn main() {}\n</stdin>");
        let t = task(given(None, Some("review")), Stdin::Piped, || {
            Ok("diff".into())
        });
        assert_eq!(t.unwrap(), "review\n\n<stdin>\ndiff\n</stdin>");
        // Nothing piped, or an empty pipe: the prompt alone.
        assert_eq!(
            task(given(Some("x"), None), Stdin::Other, never).unwrap(),
            "x"
        );
        assert_eq!(
            task(given(Some("x"), None), Stdin::Piped, || Ok(String::new())).unwrap(),
            "x"
        );
    }

    #[test]
    fn empty_prompts_say_where_they_came_from() {
        assert_eq!(
            task(given(Some(""), None), Stdin::Piped, never).unwrap_err(),
            "the prompt given with -p is empty"
        );
        assert_eq!(
            task(given(Some(FROM_STDIN), None), Stdin::Piped, || Ok(
                " \n".into()
            ))
            .unwrap_err(),
            "the prompt on stdin is empty"
        );
        assert!(
            task(given(Some(FROM_STDIN), None), Stdin::Terminal, never)
                .unwrap_err()
                .starts_with("no prompt")
        );
        assert_eq!(
            task(given(Some(FROM_STDIN), None), Stdin::Piped, || Ok(
                "the task".into()
            ))
            .unwrap(),
            "the task"
        );
    }

    #[test]
    fn the_demo_brings_its_own_task() {
        let demo = Sources {
            print: Some(FROM_STDIN),
            positional: None,
            demo: Some("demo task"),
        };
        assert_eq!(task(demo, Stdin::Piped, never).unwrap(), "demo task");
    }
}
