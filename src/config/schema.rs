//! The config file's schema and reference, made from the settings types
//! (schemars): `docs/src/reference/config.schema.json` for editors (a TOML
//! language server reads it from a `#:schema` line) and
//! `docs/src/reference/config.md` for people, with each key's flag and
//! environment variables. A key added to a settings type, with its doc
//! comment, is in both, and in `waypoint config`, without another line
//! written: `tests/docs_generated.rs` checks the committed files against
//! the types (`WAYPOINT_BLESS=1 cargo test --test all docs_generated::`
//! writes them anew), and a test here that `waypoint config` names every
//! key.

use serde_json::{Map, Value};

use super::Layer;

/// Where the generated files live, from the repository's root.
pub const SCHEMA_FILE: &str = "docs/src/reference/config.schema.json";
pub const REFERENCE_FILE: &str = "docs/src/reference/config.md";

/// The JSON schema of the config file (a [`Layer`], with its profiles).
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Layer)).unwrap_or_default()
}

/// The schema as it is committed: pretty JSON and a final newline.
pub fn schema_text() -> String {
    let text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    format!("{text}\n")
}

/// One key of the file, as the reference shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// Its path: `model`, `sandbox.network`, `mcp_servers.NAME.url`.
    pub path: String,
    /// What it takes: `string`, `integer`, `"ask" | "auto"`, `list of string`.
    pub kind: String,
    /// Its doc comment.
    pub about: String,
    /// The keys inside it (a table's).
    pub children: Vec<Key>,
}

/// The file's top-level keys (alphabetical), each with the keys inside it.
pub fn keys() -> Vec<Key> {
    let schema = schema();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    properties(&schema, &defs, "")
}

/// The keys of an object schema, under `prefix`.
fn properties(schema: &Value, defs: &Map<String, Value>, prefix: &str) -> Vec<Key> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let path = format!("{prefix}{name}");
            let about = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .replace('\n', " ");
            let target = resolved(prop, defs);
            let children = match (table_of(&target, defs), &target) {
                // `[profile.NAME]` repeats the top level: not listed again.
                _ if name == "profile" => Vec::new(),
                (Some(value), _) => properties(&value, defs, &format!("{path}.NAME.")),
                (None, target) => properties(target, defs, &format!("{path}.")),
            };
            Key {
                kind: kind(prop, defs),
                path,
                about,
                children,
            }
        })
        .collect()
}

/// `schema` with a `$ref` (or an optional's `anyOf: [ref, null]`) followed.
fn resolved(schema: &Value, defs: &Map<String, Value>) -> Value {
    if let Some(name) = reference(schema) {
        return defs.get(name).cloned().unwrap_or(Value::Null);
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
        let real: Vec<&Value> = options.iter().filter(|o| !is_null(o)).collect();
        if let [one] = real[..] {
            return resolved(one, defs);
        }
    }
    schema.clone()
}

/// The value schema of a table of named entries (`mcp_servers.NAME`), when
/// `schema` is one whose values are tables.
fn table_of(schema: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let mut value = resolved(schema.get("additionalProperties")?, defs);
    // `[[hooks.EVENT]]`: a list of tables under each name.
    if let Some(items) = value.get("items") {
        value = resolved(items, defs);
    }
    value.get("properties").is_some().then_some(value)
}

fn reference(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// What a schema takes, in a few words.
fn kind(schema: &Value, defs: &Map<String, Value>) -> String {
    if let Some(name) = reference(schema) {
        return defs
            .get(name)
            .map_or_else(|| name.to_string(), |d| kind(d, defs));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let kinds: Vec<String> = options
                .iter()
                .filter(|o| !is_null(o))
                .map(|o| kind(o, defs))
                .collect();
            return kinds.join(" | ");
        }
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return values.join(" | ");
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    match types[..] {
        ["array"] => match schema.get("items") {
            Some(items) => format!("list of {}", kind(items, defs)),
            None => "list".into(),
        },
        ["object"] => match schema.get("additionalProperties") {
            Some(values) if values.is_object() => format!("table of {}", kind(values, defs)),
            _ => "table".into(),
        },
        ["number"] => "number".into(),
        _ if !types.is_empty() => types.join(" | "),
        _ => "any".into(),
    }
}

/// The reference page: every key with what it takes, its default (as an
/// empty configuration resolves it), the flag that sets it (of `flags`,
/// the command line's long flags: `--max-tokens` sets `max_tokens`), the
/// environment variables it is read from ([`super::ENV_VARS`]) and its
/// doc comment.
pub fn reference_text(flags: &[String]) -> String {
    let defaults = defaults();
    let mut out = String::from(
        "# Configuration reference\n\n\
         The file is `~/.config/waypoint/config.toml` (`waypoint config` prints the path and \
         every effective value with where it came from); a `[profile.NAME]` table takes any \
         top-level key, chosen with `--profile NAME`. A flag wins over the environment, which \
         wins over the profile, then the file; of a key's variables the first set one wins \
         (`ANTHROPIC_…` or `OPENAI_…`: the provider in use's). The JSON schema of the same keys \
         is [`config.schema.json`](config.schema.json).\n\n\
         | Key | Takes | Default | Flag | Env | What it is |\n|---|---|---|---|---|---|\n",
    );
    let mut all = Vec::new();
    fn walk<'a>(keys: &'a [Key], all: &mut Vec<&'a Key>) {
        for key in keys {
            all.push(key);
            walk(&key.children, all);
        }
    }
    let keys = keys();
    walk(&keys, &mut all);
    let code = |s: &str| format!("`{s}`");
    for key in all {
        let default = defaults
            .iter()
            .find(|(k, _)| *k == key.path)
            .map_or(String::new(), |(_, v)| code(v));
        let flag = format!("--{}", key.path.replace('_', "-"));
        let flag = if flags.contains(&flag) {
            code(&flag)
        } else {
            String::new()
        };
        let mut vars: Vec<String> = Vec::new();
        for prefix in super::env_vars::PREFIXES {
            for var in super::env_vars::env_vars(&key.path, prefix) {
                if !vars.contains(&var) {
                    vars.push(var);
                }
            }
        }
        let vars: Vec<String> = vars.iter().map(|v| code(v)).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {flag} | {} | {} |\n",
            key.path,
            key.kind.replace('|', "\\|"),
            default.replace('|', "\\|"),
            vars.join(", "),
            key.about.replace('|', "\\|"),
        ));
    }
    out
}

/// The defaults: each `key = value` that an empty configuration resolves
/// to, as `waypoint config` shows it (so the reference states the defaults
/// the resolver has, written once).
pub fn defaults() -> Vec<(String, String)> {
    let none = |_: &str| None;
    let inputs = super::Inputs {
        flags: super::Layer::default(),
        profile: None,
        env: &none,
        file: None,
    };
    let Ok(settings) = super::resolve(inputs) else {
        return Vec::new();
    };
    settings
        .describe(None)
        .lines()
        .filter_map(|l| l.strip_suffix("# default"))
        .filter_map(|l| {
            let (key, value) = l.split_once(" = ")?;
            let value = value.split("  # ").next().unwrap_or(value).trim();
            Some((key.to_string(), value.to_string()))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// What makes a key added to [`Layer`] (with its doc comment) show in
    /// all three places: the schema and the reference are made from the
    /// type (and checked by `tests/docs_generated.rs`), and `waypoint config` names every key the
    /// type has, from a line of its own or from what the file says.
    #[test]
    fn waypoint_config_names_every_key_of_the_file() {
        let none = |_: &str| None;
        let inputs = super::super::Inputs {
            flags: Layer::default(),
            profile: None,
            env: &none,
            file: None,
        };
        let shown = super::super::resolve(inputs).unwrap().describe(None);
        let properties = schema()["properties"].as_object().cloned().unwrap();
        for key in keys() {
            let named = shown.lines().any(|l| {
                l.starts_with(&format!("{} =", key.path))
                    || l.starts_with(&format!("# {}:", key.path))
            });
            assert!(
                named,
                "`waypoint config` does not name {}:\n{shown}",
                key.path
            );
            assert!(properties.contains_key(&key.path), "{}", key.path);
        }
        // What the file says is shown for a key without a line of its own.
        let file = "web_allow = [\"localhost\"]\n[task]\nmax_parallel = 2\n";
        let inputs = super::super::Inputs {
            flags: Layer::default(),
            profile: None,
            env: &none,
            file: Some(("/cfg/config.toml".into(), file.to_string())),
        };
        let shown = super::super::resolve(inputs).unwrap().describe(None);
        assert!(shown.contains("web_allow = [\"localhost\"]"), "{shown}");
        assert!(
            shown.contains("# task: set in the config file (max_parallel)"),
            "{shown}"
        );
    }

    #[test]
    fn every_key_of_the_types_is_in_the_schema_and_the_reference() {
        let keys = keys();
        let names: Vec<&str> = keys.iter().map(|k| k.path.as_str()).collect();
        for expected in [
            "model",
            "plan_file",
            "web_allow",
            "mcp_tool_share",
            "sandbox",
            "task",
            "notify_after",
        ] {
            assert!(names.contains(&expected), "{expected} missing: {names:?}");
        }
        let sandbox = keys.iter().find(|k| k.path == "sandbox").unwrap();
        let inside: Vec<&str> = sandbox.children.iter().map(|k| k.path.as_str()).collect();
        assert_eq!(
            inside,
            ["sandbox.writable", "sandbox.network", "sandbox.sockets"]
        );
        let servers = keys.iter().find(|k| k.path == "mcp_servers").unwrap();
        assert!(
            servers
                .children
                .iter()
                .any(|k| k.path == "mcp_servers.NAME.url"),
            "{servers:?}"
        );
        let reference = reference_text(&["--model".to_string()]);
        assert!(
            reference.contains("| `model` |")
                && reference.contains(
                    "| `--model` | `WAYPOINT_MODEL`, `ANTHROPIC_MODEL`, `OPENAI_MODEL` |"
                ),
            "{reference}"
        );
        let mut all = Vec::new();
        fn walk<'a>(keys: &'a [Key], all: &mut Vec<&'a Key>) {
            for key in keys {
                all.push(key);
                walk(&key.children, all);
            }
        }
        walk(&keys, &mut all);
        for key in all {
            assert!(
                reference.contains(&format!("| `{}` |", key.path)),
                "{} is not in the reference",
                key.path
            );
            assert!(!key.about.is_empty(), "{} has no doc comment", key.path);
        }
        let approval = keys.iter().find(|k| k.path == "approval").unwrap();
        assert!(approval.kind.contains("\"read-only\""), "{approval:?}");
        let defaults = defaults();
        assert!(
            defaults.contains(&("max_tokens".to_string(), "8192".to_string())),
            "{defaults:?}"
        );
    }
}
