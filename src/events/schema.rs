//! The seam's reference pages, made from its types' JSON schemas
//! (schemars): `docs/src/reference/events.md` (every [`Event`] in its
//! [`Envelope`], as `--output-format jsonl` prints them) and
//! `docs/src/dev/seam-schema.md` (every [`Op`]); and the machine-readable
//! schema of both, [`seam_schema`] (`docs/src/reference/seam.schema.json`,
//! `waypoint schema`). A variant or field added with its doc comment is on
//! the pages; `tests/docs_generated.rs` checks the committed files against
//! the types.

use serde_json::{Map, Value, json};

use super::{Envelope, Event, Op};

/// The seam's version, in its schema as `x-waypoint-seam-version`: bumped
/// when an op, an event, a variant or a field is removed or changes
/// meaning (a program written against the old schema may now be wrong);
/// an addition (a new op, event, field or value) leaves it, so consumers
/// ignore what they do not know.
pub const SEAM_VERSION: u32 = 1;

/// Where the book serves the seam's schema (from the repository's root).
pub const SEAM_SCHEMA_FILE: &str = "docs/src/reference/seam.schema.json";

/// The seam as one JSON Schema document (draft 2020-12): under `$defs`,
/// `Op` (a line a driver sends), `Envelope` (an event in its envelope, a
/// line `--output-format jsonl` prints) and `ResultLine` (`result`: the
/// headless run's last line, given by the caller: the seam does not know
/// its drivers), with the types they hold. An op is described as the
/// engine reads it (a field it defaults may be left out), the rest as it
/// is written.
pub fn seam_schema(result: &Value) -> Value {
    let op = serde_json::to_value(schemars::schema_for!(Op)).unwrap_or_default();
    let envelope = schema_of::<Envelope>();
    let mut defs = Map::new();
    for (name, schema) in [("Op", &op), ("Envelope", &envelope), ("ResultLine", result)] {
        defs.extend(defs_of(schema));
        let mut root = schema.clone();
        if let Some(root) = root.as_object_mut() {
            for meta in ["$schema", "$defs", "title"] {
                root.remove(meta);
            }
        }
        defs.insert(name.into(), root);
    }
    // By name, so the file reads (and diffs) the same whatever the order
    // the types were reached in.
    let defs: std::collections::BTreeMap<String, Value> = defs.into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("urn:waypoint:seam:{SEAM_VERSION}"),
        "title": "Waypoint seam",
        "description": "What a program driving Waypoint sends and reads: each line of \
            `waypoint -p --input-format jsonl` is an `Op`; each line of `--output-format jsonl` \
            is an `Envelope` (an event with its address), the last a `ResultLine`. \
            `x-waypoint-seam-version` is bumped when something is removed or changes meaning, \
            not when something is added: ignore what you do not know.",
        "x-waypoint-seam-version": SEAM_VERSION,
        "$defs": defs,
    })
}

/// [`seam_schema`] as the file holds it.
pub fn seam_schema_text(result: &Value) -> String {
    let text = serde_json::to_string_pretty(&seam_schema(result)).unwrap_or_default();
    format!("{text}\n")
}

/// The JSON schema of `T` as it is written (serialised: a field left out
/// only when it is skipped, not merely optional to read).
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::default()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or_default()
}

/// The events page: the envelope's fields, each event, the `result` line
/// (`result`: the headless `ResultLine`'s schema, given by the
/// caller: the seam does not know its drivers) and the types they hold.
pub fn events_page(result: &Value) -> String {
    let event = schema_of::<Event>();
    let mut defs = defs_of(&event);
    defs.extend(defs_of(result));
    let mut out = String::from(
        "# Headless events\n\n\
         `waypoint -p TASK --output-format jsonl` prints one JSON object per line: each event \
         of the engine in its envelope, as it happens, then one `result` line. An event's \
         `type` says which it is; its fields sit beside the envelope's. Consumers should \
         ignore fields and `type`s they do not know: new ones come without notice. How the \
         engine makes them: [the seam](../dev/seam.md).\n\n\
         ## The envelope\n\n\
         Every line but the last has these beside the event's own fields \
         (`{\"thread\":1,\"parent_call\":\"toolu_1\",\"turn\":2,\"type\":\"text_delta\",\"text\":\"Hi\"}`).\n\n",
    );
    out.push_str(&envelope_table());
    out.push_str("\n## Events\n\n");
    out.push_str(&variants(&event, "type", &defs));
    out.push_str("## The `result` line\n\n");
    out.push_str(&describe(result, &defs));
    out.push_str(&types(&defs));
    out
}

/// The seam's page for contributors: every op a driver sends, and the
/// envelope events come out in.
pub fn seam_page() -> String {
    // What the engine reads: a field it defaults may be left out.
    let op = serde_json::to_value(schemars::schema_for!(Op)).unwrap_or_default();
    let defs = defs_of(&op);
    let mut out = String::from(
        "# Seam schema\n\n\
         The ops a driver sends the engine, as JSON (an op is plain data: it serialises), and \
         the envelope of the events it gets back. The events themselves: \
         [Headless events](../reference/events.md); what the seam is: [The seam](seam.md).\n\n\
         ## Ops\n\n\
         An op's `op` field says which it is.\n\n",
    );
    out.push_str(&variants(&op, "op", &defs));
    out.push_str("## The envelope\n\nEvery event comes in one, its fields beside the event's.\n\n");
    out.push_str(&envelope_table());
    out.push_str(&types(&defs));
    out
}

/// The envelope's own fields (the event's are flattened beside them).
fn envelope_table() -> String {
    let mut envelope = schema_of::<Envelope>();
    let defs = defs_of(&envelope);
    if let Some(props) = envelope
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        props.retain(|name, _| name != "type");
    }
    fields(&envelope, &defs, None).unwrap_or_default()
}

fn defs_of(schema: &Value) -> Map<String, Value> {
    schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Each variant of a tagged enum (`tag` names the variant) as a section:
/// its tag's value, doc comment and fields.
fn variants(schema: &Value, tag: &str, defs: &Map<String, Value>) -> String {
    let mut out = String::new();
    for variant in options(schema) {
        let name = tag_value(variant, tag).unwrap_or_default();
        out.push_str(&format!("### `{name}`\n\n"));
        out.push_str(&describe(variant, defs));
    }
    out
}

/// The options of a `oneOf` (or `anyOf`).
fn options(schema: &Value) -> Vec<&Value> {
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .collect()
}

/// The constant a variant's `tag` property takes (`"turn_started"`).
fn tag_value(variant: &Value, tag: &str) -> Option<String> {
    let tag = variant.get("properties")?.get(tag)?;
    let value = tag.get("const").or_else(|| tag.get("enum")?.get(0))?;
    value.as_str().map(str::to_string)
}

/// A schema's doc comment, then what it holds: its fields, its variants
/// or its values.
fn describe(schema: &Value, defs: &Map<String, Value>) -> String {
    let mut out = String::new();
    if let Some(about) = about(schema) {
        out.push_str(&format!("{about}\n\n"));
    }
    let tag = tag_of(schema);
    if let Some(table) = fields(schema, defs, tag.as_deref()) {
        out.push_str(&table);
        out.push('\n');
        return out;
    }
    let options = options(schema);
    if options.is_empty() {
        let kind = kind(schema, defs);
        if kind != "object" {
            out.push_str(&format!("Takes: {kind}.\n\n"));
        }
        return out;
    }
    for option in options {
        match (&tag, value_of(option)) {
            (_, Some(value)) => {
                let about = about(option).map_or(String::new(), |a| format!(": {a}"));
                out.push_str(&format!("- `{value}`{about}\n"));
            }
            (Some(tag), None) => {
                let name = tag_value(option, tag).unwrap_or_default();
                out.push_str(&format!("- `{tag}: \"{name}\"`"));
                if let Some(about) = about(option) {
                    out.push_str(&format!(": {about}"));
                }
                out.push('\n');
                if let Some(table) = fields(option, defs, Some(tag)) {
                    out.push('\n');
                    for line in table.lines() {
                        out.push_str(&format!("  {line}\n"));
                    }
                    out.push('\n');
                }
            }
            (None, None) => out.push_str(&format!("- {}\n", kind(option, defs))),
        }
    }
    out.push('\n');
    out
}

/// A schema's doc comment on one line, its rustdoc links (``[`Op`]``)
/// made plain code.
fn about(schema: &Value) -> Option<String> {
    let text = schema.get("description")?.as_str()?;
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("[`") {
        let Some(end) = rest[at..].find("`]") else {
            break;
        };
        let close = at + end + 2;
        out.push_str(&rest[..at]);
        if rest[close..].starts_with('(') {
            out.push_str(&rest[at..close]);
        } else {
            out.push_str(&rest[at + 1..close - 1]);
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    Some(out)
}

/// The value a unit variant or a constant stands for (`"end_turn"`).
fn value_of(schema: &Value) -> Option<String> {
    if let Some(value) = schema.get("const") {
        return value.as_str().map(str::to_string);
    }
    let values = schema.get("enum")?.as_array()?;
    let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    Some(values.join("`, `"))
}

/// The field every option of a tagged enum has as a constant (`kind`).
fn tag_of(schema: &Value) -> Option<String> {
    let options = options(schema);
    let first = options.first()?.get("properties")?.as_object()?;
    first
        .iter()
        .find(|(name, prop)| {
            prop.get("const").is_some() && options.iter().all(|o| tag_value(o, name).is_some())
        })
        .map(|(name, _)| name.clone())
}

/// An object's fields as a table (the tag left out); `None` for a schema
/// that is no object, and "No fields." for one without.
fn fields(schema: &Value, defs: &Map<String, Value>, tag: Option<&str>) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows: Vec<String> = props
        .iter()
        .filter(|(name, prop)| Some(name.as_str()) != tag && prop.get("const").is_none())
        .map(|(name, prop)| {
            let mut kind = kind(prop, defs);
            if !required.contains(&name.as_str()) {
                kind.push_str(" (may be left out)");
            }
            let about = about(prop).unwrap_or_default();
            format!("| `{name}` | {} | {} |\n", cell(&kind), cell(&about))
        })
        .collect();
    if rows.is_empty() {
        return Some("No fields.\n".into());
    }
    Some(format!(
        "| Field | Type | What it is |\n|---|---|---|\n{}",
        rows.concat()
    ))
}

/// Text fit for a table's cell: its `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A defined type is named (and linked to its section) unless it is a
/// plain number or string under another name (`ThreadId`).
fn is_named(def: &Value) -> bool {
    def.get("properties").is_some()
        || def.get("oneOf").is_some()
        || def.get("anyOf").is_some()
        || def.get("enum").is_some()
}

/// What a schema takes, in a few words: a type's name links to its section.
fn kind(schema: &Value, defs: &Map<String, Value>) -> String {
    if let Some(name) = reference(schema) {
        return match defs.get(name) {
            _ if name == "Envelope" => "[`Envelope`](#the-envelope)".into(),
            Some(def) if !is_named(def) => kind(def, defs),
            _ => format!("[`{name}`](#{})", name.to_lowercase()),
        };
    }
    if let Some(options) = schema.get("anyOf").and_then(Value::as_array) {
        let kinds: Vec<String> = options.iter().map(|o| kind(o, defs)).collect();
        return kinds.join(" | ");
    }
    if let Some(value) = schema.get("const") {
        return format!("`{value}`");
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let named: Vec<String> = types
        .iter()
        .map(|t| match *t {
            "array" => match schema.get("items") {
                Some(items) => format!("list of {}", kind(items, defs)),
                None => "list".into(),
            },
            "object" => match schema.get("additionalProperties") {
                Some(values) if values.is_object() => format!("map of {}", kind(values, defs)),
                _ => "object".into(),
            },
            other => other.into(),
        })
        .collect();
    if named.is_empty() {
        return "any JSON".into();
    }
    named.join(" | ")
}

fn reference(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// The named types the page refers to (those reached through others'
/// too), each with its section, in the order of their names.
fn types(defs: &Map<String, Value>) -> String {
    let mut named: Vec<&String> = defs
        .iter()
        .filter(|(_, def)| is_named(def))
        .map(|(name, _)| name)
        .filter(|name| !["Event", "Op", "Envelope"].contains(&name.as_str()))
        .collect();
    named.sort();
    if named.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Types\n\nThe types the fields above hold.\n\n");
    for name in named {
        out.push_str(&format!("### `{name}`\n\n"));
        if let Some(def) = defs.get(name) {
            out.push_str(&describe(def, defs));
        }
    }
    out
}
