//! Typed tool arguments: each built-in tool reads its input into one
//! `Args` struct (serde), and the JSON schema the model sees is made from
//! that struct (schemars; a field's doc comment is its description).
//! [`TypedTool`] is how such a tool is written; the [`Tool`] it becomes
//! reads the input once per use, here. The reading is tolerant of what
//! models send: a number or a boolean written as a string (`"10"`,
//! `"true"`) is taken as one, and a field's near-miss names are
//! `#[serde(alias)]`es (`file_path` for `path`). Arguments written as a
//! JSON string holding the object are decoded where the reply is read
//! ([`crate::json::arguments`]), so every reader of a call sees the object.
//!
//! Invariants: input that does not fit is one uniform error naming the
//! field and what was wrong ([`Invalid`]); a call's target is borrowed
//! from its own input (found again by value, [`held`]), so the approval
//! gate sees what the run will use, aliases included; nothing panics.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Failure, Target, Tool, ToolCtx, ToolOutput, ToolSpec, ToolSummary};
use crate::json::json_type;

/// A tool whose input is read into [`TypedTool::Args`] before it runs;
/// every such type is a [`Tool`].
pub trait TypedTool: Send + Sync {
    /// Its arguments; their schema is the tool's.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// A call may run beside the reply's other calls that may.
    const PARALLEL: bool = false;
    /// Its spec, given the schema made from [`TypedTool::Args`].
    fn spec_for(&self, schema: Value) -> ToolSpec;
    /// What a call acts on; its strings come from `input` ([`held`]).
    fn target_of<'v>(&self, _args: &Self::Args, _input: &'v Value) -> Target<'v> {
        Target::Nothing
    }
    /// How a call is shown; `None` when its input does not read.
    fn summary_of(&self, args: Option<&Self::Args>) -> ToolSummary;
    /// The result of a call whose input does not read.
    fn invalid(&self, why: Invalid) -> ToolOutput {
        why.into_output()
    }
    /// Runs a call.
    fn call<'a>(&'a self, args: Self::Args, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput>;
}

impl<T: TypedTool> Tool for T {
    fn spec(&self) -> ToolSpec {
        self.spec_for(schema::<T::Args>())
    }
    fn target<'v>(&self, input: &'v Value) -> Target<'v> {
        // Input that does not read never runs: nothing to judge.
        parse::<T::Args>(input).map_or(Target::Nothing, |args| self.target_of(&args, input))
    }
    fn summarize(&self, input: &Value) -> ToolSummary {
        self.summary_of(parse::<T::Args>(input).ok().as_ref())
    }
    fn parallel(&self, _input: &Value) -> bool {
        T::PARALLEL
    }
    fn run<'a>(&'a self, input: &'a Value, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        match parse::<T::Args>(input) {
            Ok(args) => self.call(args, ctx),
            Err(why) => {
                let out = self.invalid(why);
                Box::pin(async move { out })
            }
        }
    }
}

/// Why a call's input does not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// A required field is not there.
    Missing(String),
    /// Anything else, in words naming the field.
    Wrong(String),
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::Missing(field) => write!(f, "missing required argument `{field}`"),
            Invalid::Wrong(why) => f.write_str(why),
        }
    }
}

impl Invalid {
    /// The error result the model reads (`Error: …`).
    pub fn into_output(self) -> ToolOutput {
        ToolOutput::failed(Failure::InvalidInput, self)
    }
}

/// Reads a call's `input` into `A`: a JSON object whose fields fit `A`'s
/// schema, numbers and booleans sent as strings taken as such.
pub fn parse<A: DeserializeOwned + JsonSchema + 'static>(input: &Value) -> Result<A, Invalid> {
    let Value::Object(fields) = input else {
        return Err(Invalid::Wrong(format!(
            "the input must be a JSON object, got {}",
            json_type(input)
        )));
    };
    let schema = generated::<A>();
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut read = Map::with_capacity(fields.len());
    for (key, value) in fields {
        let value = match properties.and_then(|p| p.get(key)) {
            Some(property) => checked(key, value, property)?,
            // Unknown fields are let be; an alias is serde's to read.
            None => value.clone(),
        };
        read.insert(key.clone(), value);
    }
    serde_json::from_value(Value::Object(read)).map_err(|e| {
        let text = e.to_string();
        match text
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            Some(field) => Invalid::Missing(field.to_string()),
            None => Invalid::Wrong(format!("the arguments do not fit the schema: {text}")),
        }
    })
}

/// `value` of the field `key`, as its schema `property` wants it: as it
/// is, or a number or boolean read from a string; a scalar of another
/// type is an error. Arrays and objects are serde's to read.
fn checked(key: &str, value: &Value, property: &Value) -> Result<Value, Invalid> {
    let (kind, nullable) = match property.get("type") {
        Some(Value::String(kind)) => (kind.as_str(), false),
        Some(Value::Array(kinds)) => {
            let named: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            match named[..] {
                [kind, "null"] | ["null", kind] => (kind, true),
                _ => return Ok(value.clone()),
            }
        }
        _ => return Ok(value.clone()),
    };
    if !matches!(kind, "string" | "boolean" | "integer" | "number")
        || fits(kind, value, property)
        || (nullable && value.is_null())
    {
        return Ok(value.clone());
    }
    if let Value::String(text) = value
        && let Some(read) = from_text(kind, text.trim())
        && fits(kind, &read, property)
    {
        return Ok(read);
    }
    let wanted = match kind {
        "string" => "a string",
        "boolean" => "true or false",
        "integer" if non_negative(property) => "a non-negative integer",
        "integer" => "an integer",
        _ => "a number",
    };
    Err(Invalid::Wrong(format!(
        "`{key}` must be {wanted}, got {}",
        json_type(value)
    )))
}

/// Whether `value` is of the scalar `kind` (an integer within the
/// schema's minimum).
fn fits(kind: &str, value: &Value, property: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" if non_negative(property) => value.is_u64(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => value.is_number(),
    }
}

fn non_negative(property: &Value) -> bool {
    property
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|min| min >= 0.0)
}

/// A number or boolean a model wrote as a string.
fn from_text(kind: &str, text: &str) -> Option<Value> {
    match kind {
        "boolean" if text.eq_ignore_ascii_case("true") => Some(Value::Bool(true)),
        "boolean" if text.eq_ignore_ascii_case("false") => Some(Value::Bool(false)),
        "integer" => text
            .parse::<u64>()
            .map(Value::from)
            .or_else(|_| text.parse::<i64>().map(Value::from))
            .ok(),
        "number" => serde_json::from_str::<serde_json::Number>(text)
            .ok()
            .map(Value::Number),
        _ => None,
    }
}

/// `A`'s schema as schemars makes it: inline, with `null` in an
/// optional field's type. Made once per type (every use of a call reads
/// its input with it).
fn generated<A: JsonSchema + 'static>() -> Arc<Value> {
    static MADE: OnceLock<Mutex<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    made.entry(TypeId::of::<A>())
        .or_insert_with(|| {
            let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
                s.inline_subschemas = true;
                s.meta_schema = None;
            });
            let schema = settings.into_generator().into_root_schema_for::<A>();
            Arc::new(serde_json::to_value(schema).unwrap_or_default())
        })
        .clone()
}

/// The schema of `A` as providers get it: an object schema with its
/// `properties` and `required`, subschemas inline, an optional field
/// typed as what it holds (not also `null`: it is simply left out), no
/// `$schema`, title or non-standard `format`.
pub fn schema<A: JsonSchema + 'static>() -> Value {
    let mut schema = Value::clone(&generated::<A>());
    if let Value::Object(top) = &mut schema {
        for key in ["$schema", "title", "description"] {
            top.remove(key);
        }
        top.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    plain(&mut schema);
    schema
}

/// Drops `null` from optional types and schemars' number formats
/// (`uint64`) everywhere in `schema`.
fn plain(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let single = match map.get("type") {
                Some(Value::Array(kinds)) => {
                    let real: Vec<&Value> = kinds.iter().filter(|k| *k != "null").collect();
                    match real[..] {
                        [kind] => Some(kind.clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(kind) = single {
                map.insert("type".into(), kind);
            }
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"))
            {
                map.remove("format");
            }
            map.values_mut().for_each(plain);
        }
        Value::Array(items) => items.iter_mut().for_each(plain),
        _ => {}
    }
}

/// `text` as the call's `input` holds it, for a [`Target`] borrowed from
/// the input: a string field's value, under its name or an alias, is one
/// of the input's own strings. `""` for a string it does not hold, which
/// a value read from the input by [`parse`] never is.
pub fn held<'v>(input: &'v Value, text: &str) -> &'v str {
    input
        .as_object()
        .into_iter()
        .flat_map(Map::values)
        .find_map(|v| v.as_str().filter(|held| *held == text))
        .unwrap_or("")
}

#[cfg(test)]
mod tests;
