//! `fingerprint_lowered_tool_call_with_strings` and
//! `parse_lowered_with_strings`: lowered text whose strings cross raw (the
//! binding's form for plain data with long strings).
//!
//! The input is lowered text; every value `parse_lowered` reads is written
//! back in the raw form — each string value, chosen by the input's first
//! byte, as the bare word `raw` with the string beside it — and:
//! - the call never panics, on the raw form or on the text as it came
//!   (with strings made of the input's parts, which need not match);
//! - a raw string given as bytes not yet checked (as the binding hands it
//!   over) is an error when it is not UTF-8, and otherwise fingerprints as
//!   its literal from the tree's writer would;
//! - where canonicalization succeeds, the raw form's fingerprint is
//!   `sha256(tool + "\n" + canonical)`, and the value the raw form parses
//!   to canonicalizes to the same text: the raw form never changes an
//!   answer, and plain data never needs the ordinary form's retry.
#![no_main]

use doom_loop::fingerprint::{fingerprint_lowered_tool_call_with_strings, sha256_hex};
use doom_loop::json::{parse_lowered, parse_lowered_with_strings, write_json_string, write_number, Value};
use doom_loop::{canonicalize, JsString};
use libfuzzer_sys::fuzz_target;

/// `v` in the lowered text form, string values raw where `pick` says so;
/// `None` for what the raw form never carries (the reference's errors).
fn raw_form(v: &Value, pick: &mut dyn FnMut() -> bool, out: &mut String, strings: &mut Vec<String>) -> Option<()> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_finite() => write_number(*n, out),
        Value::String(s) => match s.as_str().filter(|_| pick()) {
            Some(s) => {
                out.push_str("raw");
                strings.push(s.to_owned());
            }
            None => write_json_string(s, out),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                raw_form(item, pick, out, strings)?;
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (i, (key, value)) in object.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                raw_form(value, pick, out, strings)?;
            }
            out.push('}');
        }
        Value::Undefined => out.push_str("undefined"),
        Value::Hole => out.push_str("hole"),
        _ => return None,
    }
    Some(())
}

fuzz_target!(|data: &[u8]| {
    let Some((&bits, rest)) = data.split_first() else {
        return;
    };
    let tool = JsString::from("edit");
    let answer = fingerprint_lowered_tool_call_with_strings(&tool, "[raw]", &[rest]);
    match std::str::from_utf8(rest) {
        Ok(string) => {
            let mut literal = String::new();
            write_json_string(&JsString::from(string), &mut literal);
            let expected = sha256_hex(format!("edit\n[{literal}]").as_bytes());
            assert_eq!(answer.ok(), Some(expected), "raw bytes {rest:?}");
        }
        Err(_) => assert!(
            answer.is_err(),
            "raw bytes that are not UTF-8 were fingerprinted: {rest:?}"
        ),
    }
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // Arbitrary text with arbitrary strings: an error or a fingerprint, never a panic.
    let parts: Vec<&str> = text.split('\u{1}').collect();
    let _ = fingerprint_lowered_tool_call_with_strings(&tool, parts[0], &parts[1..]);
    let _ = parse_lowered_with_strings(parts[0], &parts[1..]);

    let Ok(value) = parse_lowered(text) else {
        return;
    };
    let Ok(canonical) = canonicalize(&value) else {
        return;
    };
    let mut turn = 0u32;
    let mut pick = || {
        turn += 1;
        bits >> (turn % 8) & 1 == 1
    };
    let (mut raw_text, mut strings) = (String::new(), Vec::new());
    if raw_form(&value, &mut pick, &mut raw_text, &mut strings).is_none() {
        return;
    }
    let borrowed: Vec<&str> = strings.iter().map(String::as_str).collect();
    let expected = sha256_hex(format!("edit\n{canonical}").as_bytes());
    match fingerprint_lowered_tool_call_with_strings(&tool, &raw_text, &borrowed) {
        Ok(fp) => assert_eq!(
            fp, expected,
            "raw form {raw_text:?} with {strings:?} differs from {text:?}"
        ),
        Err(e) => panic!("raw form {raw_text:?} with {strings:?} of {text:?} refused: {e}"),
    }
    let parsed = parse_lowered_with_strings(&raw_text, &borrowed)
        .unwrap_or_else(|e| panic!("raw form {raw_text:?} with {strings:?} of {text:?} does not parse: {e}"));
    assert_eq!(
        canonicalize(&parsed).as_deref(),
        Ok(canonical.as_str()),
        "parsed raw form of {text:?}"
    );
});
