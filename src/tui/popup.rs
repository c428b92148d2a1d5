//! What the slash-command list offers: the built-in commands, then the
//! session's custom commands and skills (as the engine told them), one
//! entry each, filtered and ranked as typed. A built-in name always wins.

use super::commands::{COMMANDS, filter, matches};
use super::state::App;

/// One row of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub name: &'a str,
    pub args: &'a str,
    pub help: &'a str,
    /// It cannot run without arguments (Enter completes it instead).
    pub needs_args: bool,
}

/// The entries matching what is typed after `/`, built-ins first.
pub fn entries(app: &App) -> Vec<Entry<'_>> {
    let typed = filter(app).to_lowercase();
    let mut found: Vec<Entry<'_>> = matches(&typed)
        .into_iter()
        .map(|c| Entry {
            name: c.name,
            args: c.args,
            help: c.help,
            needs_args: c.needs_args(),
        })
        .collect();
    let mut extra: Vec<(u8, Entry<'_>)> = app
        .status
        .catalog
        .iter()
        .filter(|e| !COMMANDS.iter().any(|c| c.name == e.name))
        .filter_map(|e| {
            let rank = super::commands::score(&e.name.to_lowercase(), &typed)?;
            Some((
                rank,
                Entry {
                    name: &e.name,
                    args: e
                        .hint
                        .as_deref()
                        .unwrap_or(if e.skill { "[ARGS]" } else { "" }),
                    help: &e.description,
                    needs_args: false,
                },
            ))
        })
        .collect();
    extra.sort_by_key(|(rank, _)| *rank);
    found.extend(extra.into_iter().map(|(_, e)| e));
    found
}

/// The highlighted entry of the open list.
pub fn chosen(app: &App) -> Option<Entry<'_>> {
    let found = entries(app);
    let at = app
        .overlays
        .popup
        .selected
        .min(found.len().saturating_sub(1));
    found.into_iter().nth(at)
}
