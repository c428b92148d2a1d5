//! Reading an [`Envelope`] in one pass. serde's derived reader for a
//! flattened field buffers the whole map before the event's own tag buffers
//! it again; here the address keys are taken out as the map streams by and
//! everything else goes straight to the event's reader, so an envelope
//! costs what its event costs. Invariant: reads exactly what the derived
//! reader read (address keys anywhere in the map, each defaulted when
//! absent); `tests/seam.rs` round-trips every event through it.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StrDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, de};

use super::{Envelope, Event, ThreadId};

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event with its address")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Envelope, A::Error> {
        let mut address = Address::default();
        let event = Event::deserialize(MapAccessDeserializer::new(WithoutAddress {
            map,
            address: &mut address,
        }))?;
        Ok(Envelope {
            thread: address.thread.unwrap_or_default(),
            parent_call: address.parent_call.unwrap_or_default(),
            turn: address.turn.unwrap_or_default(),
            event,
        })
    }
}

#[derive(Default)]
struct Address {
    thread: Option<ThreadId>,
    parent_call: Option<Option<String>>,
    turn: Option<u32>,
}

/// The envelope's map with the address keys taken out (into `address`).
struct WithoutAddress<'a, A> {
    map: A,
    address: &'a mut Address,
}

fn once<T, E: de::Error>(slot: &mut Option<T>, value: T, name: &'static str) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(E::duplicate_field(name));
    }
    Ok(())
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutAddress<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.map.next_key::<Key>()? else {
                return Ok(None);
            };
            match &*key {
                "thread" => once(&mut self.address.thread, self.map.next_value()?, "thread")?,
                "parent_call" => once(
                    &mut self.address.parent_call,
                    self.map.next_value()?,
                    "parent_call",
                )?,
                "turn" => once(&mut self.address.turn, self.map.next_value()?, "turn")?,
                _ => {
                    return match key {
                        Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                        Cow::Owned(key) => seed.deserialize(StrDeserializer::new(&key)),
                    }
                    .map(Some);
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A map key, borrowed from the input when it can be.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde's derived reader (a flattened event) reads.
    #[derive(Deserialize, PartialEq, Debug)]
    struct Derived {
        #[serde(default)]
        thread: ThreadId,
        #[serde(default)]
        parent_call: Option<String>,
        #[serde(default)]
        turn: u32,
        #[serde(flatten)]
        event: Event,
    }

    fn both(text: &str) -> (Result<Envelope, String>, Result<Envelope, String>) {
        let ours = serde_json::from_str::<Envelope>(text).map_err(|e| e.to_string());
        let derived = serde_json::from_str::<Derived>(text)
            .map(|d| Envelope {
                thread: d.thread,
                parent_call: d.parent_call,
                turn: d.turn,
                event: d.event,
            })
            .map_err(|e| e.to_string());
        (ours, derived)
    }

    #[test]
    fn reads_what_the_derived_reader_reads_in_any_key_order() {
        for text in [
            r#"{"type":"turn_started","resumed":false}"#,
            r#"{"turn":3,"type":"turn_started","resumed":true}"#,
            r#"{"type":"turn_started","thread":2,"resumed":true,"parent_call":"c1","turn":4}"#,
            r#"{"resumed":true,"turn":4,"type":"turn_started","parent_call":null}"#,
            r#"{"t\u0079pe":"turn_started","resumed":false,"tu\u0072n":9}"#,
        ] {
            let (ours, derived) = both(text);
            assert!(ours.is_ok(), "{text}: {ours:?}");
            assert_eq!(ours, derived, "{text}");
        }
        let (ours, _) = both(
            r#"{"thread":2,"parent_call":"c1","turn":4,"type":"turn_started","resumed":true}"#,
        );
        let ours = ours.unwrap();
        assert_eq!(
            (ours.thread, ours.parent_call.as_deref(), ours.turn),
            (ThreadId(2), Some("c1"), 4)
        );
    }

    #[test]
    fn refuses_what_the_derived_reader_refuses() {
        for text in [
            r#"{"turn":3}"#,
            r#"{"turn":"three","type":"turn_started","resumed":true}"#,
            r#"{"type":"no_such_event"}"#,
            r#"{"type":"turn_started"}"#,
            r#"[1,2]"#,
            r#"{"type":"turn_started","resumed":false"#,
        ] {
            let (ours, derived) = both(text);
            assert!(
                ours.is_err() && derived.is_err(),
                "{text}: {ours:?} / {derived:?}"
            );
        }
        let (ours, _) = both(r#"{"turn":3,"turn":4,"type":"turn_started","resumed":true}"#);
        assert!(ours.unwrap_err().contains("duplicate field `turn`"));
    }
}
