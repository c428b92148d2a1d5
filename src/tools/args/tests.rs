#![allow(clippy::unwrap_used, clippy::expect_used)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Invalid, parse, schema};
use crate::events::{Failure, ToolOutcome};
use crate::tools::test_support::Fixture;
use crate::tools::{Target, ToolRegistry, run_workspace_tool};

/// Arguments of every kind a tool has.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Sample {
    /// The file.
    #[serde(alias = "file_path")]
    path: String,
    count: Option<u64>,
    shift: Option<i64>,
    ratio: Option<f64>,
    flag: Option<bool>,
}

fn sample(input: Value) -> Result<Sample, Invalid> {
    parse::<Sample>(&input)
}

#[test]
fn numbers_and_booleans_sent_as_strings_are_read_as_such() {
    let read = sample(
        json!({"path": "a", "count": "10", "shift": " -3 ", "ratio": "0.5", "flag": "TRUE"}),
    )
    .unwrap();
    assert_eq!(
        read,
        Sample {
            path: "a".into(),
            count: Some(10),
            shift: Some(-3),
            ratio: Some(0.5),
            flag: Some(true),
        }
    );
    // Null is an optional field left out.
    assert_eq!(
        sample(json!({"path": "a", "count": null})).unwrap().count,
        None
    );
}

#[test]
fn a_near_miss_name_is_an_alias_and_unknown_fields_are_let_be() {
    let read = sample(json!({"file_path": "src/a.rs", "extra": [1]})).unwrap();
    assert_eq!(read.path, "src/a.rs");
    // Both names at once is one field given twice.
    let both = sample(json!({"path": "a", "file_path": "b"})).unwrap_err();
    assert_eq!(
        both.to_string(),
        "the arguments do not fit the schema: duplicate field `path`"
    );
}

#[test]
fn what_does_not_fit_is_named() {
    let cases = [
        (json!({}), "missing required argument `path`"),
        (json!({"path": 3}), "`path` must be a string, got a number"),
        (json!({"path": null}), "`path` must be a string, got null"),
        (
            json!({"path": "a", "count": "ten"}),
            "`count` must be a non-negative integer, got a string",
        ),
        (
            json!({"path": "a", "count": -1}),
            "`count` must be a non-negative integer, got a number",
        ),
        (
            json!({"path": "a", "shift": 1.5}),
            "`shift` must be an integer, got a number",
        ),
        (
            json!({"path": "a", "ratio": "half"}),
            "`ratio` must be a number, got a string",
        ),
        (
            json!({"path": "a", "flag": "yes"}),
            "`flag` must be true or false, got a string",
        ),
        (json!("a"), "the input must be a JSON object, got a string"),
    ];
    for (input, want) in cases {
        assert_eq!(
            sample(input.clone()).unwrap_err().to_string(),
            want,
            "{input}"
        );
    }
    assert_eq!(
        sample(json!({})).unwrap_err(),
        Invalid::Missing("path".into())
    );
}

#[test]
fn the_schema_is_a_plain_object_schema_with_descriptions() {
    assert_eq!(
        schema::<Sample>(),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file."},
                "count": {"type": "integer", "minimum": 0},
                "shift": {"type": "integer"},
                "ratio": {"type": "number", "format": "double"},
                "flag": {"type": "boolean"}
            },
            "required": ["path"]
        })
    );
}

/// Every `$ref`, `$defs` or `null` type in `schema`, by where it is.
fn not_plain(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if matches!(key.as_str(), "$ref" | "$defs" | "definitions" | "$schema") {
                    out.push(format!("{at}/{key}"));
                }
                if key == "type" && value.is_array() {
                    out.push(format!("{at}/type"));
                }
                not_plain(value, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| not_plain(v, at, out)),
        _ => {}
    }
}

#[test]
fn every_standard_tools_schema_is_an_object_with_its_required_fields() {
    let required: &[(&str, &[&str])] = &[
        ("todo_write", &["todos"]),
        ("todo_read", &[]),
        ("bash", &["command"]),
        ("read_file", &["path"]),
        ("write_file", &["path", "content"]),
        ("edit_file", &["path", "old_text", "new_text"]),
        ("glob", &["pattern"]),
        ("grep", &["pattern"]),
        ("web_fetch", &["url"]),
        ("job_output", &["id"]),
        ("job_kill", &["id"]),
        ("task", &["description", "prompt"]),
        ("skill", &["name"]),
    ];
    let mut defs = ToolRegistry::standard().definitions();
    defs.push(crate::tools::Tool::spec(&crate::tools::skill::SkillTool).definition());
    assert_eq!(defs.len(), required.len());
    for (def, (name, fields)) in defs.iter().zip(required) {
        assert_eq!(def.name, *name);
        let schema = &def.input_schema;
        assert_eq!(schema["type"], "object", "{name}");
        assert!(schema["properties"].is_object(), "{name}");
        let listed: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(listed, *fields, "{name}");
        for field in *fields {
            assert!(schema["properties"][field].is_object(), "{name}.{field}");
        }
        let mut found = Vec::new();
        not_plain(schema, name, &mut found);
        assert!(found.is_empty(), "{found:?}");
    }
    // The plan's items and the enums keep their shape.
    let todo = &defs[0].input_schema["properties"]["todos"];
    assert_eq!(todo["type"], "array");
    assert_eq!(
        todo["items"]["required"],
        json!(["content", "status", "activeForm"])
    );
    assert_eq!(
        todo["items"]["properties"]["status"]["enum"],
        json!(["pending", "in_progress", "completed"])
    );
    let grep = &defs[7].input_schema["properties"];
    assert_eq!(grep["-A"]["type"], "integer");
    assert_eq!(
        grep["output_mode"]["enum"],
        json!(["files_with_matches", "content", "count"])
    );
}

#[test]
fn a_target_is_read_through_aliases_from_the_calls_own_input() {
    let r = ToolRegistry::standard();
    let bash = json!({"cmd": "rm -rf /"});
    assert_eq!(r.target("bash", &bash), Target::Command("rm -rf /"));
    let edit = json!({"file_path": "a.rs", "old_string": "a", "new_string": "b"});
    assert_eq!(r.target("edit_file", &edit), Target::File("a.rs"));
    assert_eq!(r.summarize("edit_file", &edit).line, "a.rs");
    let read = json!({"file_path": "src/lib.rs", "offset": "3"});
    assert_eq!(r.target("read_file", &read), Target::Read("src/lib.rs"));
    assert_eq!(
        r.target("grep", &json!({"pattern": "x"})),
        Target::Read(".")
    );
    // Input that does not read never runs: nothing to judge.
    assert_eq!(r.target("bash", &json!({"command": 1})), Target::Nothing);
}

#[tokio::test]
async fn a_call_that_does_not_read_is_an_invalid_input_result() {
    let f = Fixture::new();
    f.put("a.txt", "one\ntwo\nthree\n");
    let out = run_workspace_tool("read_file", &json!({"path": 7}), &f.env()).await;
    assert_eq!(out.content, "Error: `path` must be a string, got a number");
    assert_eq!(
        out.outcome,
        ToolOutcome::Failed {
            failure: Failure::InvalidInput
        }
    );
    // What models send: a near-miss name, a number in a string.
    let out = run_workspace_tool(
        "read_file",
        &json!({"file_path": "a.txt", "offset": "2", "limit": "1"}),
        &f.env(),
    )
    .await;
    assert!(!out.is_error(), "{}", out.content);
    assert!(out.content.contains("two"), "{}", out.content);
    assert!(!out.content.contains("one"), "{}", out.content);
    let out = run_workspace_tool(
        "edit_file",
        &json!({"file_path": "a.txt", "old_string": "three", "new_string": "3", "replace_all": "true"}),
        &f.env(),
    )
    .await;
    assert!(!out.is_error(), "{}", out.content);
    assert_eq!(f.get("a.txt"), "one\ntwo\n3\n");
    // Arguments sent as a JSON string are decoded where the reply is read.
    let sent = crate::json::arguments(r#""{\"path\": \"a.txt\", \"limit\": \"1\"}""#).unwrap();
    let out = run_workspace_tool("read_file", &sent, &f.env()).await;
    assert!(out.content.contains("one"), "{}", out.content);
}
