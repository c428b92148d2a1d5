//! Stream fields read straight into typed structs, as leniently as reading
//! them out of a `serde_json::Value` did: a field of another type than
//! expected (a `null`, a number where text was expected, an object where a
//! count was) reads as absent, never as a broken event. Text borrows from
//! the event's bytes when it has no escapes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A string field: `None` when absent or not a string.
pub(crate) fn str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    d.deserialize_any(Text)
}

/// A count: `None` when absent or not a non-negative integer (as
/// `Value::as_u64` reads it).
pub(crate) fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    d.deserialize_any(Count)
}

/// The first element of a list: `None` when absent, empty or not a list
/// (the other elements are read past).
pub(crate) fn first<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_any(First(std::marker::PhantomData))
}

/// Visitor methods that read past a value of the named shapes, to `None`.
macro_rules! none_for {
    (scalars) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    };
    (integers) => {
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
    (text) => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
    (list) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
    (map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
}

struct Text;

impl<'de> Visitor<'de> for Text {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value (text is kept)")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v)))
    }
    none_for!(integers);
    none_for!(scalars);
    none_for!(list);
    none_for!(map);
}

struct Count;

impl<'de> Visitor<'de> for Count {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value (a count is kept)")
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(u64::try_from(v).ok())
    }
    none_for!(text);
    none_for!(scalars);
    none_for!(list);
    none_for!(map);
}

struct First<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for First<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value (a list's first element is kept)")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let first = seq.next_element::<T>()?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first)
    }
    none_for!(text);
    none_for!(integers);
    none_for!(scalars);
    none_for!(map);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(default, borrow, deserialize_with = "str")]
        text: Option<Cow<'a, str>>,
        #[serde(default, deserialize_with = "u64")]
        count: Option<u64>,
    }

    #[test]
    fn every_shape_reads_as_value_reads_it() {
        let shapes = [
            json!(null),
            json!(true),
            json!(3),
            json!(-3),
            json!(2.5),
            json!(1e30),
            json!("plain"),
            json!("esc\"aped\n"),
            json!([1, "a", {"b": [null]}]),
            json!({"a": {"b": "c"}, "d": [1]}),
        ];
        for text in &shapes {
            for count in &shapes {
                let event = json!({"text": text, "count": count, "other": [text, count]});
                let raw = event.to_string();
                let probe: Probe<'_> = serde_json::from_str(&raw).unwrap();
                assert_eq!(probe.text.as_deref(), text.as_str(), "{raw}");
                assert_eq!(probe.count, count.as_u64(), "{raw}");
            }
        }
        let absent: Probe<'_> = serde_json::from_str("{}").unwrap();
        assert_eq!((absent.text, absent.count), (None, None));
    }

    #[test]
    fn a_list_gives_its_first_element_and_anything_else_none() {
        #[derive(Deserialize)]
        struct List {
            #[serde(default, deserialize_with = "first")]
            items: Option<u32>,
        }
        let read = |raw: &str| serde_json::from_str::<List>(raw).unwrap().items;
        assert_eq!(read(r#"{"items": [7, "x", {"y": 1}]}"#), Some(7));
        assert_eq!(read(r#"{"items": []}"#), None);
        for other in ["null", "1", "\"s\"", "{\"a\": [1]}", "true"] {
            assert_eq!(read(&format!("{{\"items\": {other}}}")), None, "{other}");
        }
        assert_eq!(read("{}"), None);
    }

    #[test]
    fn text_without_escapes_is_borrowed() {
        let raw = r#"{"text": "no escapes here"}"#;
        let probe: Probe<'_> = serde_json::from_str(raw).unwrap();
        assert!(matches!(probe.text, Some(Cow::Borrowed("no escapes here"))));
        let probe: Probe<'_> = serde_json::from_str(r#"{"text": "a\u00e9"}"#).unwrap();
        assert!(matches!(probe.text, Some(Cow::Owned(ref t)) if t == "aé"));
    }
}
