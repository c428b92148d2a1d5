//! Token prices and cost: a small built-in table (`assets/prices.toml`),
//! extended or overridden by `[prices]` in the config file. Invariant: a
//! cost is shown only when the model's price is known; otherwise none.
//! Every prompt token is billed exactly once: at the input price, the
//! cache-read price or the cache-write price (see [`crate::chat::Usage`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::chat::Usage;

/// USD per million tokens.
#[derive(schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// A prompt token.
    pub input: f64,
    /// An output token.
    pub output: f64,
    /// Reading a cached prompt token; absent: a tenth of `input`
    /// (Anthropic's rule).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Writing a prompt token to the cache; absent: 1.25 × `input`
    /// (Anthropic's five-minute cache).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price with the default cache prices.
    pub const fn new(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_read: None,
            cache_write: None,
        }
    }

    /// USD per million cached prompt tokens read.
    pub fn cache_read(&self) -> f64 {
        self.cache_read.unwrap_or(self.input * 0.1)
    }

    /// USD per million prompt tokens written to the cache.
    pub fn cache_write(&self) -> f64 {
        self.cache_write.unwrap_or(self.input * 1.25)
    }
}

const BUILT_IN: &str = include_str!("../assets/prices.toml");

#[derive(Deserialize)]
struct Table {
    models: BTreeMap<String, Price>,
}

/// The price of `model`: the config's entries first, then the built-in table;
/// a dated model name (`claude-sonnet-4-5-20250929`) matches its base name.
pub fn price_of(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    // `claude-sonnet-4-5-20250929` and `…-latest` are that model; `gpt-4.1-nano` is not `gpt-4.1`.
    let dated = |name: &str| {
        model
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|rest| {
                rest == "latest"
                    || (!rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '-'))
            })
    };
    let lookup = |table: &BTreeMap<String, Price>| {
        table
            .get(model)
            .copied()
            .or_else(|| table.iter().find(|(name, _)| dated(name)).map(|(_, p)| *p))
    };
    lookup(overrides).or_else(|| lookup(built_in()))
}

/// The built-in table, read once.
fn built_in() -> &'static BTreeMap<String, Price> {
    static TABLE: std::sync::OnceLock<BTreeMap<String, Price>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str::<Table>(BUILT_IN)
            .map(|t| t.models)
            .unwrap_or_default()
    })
}

/// The cost in USD of `usage` at `price`: full-price input, cache reads,
/// cache writes and output, each at its own price.
pub fn cost(price: Price, usage: &Usage) -> f64 {
    (usage.input_tokens as f64 * price.input
        + usage.cache_read_tokens as f64 * price.cache_read()
        + usage.cache_write_tokens as f64 * price.cache_write()
        + usage.output_tokens as f64 * price.output)
        / 1_000_000.0
}

/// `$0.0123`, or `$1.23` from a dollar up.
pub fn format_cost(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_table_parses_and_matches_dated_names() {
        let none = BTreeMap::new();
        let p = price_of("claude-sonnet-4-5", &none).unwrap();
        assert_eq!(
            p,
            Price {
                input: 3.0,
                output: 15.0,
                cache_read: Some(0.3),
                cache_write: Some(3.75),
            }
        );
        let mini = price_of("gpt-4o-mini", &none).unwrap();
        assert_eq!((mini.cache_read(), mini.cache_write()), (0.075, 0.15));
        assert_eq!(price_of("claude-sonnet-4-5-20250929", &none), Some(p));
        assert_eq!(price_of("my-local-model", &none), None);
        assert_eq!(
            price_of("gpt-4.1-nano", &none),
            None,
            "not priced as gpt-4.1"
        );
        assert_eq!(
            price_of("gpt-4o-2024-08-06", &none),
            price_of("gpt-4o", &none)
        );
        let mut mine = BTreeMap::new();
        mine.insert("my-local-model".to_string(), Price::new(0.0, 0.0));
        assert_eq!(
            price_of("my-local-model", &mine),
            Some(Price::new(0.0, 0.0))
        );
    }

    #[test]
    fn cost_is_per_million_tokens() {
        let p = Price::new(3.0, 15.0);
        assert!((cost(p, &Usage::uncached(1_000_000, 100_000)) - 4.5).abs() < 1e-9);
        assert_eq!(format_cost(0.01234), "$0.0123");
        assert_eq!(format_cost(4.5), "$4.50");
    }

    #[test]
    fn cache_reads_and_writes_have_their_own_prices() {
        let usage = Usage {
            input_tokens: 100_000,
            output_tokens: 10_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 200_000,
        };
        // Defaults: reads 0.1×, writes 1.25× the input price.
        let p = Price::new(3.0, 15.0);
        let want = 0.3 + 0.3 + 0.75 + 0.15;
        assert!((cost(p, &usage) - want).abs() < 1e-9, "{}", cost(p, &usage));
        // Published figures win over the defaults (gpt-4.1: cached 0.50).
        let gpt = price_of("gpt-4.1", &BTreeMap::new()).unwrap();
        let want = 0.2 + 0.5 + 0.4 + 0.08;
        assert!(
            (cost(gpt, &usage) - want).abs() < 1e-9,
            "{}",
            cost(gpt, &usage)
        );
        // A config entry may set them too.
        let mine: Price = toml::from_str("input = 1.0\noutput = 2.0\ncache_read = 0.5").unwrap();
        assert_eq!((mine.cache_read(), mine.cache_write()), (0.5, 1.25));
    }
}
