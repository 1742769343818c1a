//! `fingerprint_lowered_prefix` and `parse_lowered_prefix`: one lowered
//! value read from the start of a longer document (the session binding
//! fingerprints each call's arguments this way as it reads a response).
//!
//! The input is split at `\u{1}` into lowered text and raw strings, and:
//! - neither call panics, on any text with any strings;
//! - a prefix the fingerprint reads ends on a character boundary inside the
//!   text, uses no more strings than there are, and is the fingerprint of
//!   that prefix alone, read whole (the established tree-free path);
//! - followed by more document, a value reads exactly as alone: the same
//!   span and fingerprint, and — without raw strings — the span the tree
//!   parser reads, whose canonical form the fingerprint hashes.
#![no_main]

use doom_loop::fingerprint::{fingerprint_lowered_prefix, fingerprint_lowered_tool_call_with_strings, sha256_hex};
use doom_loop::json::parse_lowered_prefix;
use doom_loop::{canonicalize, JsString};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = input.split('\u{1}');
    let text = parts.next().unwrap_or_default();
    let strings: Vec<&[u8]> = parts.map(str::as_bytes).collect();
    let tool = JsString::from("t");
    let parsed = parse_lowered_prefix(text);
    let Some(prefix) = fingerprint_lowered_prefix(&tool, text, &strings) else {
        return;
    };
    assert!(
        prefix.len <= text.len() && text.is_char_boundary(prefix.len),
        "{text:?}"
    );
    assert!(prefix.strings <= strings.len(), "{text:?}");
    let alone = &text[..prefix.len];
    let used = &strings[..prefix.strings];
    assert_eq!(
        fingerprint_lowered_tool_call_with_strings(&tool, alone, used)
            .ok()
            .as_ref(),
        Some(&prefix.fingerprint),
        "{alone:?} with {used:?}"
    );
    let longer = format!("{alone},\"next\":[1]}}");
    let again = fingerprint_lowered_prefix(&tool, &longer, &strings).expect("a value reads as alone");
    assert_eq!(again, prefix, "{longer:?}");
    if prefix.strings == 0 {
        let (value, len) = parsed.expect("the tree parser reads what the tree-free path reads");
        assert_eq!(len, prefix.len, "{text:?}");
        let canonical = canonicalize(&value).expect("a value the tree-free path takes canonicalizes");
        assert_eq!(
            sha256_hex(format!("t\n{canonical}").as_bytes()),
            prefix.fingerprint,
            "{text:?}"
        );
    }
});
