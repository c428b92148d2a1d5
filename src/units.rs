//! How Waypoint writes token counts, the same in the full-screen app and in
//! headless mode. Invariant: a count never reads `1000.0k` or `1000k`.

/// `950`, `12.3k`, `4.5M`: a count to one decimal.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        // Below this, one decimal of thousands does not round up to 1000.0k.
        1_000..999_950 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `950`, `171k`, `1.2M`: a count in whole thousands.
pub fn whole_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        // Below this, whole thousands do not round up to 1000k.
        1_000..999_500 => format!("{}k", (n + 500) / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `512 B`, `2.1 KB`, `1.5 MB`: a size in bytes.
pub fn bytes(n: u64) -> String {
    match n {
        0..1_024 => format!("{n} B"),
        1_024..1_048_576 => format!("{:.1} KB", n as f64 / 1024.0),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
}

/// `45 min`, `2 h 10 min`, `30 s`.
pub fn duration(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", (s + 30) / 60),
        s => match (s % 3600 + 30) / 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
    }
}

/// `1 item`, `3 items`: a count and its noun, made plural unless it is one.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What a compaction did: `context compacted: 171k → 14k tokens`, and
/// `(old tool outputs dropped)` when summarising failed.
pub fn compaction(before: u64, after: u64, fallback: bool) -> String {
    let mut text = format!(
        "context compacted: {} → {} tokens",
        whole_tokens(before),
        whole_tokens(after)
    );
    if fallback {
        text.push_str(" (old tool outputs dropped)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular() {
        assert_eq!(plural(1, "item"), "1 item");
        assert_eq!(plural(0, "item"), "0 items");
        assert_eq!(plural(3, "time"), "3 times");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(2150), "2.1 KB");
    }

    #[test]
    fn counts_never_read_1000k() {
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(999_949), "999.9k");
        assert_eq!(tokens(999_950), "1.0M");
        assert_eq!(tokens(4_500_000), "4.5M");
        assert_eq!(whole_tokens(171_400), "171k");
        assert_eq!(whole_tokens(999_499), "999k");
        assert_eq!(whole_tokens(999_500), "1.0M");
        assert_eq!(
            compaction(171_000, 14_000, true),
            "context compacted: 171k → 14k tokens (old tool outputs dropped)"
        );
    }
}
