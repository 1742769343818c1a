//! `canonicalize` and the fingerprints on whatever `parse_lowered` reads.
//!
//! Invariants, for every value `v` the lowered reader accepts:
//! - canonicalization never panics;
//! - on `Ok(c)`: canonicalize → parse → canonicalize is stable
//!   (`canonicalize(parse(c)) == c`); the one exception is an array hole,
//!   which the reference writes as nothing (`[1,,3]`, not JSON);
//! - on `Ok(c)`: `fingerprint_key_material(v) == sha256(c)` and
//!   `fingerprint_tool_call(t, v) == sha256(utf8_lossy(t) + "\n" + c)`;
//! - on `Err(e)`: both fingerprints fail with the same error;
//! - the tree-free `canonicalize_lowered` gives the same result or error
//!   as parsing then canonicalizing, on every text (malformed included).
#![no_main]

use doom_loop::canonical::canonicalize_lowered;
use doom_loop::fingerprint::sha256_hex;
use doom_loop::json::parse_lowered;
use doom_loop::json::{parse, Value};
use doom_loop::{canonicalize, fingerprint_key_material, fingerprint_tool_call, JsString};
use libfuzzer_sys::fuzz_target;

fn has_hole(v: &Value) -> bool {
    match v {
        Value::Hole => true,
        Value::Array(items) => items.iter().any(has_hole),
        Value::Object(o) => o.iter().any(|(_, v)| has_hole(v)),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the tool name; the rest is the key material.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let tree = parse_lowered(text).and_then(|v| canonicalize(&v));
    assert_eq!(
        canonicalize_lowered(text),
        tree,
        "direct and tree paths differ on {text:?}"
    );
    let Ok(v) = parse_lowered(text) else {
        return;
    };
    let tool = match pick % 4 {
        0 => JsString::from("read"),
        1 => JsString::new(),
        2 => JsString::from("o\u{1F600}/ks\u{D55C}"),
        _ => JsString::from_code_units(&[0x74, 0xD800, 0x0A]), // lone surrogate + newline
    };
    match canonicalize(&v) {
        Ok(c) => {
            match parse(&c) {
                Ok(reparsed) => {
                    let again = canonicalize(&reparsed).unwrap_or_else(|e| {
                        panic!("canonical output fails to canonicalize ({e}): {c:?} from {text:?}")
                    });
                    assert_eq!(again, c, "canonicalize not stable through parse; input {text:?}");
                }
                Err(e) => assert!(
                    has_hole(&v),
                    "canonical output is not JSON ({e}) without a hole: {c:?} from {text:?}"
                ),
            }
            let key_fp = fingerprint_key_material(&v).expect("fingerprint_key_material after Ok canonicalize");
            assert_eq!(key_fp, sha256_hex(c.as_bytes()));
            let call_fp = fingerprint_tool_call(&tool, &v).expect("fingerprint_tool_call after Ok canonicalize");
            let material = format!("{}\n{}", tool.to_utf8_lossy(), c);
            assert_eq!(call_fp, sha256_hex(material.as_bytes()));
            assert!(
                call_fp.len() == 64
                    && call_fp
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
        }
        Err(e) => {
            assert_eq!(fingerprint_key_material(&v).unwrap_err(), e);
            assert_eq!(fingerprint_tool_call(&tool, &v).unwrap_err(), e);
        }
    }
});
