//! `Serialize` / `Deserialize` (the `serde` feature).
//!
//! Serialization writes what `JSON.stringify` writes — the crate's own
//! [`crate::json::to_json`] — so that through serde_json the typed state is
//! byte-identical to `get_state`'s JSON. Two things serde cannot express
//! are handled openly rather than silently: a string holding a lone
//! surrogate is an error (serde strings are UTF-8), and a number is written
//! as an integer when JS prints it as one (`3`, not serde_json's `3.0`),
//! otherwise as an `f64`. Deserialization goes through a [`Value`], with
//! `JSON.parse`'s duplicate-key rule (the last value, at the first position).
//!
//! Numbers switch between integer and float representations, and values
//! deserialize by inspecting the input, so these impls are for
//! self-describing formats (JSON, YAML, CBOR, MessagePack).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::idiomatic::Detector;
use crate::js_string::JsString;
use crate::json::{js_number, Object, Value};
use crate::ladder::Action;
use crate::monitor::{CallRecord, Verdict};
use crate::typed_state::{DoomLoopState, StreakState, ToolState};

/// Largest magnitude below which every integral double is exact in `i64`
/// arithmetic and prints with the same digits in JS.
const SAFE_INTEGER_BOUND: f64 = 9_007_199_254_740_992.0;

/// A JS number as JSON: an integer where JS prints one, `null` for a
/// non-finite number (as `JSON.stringify`), otherwise the double.
pub(crate) fn serialize_number<S: Serializer>(n: f64, serializer: S) -> Result<S::Ok, S::Error> {
    if !n.is_finite() {
        return serializer.serialize_unit();
    }
    if n.fract() == 0.0 && n.abs() < SAFE_INTEGER_BOUND {
        return serializer.serialize_i64(n as i64);
    }
    // Integral doubles up to 1e21 print as plain digits in JS (the shortest
    // digits, zero-padded), which an i128 reproduces exactly.
    if let Ok(digits) = js_number(n).parse::<i128>() {
        return serializer.serialize_i128(digits);
    }
    serializer.serialize_f64(n)
}

impl Serialize for JsString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_str() {
            Some(text) => serializer.serialize_str(text),
            None => Err(ser::Error::custom(format!(
                "string {self:?} holds a lone surrogate, which serde strings cannot carry"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for JsString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(JsString::from)
    }
}

impl Serialize for Value {
    /// As `JSON.stringify` (and [`crate::json::to_json`]): `undefined`
    /// members dropped, holes, `undefined` elements and non-finite numbers
    /// as `null`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null | Value::Undefined | Value::Hole | Value::BigInt | Value::Circular => {
                serializer.serialize_unit()
            }
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => serialize_number(*n, serializer),
            Value::String(s) => s.serialize(serializer),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(object) => {
                let members: Vec<_> = object.iter().filter(|(_, v)| !matches!(v, Value::Undefined)).collect();
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, item) in members {
                    map.serialize_entry(key, item)?;
                }
                map.end()
            }
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_i128<E>(self, n: i128) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_u128<E>(self, n: u128) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::Number(n))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(JsString::from(s)))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(JsString::from(s)))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some((key, value)) = map.next_entry::<JsString, Value>()? {
            entries.push((key, value));
        }
        Ok(Value::Object(Object::from_entries(entries)))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl Serialize for DoomLoopState {
    /// The JSON `get_state` writes, key for key.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for DoomLoopState {
    /// As [`DoomLoopState::from_value`] (strict: a malformed entry is an error).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        DoomLoopState::from_value(&value).map_err(de::Error::custom)
    }
}

impl Serialize for ToolState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("fingerprint", &self.fingerprint)?;
        map.serialize_entry("streak", &Value::Number(self.streak))?;
        if let Some(set) = &self.round_fingerprints {
            map.serialize_entry("roundFingerprints", set)?;
        }
        if let Some(counts) = &self.call_streaks {
            let counts: Object = counts.iter().map(|(f, n)| (f.clone(), Value::Number(*n))).collect();
            map.serialize_entry("callStreaks", &Value::Object(counts))?;
        }
        map.end()
    }
}

impl Serialize for StreakState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("fingerprint", &self.fingerprint)?;
        map.serialize_entry("streak", &Value::Number(self.streak))?;
        map.end()
    }
}

impl Serialize for Verdict {
    /// The reference's verdict object, as [`Verdict::to_json`] writes it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("detector", &self.detector)?;
        if let Some(opt_in) = self.opt_in_detector {
            map.serialize_entry("optInDetector", opt_in)?;
        }
        map.serialize_entry("action", &self.action)?;
        map.serialize_entry("streak", &Value::Number(self.streak))?;
        map.serialize_entry("fingerprint", &self.fingerprint)?;
        if let Some(tool_name) = &self.tool_name {
            map.serialize_entry("toolName", tool_name)?;
        }
        map.serialize_entry("message", &self.message)?;
        map.end()
    }
}

impl Serialize for CallRecord {
    /// The reference's call record, as [`CallRecord::to_json`] writes it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("fingerprint", &self.fingerprint)?;
        map.serialize_entry("streak", &Value::Number(self.streak))?;
        map.serialize_entry("duplicateInRound", &self.duplicate_in_round)?;
        if let Some(verdict) = &self.verdict {
            map.serialize_entry("verdict", verdict)?;
        }
        map.end()
    }
}

macro_rules! serde_by_name {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let name = String::deserialize(deserializer)?;
                name.parse().map_err(de::Error::custom)
            }
        }
    };
}
serde_by_name!(Action);
serde_by_name!(Detector);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;

    fn through_serde(n: f64) -> String {
        serde_json::to_string(&Value::Number(n)).expect("numbers serialize")
    }

    /// Where serde_json's float format (zmij, since 1.0.149) and JS's
    /// agree — everywhere but 1e-6 ≤ |n| < 1e-5 — which is what the
    /// byte-identity claim of `DoomLoopState` rests on.
    #[test]
    fn numbers_print_as_js_prints_them_except_between_1e_minus_6_and_1e_minus_5() {
        let mut rng = XorShift(0x05EE_D0FF_10A7);
        for i in 0..200_000 {
            // Half arbitrary doubles, half short decimals (what counts and
            // spends look like), across the exponents.
            let bits = rng.next();
            let n = if i % 2 == 0 {
                f64::from_bits(bits)
            } else {
                (bits % 100_000) as f64 * 10f64.powi(rng.below(40) as i32 - 12)
            };
            if !n.is_finite() {
                continue;
            }
            let magnitude = n.abs();
            let inside = !(1e-6..1e-5).contains(&magnitude);
            let (ours, theirs) = (through_serde(n), js_number(n));
            if inside {
                assert_eq!(ours, theirs, "{n:e}");
            } else {
                // There JS writes 0.00000ddd, serde_json d.dde-6: the same number.
                assert_eq!(ours.parse::<f64>().ok(), Some(n), "{n:e}");
            }
        }
        for (n, js) in [
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (123456789012345680000.0, "123456789012345680000"),
        ] {
            assert_eq!(js_number(n), js);
        }
        assert_eq!(through_serde(1e21), "1e+21");
        assert_eq!(
            (through_serde(1e-6), js_number(1e-6)),
            ("1e-6".into(), "0.000001".into())
        );
        assert_eq!(through_serde(123456789012345680000.0), "123456789012345680000");
        assert_eq!(through_serde(-0.0), "0");
        assert_eq!(through_serde(f64::NAN), "null");
    }
}
