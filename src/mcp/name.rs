//! The name a model calls an MCP tool by: `mcp__SERVER__TOOL`, as Claude
//! Code and Codex name them, so allow and deny rules written for those
//! apply unchanged. Invariant: a name has at most [`MAX`] characters, all
//! of `[A-Za-z0-9_-]` (what every provider's tool names accept), and the
//! same server and tool always give the same name.

/// The longest tool name every wire accepts (OpenAI's limit).
pub const MAX: usize = 64;

/// `mcp__{server}__{tool}`, other characters made `_`; a longer name is
/// its first part and a hash of the whole, so two long names that share
/// their start stay apart.
pub fn tool_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() <= MAX {
        return name;
    }
    let hash = format!("{:016x}", fnv1a(format!("{server}\0{tool}").as_bytes()));
    let keep = MAX - 1 - 8;
    format!("{}_{}", &name[..keep], &hash[..8])
}

/// The part of a name a rule matches: `mcp__{server}__`.
pub fn server_prefix(server: &str) -> String {
    format!("mcp__{}__", clean(server))
}

fn clean(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a, 64 bits: stable across runs and builds (the standard library's
/// hashers are not).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_clean_short_and_stable() {
        assert_eq!(
            tool_name("everything", "get-sum"),
            "mcp__everything__get-sum"
        );
        assert_eq!(tool_name("my server", "a.b/c"), "mcp__my_server__a_b_c");
        assert_eq!(server_prefix("my server"), "mcp__my_server__");
        let long = "x".repeat(80);
        let a = tool_name("github", &format!("{long}a"));
        let b = tool_name("github", &format!("{long}b"));
        assert_eq!(a.len(), MAX);
        assert_ne!(a, b);
        assert_eq!(a, tool_name("github", &format!("{long}a")));
        assert!(a.starts_with("mcp__github__xxx"));
        for name in [a, tool_name("é ü", "ツール")] {
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
        }
    }
}
