//! Token prices and cost: a small built-in table (`assets/prices.toml`),
//! extended or overridden by `[prices]` in the config file. Invariant: a
//! cost is shown only when the model's price is known; otherwise none.

use std::collections::BTreeMap;

use serde::Deserialize;

/// USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
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
    lookup(overrides).or_else(|| {
        toml::from_str::<Table>(BUILT_IN)
            .ok()
            .and_then(|t| lookup(&t.models))
    })
}

/// The cost in USD of `input` and `output` tokens at `price`.
pub fn cost(price: Price, input: u64, output: u64) -> f64 {
    (input as f64 * price.input + output as f64 * price.output) / 1_000_000.0
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
                output: 15.0
            }
        );
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
        mine.insert(
            "my-local-model".to_string(),
            Price {
                input: 0.0,
                output: 0.0,
            },
        );
        assert_eq!(
            price_of("my-local-model", &mine),
            Some(Price {
                input: 0.0,
                output: 0.0
            })
        );
    }

    #[test]
    fn cost_is_per_million_tokens() {
        let p = Price {
            input: 3.0,
            output: 15.0,
        };
        assert!((cost(p, 1_000_000, 100_000) - 4.5).abs() < 1e-9);
        assert_eq!(format_cost(0.01234), "$0.0123");
        assert_eq!(format_cost(4.5), "$4.50");
    }
}
