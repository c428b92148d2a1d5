//! The seam's published schema (`docs/src/reference/seam.schema.json`,
//! `waypoint schema`): the installed binary prints the committed file,
//! which is what the types make (tests/docs_generated.rs checks that
//! too), versioned; and what the engine and its drivers really send is
//! valid against it, checked by a JSON Schema validator (draft 2020-12).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use waypoint::events::schema::{SEAM_SCHEMA_FILE, SEAM_VERSION};
use waypoint::events::{Envelope, ThreadId};

use crate::seam::{sample_events, sample_ops};
use crate::support;

fn committed() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SEAM_SCHEMA_FILE);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A validator of the definition `name` of the seam's schema (the whole
/// document, so its references resolve).
fn validator(name: &str) -> jsonschema::Validator {
    let mut schema = committed();
    schema["$ref"] = json!(format!("#/$defs/{name}"));
    jsonschema::draft202012::new(&schema).unwrap()
}

fn assert_valid(validator: &jsonschema::Validator, instance: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{instance}: {errors:#?}");
}

#[test]
fn waypoint_schema_prints_the_committed_versioned_schema() {
    let home = support::sandbox::outside_hidden("schema-home-");
    // Before any setting is read: a broken config file does not matter.
    std::fs::write(home.path().join("config.toml"), "model = [").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .arg("schema")
        .env_clear()
        .env("HOME", home.path())
        .env("WAYPOINT_CONFIG", home.path().join("config.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, committed());
    assert_eq!(
        printed,
        serde_json::from_str::<Value>(&waypoint::headless::schema_text()).unwrap()
    );
    assert_eq!(
        printed["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(printed["x-waypoint-seam-version"], json!(SEAM_VERSION));
    assert_eq!(printed["$id"], format!("urn:waypoint:seam:{SEAM_VERSION}"));
    assert!(printed["title"].is_string());
    for name in ["Op", "Envelope", "ResultLine"] {
        assert!(printed["$defs"][name].is_object(), "no {name}");
    }
    // A schema a validator takes.
    jsonschema::draft202012::meta::validate(&printed).unwrap();
}

#[test]
fn every_sample_op_is_valid_against_the_schema_and_a_wrong_one_is_not() {
    let op = validator("Op");
    for sample in sample_ops() {
        assert_valid(&op, &serde_json::to_value(&sample).unwrap());
    }
    // As a driver writes them by hand (fields the engine defaults left out).
    for line in [
        json!({"op": "submit", "text": "Fix the bug"}),
        json!({"op": "approve", "id": "toolu_1", "decision": {"decision": "once"}}),
        json!({"op": "approve", "id": "toolu_1", "decision": {"decision": "refuse"}}),
        json!({"op": "approve_plan"}),
        json!({"op": "interrupt"}),
        json!({"op": "quit"}),
    ] {
        assert_valid(&op, &line);
    }
    for wrong in [
        json!({"op": "fly"}),
        json!({"op": "submit"}),
        json!({"op": "submit", "text": 3}),
        json!({"op": "approve", "id": "toolu_1", "decision": {"decision": "maybe"}}),
        json!({"text": "no op"}),
    ] {
        assert!(!op.is_valid(&wrong), "{wrong} was taken");
    }
}

#[test]
fn every_sample_event_in_its_envelope_and_a_result_line_are_valid() {
    let envelope = validator("Envelope");
    for event in sample_events() {
        for sample in [
            Envelope::root(3, event.clone()),
            Envelope {
                thread: ThreadId(2),
                parent_call: Some("toolu_9".into()),
                turn: 1,
                event,
            },
        ] {
            assert_valid(&envelope, &serde_json::to_value(&sample).unwrap());
        }
    }
    assert!(!envelope.is_valid(&json!({"turn": 1, "type": "no_such_event"})));
    let result = waypoint::headless::ResultLine {
        exit_reason: waypoint::headless::Outcome::OpenItems,
        exit_code: 4,
        session_id: Some("3f2a".into()),
        plan: waypoint::headless::PlanProgress {
            completed: 1,
            total: 2,
        },
        agreement: None,
        goal: None,
        usage: Default::default(),
        cost_usd: Some(0.25),
        duration_ms: 1200,
    };
    assert_valid(
        &validator("ResultLine"),
        &serde_json::to_value(&result).unwrap(),
    );
}
