//! `json::parse` / `json::parse_lowered` on arbitrary UTF-8.
//!
//! Invariants:
//! - neither reader panics, whatever the text;
//! - on success, `to_json(v)` is plain JSON that `parse` reads back to a
//!   value with the identical `to_json` (writer/reader round trip);
//! - the lowered syntax is a superset: what `parse` accepts, `parse_lowered`
//!   accepts with the same value;
//! - what serde_json (strict RFC 8259) accepts, `parse` accepts too.
#![no_main]

use doom_loop::json::parse_lowered;
use doom_loop::json::{parse, string_to_number, to_json};
use libfuzzer_sys::fuzz_target;

fn round_trips(v: &doom_loop::Value, input: &str) {
    let written = to_json(v);
    let reread = parse(&written)
        .unwrap_or_else(|e| panic!("to_json output does not re-parse: {e}\ninput: {input:?}\nwritten: {written:?}"));
    let rewritten = to_json(&reread);
    assert_eq!(written, rewritten, "to_json not stable through parse; input: {input:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let plain = parse(text);
    let lowered = parse_lowered(text);
    if let Ok(v) = &plain {
        round_trips(v, text);
        let l = lowered
            .as_ref()
            .unwrap_or_else(|e| panic!("parse accepts but parse_lowered rejects ({e}): {text:?}"));
        assert_eq!(to_json(v), to_json(l), "parse and parse_lowered disagree on {text:?}");
        // Exercise the JS conversions on the parsed value.
        let _ = v.to_number();
        let _ = v.is_truthy();
    }
    if let Ok(v) = &lowered {
        round_trips(v, text);
    }
    if plain.is_err() && serde_json::from_str::<serde_json::Value>(text).is_ok() {
        panic!(
            "serde_json accepts but parse rejects ({:?}): {text:?}",
            plain.unwrap_err()
        );
    }
    let _ = string_to_number(text);
});
