//! The keymap written out for people: the `?` help's rows and the README's
//! table, both generated from [`super::BINDINGS`]. Invariant: they list
//! every binding, in the table's order, and nothing else.

use super::{BINDINGS, Context::Global};

/// The help rows: keys (with their context when it is not global) and text.
pub fn help_rows() -> Vec<(String, &'static str)> {
    BINDINGS
        .iter()
        .map(|b| {
            let keys = b.keys_label();
            let label = match b.context {
                Global => keys,
                other => format!("{keys} ({})", other.label()),
            };
            (label, b.help)
        })
        .collect()
}

/// The bindings as a Markdown table, as the README shows them.
pub fn markdown_table() -> String {
    let mut out = String::from("| key | where | does |\n| --- | --- | --- |\n");
    for b in BINDINGS {
        let keys = b
            .keys
            .iter()
            .map(|(k, _)| format!("`{}`", k.label()))
            .collect::<Vec<_>>()
            .join(" ");
        let context = match b.context {
            Global => "anywhere",
            other => other.label(),
        };
        out.push_str(&format!("| {keys} | {context} | {} |\n", b.help));
    }
    out
}
