//! The user's own prompts of the stored sessions, for the app's Ctrl+R
//! search: read once per search from the transcripts (only their `user`
//! lines are parsed), this workspace's sessions first, the most recent
//! first, deduplicated and capped.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;

use super::{Record, SessionError, SessionStore};

/// The prompts of `store`'s sessions, newest first: `workspace`'s, then
/// the others' (each with whether it is `workspace`'s), at most `cap`, each
/// text once. A transcript that cannot be read is left out.
pub fn recent(
    store: &SessionStore,
    workspace: &str,
    cap: usize,
) -> Result<Vec<(String, bool)>, SessionError> {
    let sessions = store.list()?;
    let (here, others): (Vec<_>, Vec<_>) = sessions
        .into_iter()
        .partition(|s| s.card.workspace == workspace);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (info, is_here) in here
        .iter()
        .map(|s| (s, true))
        .chain(others.iter().map(|s| (s, false)))
    {
        for text in prompts_of(&info.path).into_iter().rev() {
            if out.len() >= cap {
                return Ok(out);
            }
            if seen.insert(text.clone()) {
                out.push((text, is_here));
            }
        }
    }
    Ok(out)
}

/// The user's prompts in the transcript at `path`, in order (the root
/// thread's; a subagent's task is not the user's).
fn prompts_of(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter(|line| line.starts_with(br#"{"type":"user""#))
        .filter_map(|line| match Record::from_line(&line).ok()? {
            Record::User {
                text, prompt: true, ..
            } => Some(text.into_owned()),
            _ => None,
        })
        .collect()
}
