//! Fingerprints: lowercase hex SHA-256 of canonical JSON.
//!
//! The cross-port contract: a tool call's fingerprint is
//! `sha256(utf8(toolName + "\n" + jcs(keyMaterial)))`, bare key material's
//! is `sha256(utf8(jcs(keyMaterial)))`. The reference encodes with
//! `TextEncoder`, so a lone surrogate in a *tool name* is hashed as U+FFFD;
//! canonical JSON is always well-formed (it escapes lone surrogates).
//!
//! The digest is computed here (sha2) unless the host registered a faster
//! SHA-256 with `set_sha256_backend` — Node, Bun and Deno have a native,
//! hardware-accelerated one that the wasm build would otherwise re-do in
//! software. Only inputs of some length use it (a call across the boundary
//! costs more than hashing a block or two); the bytes hashed are the same
//! either way.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::canonical::{
    canonicalize_into, canonicalize_lowered_into, canonicalize_lowered_prefix_into,
    canonicalize_lowered_with_strings_into,
};
use crate::error::Result;
use crate::js_string::JsString;
use crate::json::Value;
use sha2::{Digest, Sha256};

/// The reference's `fingerprintToolCall`.
///
/// # Errors
/// Whatever [`crate::canonicalize`] rejects.
///
/// ```
/// use doom_loop::{fingerprint_tool_call, json::parse, JsString};
/// let fp = fingerprint_tool_call(&JsString::from("list_tasks"), &parse("{}").unwrap()).unwrap();
/// assert_eq!(fp, "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92");
/// ```
pub fn fingerprint_tool_call(tool_name: &JsString, key_material: &Value) -> Result<String> {
    let mut text = call_prefix(tool_name, 64);
    canonicalize_into(key_material, &mut text)?;
    Ok(sha256_hex(text.as_bytes()))
}

/// `toolName + "\n"` as the reference's `TextEncoder` encodes it (a lone
/// surrogate as U+FFFD), with room for `room` more bytes of key material.
pub(crate) fn call_prefix(tool_name: &JsString, room: usize) -> String {
    let mut text = String::with_capacity(tool_name.as_bytes().len() + 1 + room);
    text.push_str(&tool_name.to_utf8_lossy());
    text.push('\n');
    text
}

/// The reference's `fingerprintKeyMaterial`.
///
/// # Errors
/// Whatever [`crate::canonicalize`] rejects.
pub fn fingerprint_key_material(key_material: &Value) -> Result<String> {
    let mut text = String::new();
    canonicalize_into(key_material, &mut text)?;
    Ok(sha256_hex(text.as_bytes()))
}

/// [`fingerprint_tool_call`] over key material in the binding's lowered
/// text form (see [`crate::json::parse_lowered`]), canonicalized straight
/// from the text when it is plain JSON.
///
/// # Errors
/// As [`crate::canonical::canonicalize_lowered`].
///
/// ```
/// use doom_loop::{fingerprint::fingerprint_lowered_tool_call, JsString};
/// let fp = fingerprint_lowered_tool_call(&JsString::from("list_tasks"), "{ }").unwrap();
/// assert_eq!(fp, "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92");
/// ```
pub fn fingerprint_lowered_tool_call(tool_name: &JsString, key_material: &str) -> Result<String> {
    let mut text = call_prefix(tool_name, key_material.len()).into_bytes();
    canonicalize_lowered_into(key_material, &mut text)?;
    Ok(sha256_hex(&text))
}

/// [`fingerprint_lowered_tool_call`] over lowered text whose large
/// strings cross raw: each bare word `raw` in `key_material` stands for the
/// next of `strings`, unescaped (the binding's form for plain data that
/// carries long strings, e.g. the file of an edit: copying their UTF-8 is
/// far cheaper in JS than `JSON.stringify`). Each string is its UTF-8: a
/// `&str`, or bytes not yet checked (checked once, as the escaped literal).
/// The fingerprint is the one the same value lowered the ordinary way has.
///
/// # Errors
/// [`crate::ErrorKind::Syntax`] if the text is not plain lowered JSON, does
/// not use every string exactly once, or a string is not UTF-8; the caller
/// then sends the ordinary lowered text (this form never reports the
/// reference's errors).
///
/// ```
/// use doom_loop::{fingerprint::*, JsString};
/// let tool = JsString::from("edit");
/// let raw = fingerprint_lowered_tool_call_with_strings(&tool, r#"{"path":"a.py","content":raw}"#, &["x = \"1\"\n"]).unwrap();
/// let text = fingerprint_lowered_tool_call(&tool, r#"{"content":"x = \"1\"\n","path":"a.py"}"#).unwrap();
/// assert_eq!(raw, text);
/// ```
pub fn fingerprint_lowered_tool_call_with_strings<S: AsRef<[u8]>>(
    tool_name: &JsString,
    key_material: &str,
    strings: &[S],
) -> Result<String> {
    let strings: Vec<&[u8]> = strings.iter().map(AsRef::as_ref).collect();
    // Room for the quotes and an escape every eighth byte (source code has
    // one every ~17): growing a megabyte buffer midway costs a quarter of
    // the escaping.
    // Each raw string reserves its own room as it is escaped (`Direct`).
    let mut text = call_prefix(tool_name, key_material.len()).into_bytes();
    canonicalize_lowered_with_strings_into(key_material, &strings, &mut text)?;
    Ok(sha256_hex(&text))
}

/// A tool call's fingerprint taken from lowered key material at the start
/// of a larger lowered document ([`fingerprint_lowered_prefix`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoweredPrefix {
    /// The call's fingerprint (64 lowercase hex digits).
    pub fingerprint: String,
    /// The bytes of the text the key material spans (leading whitespace
    /// included): the document goes on after them.
    pub len: usize,
    /// How many of the raw strings it used.
    pub strings: usize,
}

/// [`fingerprint_lowered_tool_call_with_strings`] for the lowered value
/// that *starts* `text`, which may go on — a call's arguments inside a
/// lowered response — with where the value ended, so a reader of that
/// response can fingerprint each call's arguments straight from their text
/// and never build them as a tree (the session binding's fast path).
/// `strings` are the raw strings from this value on (the bare word `raw`
/// stands for the next one, unescaped UTF-8, checked here).
///
/// `None` wherever only the tree path can decide (the value is not plain
/// lowered JSON that the tree-free canonicalizer takes, nests too deep, or
/// errs): the caller then parses the document into a tree, whose
/// fingerprint is the same value's and whose errors are the reference's.
///
/// ```
/// use doom_loop::{fingerprint::*, JsString};
/// let tool = JsString::from("edit");
/// let text = r#"{"path":"a.py","content":raw},"next":1}"#;
/// let prefix = fingerprint_lowered_prefix(&tool, text, &[b"x = 1\n".as_slice()]).unwrap();
/// assert_eq!(&text[prefix.len..], r#","next":1}"#);
/// assert_eq!(prefix.strings, 1);
/// let whole = fingerprint_lowered_tool_call(&tool, r#"{"content":"x = 1\n","path":"a.py"}"#).unwrap();
/// assert_eq!(prefix.fingerprint, whole);
/// ```
pub fn fingerprint_lowered_prefix(tool_name: &JsString, text: &str, strings: &[&[u8]]) -> Option<LoweredPrefix> {
    // Room for small arguments; a raw string reserves its own.
    let mut bytes = call_prefix(tool_name, text.len().min(256)).into_bytes();
    let (len, strings) = canonicalize_lowered_prefix_into(text, strings, &mut bytes)?;
    Some(LoweredPrefix {
        fingerprint: sha256_hex(&bytes),
        len,
        strings,
    })
}

/// [`fingerprint_key_material`] over lowered text.
///
/// # Errors
/// As [`fingerprint_lowered_tool_call`].
pub fn fingerprint_lowered_key_material(key_material: &str) -> Result<String> {
    let mut text = Vec::with_capacity(key_material.len());
    canonicalize_lowered_into(key_material, &mut text)?;
    Ok(sha256_hex(&text))
}

/// Fingerprint of a string used as key material, without building a
/// [`Value`] (the text-streak path hashes whole responses).
pub fn fingerprint_string(s: &JsString) -> String {
    let mut text = String::with_capacity(s.as_bytes().len() + 2);
    crate::json::write_json_string(s, &mut text);
    sha256_hex(text.as_bytes())
}

/// A host SHA-256: the digest of the bytes, or `None` to fall back to sha2.
pub(crate) type Sha256Backend = fn(&[u8]) -> Option<[u8; 32]>;

static BACKEND: OnceLock<Sha256Backend> = OnceLock::new();

/// Inputs shorter than this are hashed here unless the host lowers it
/// (`set_sha256_backend_min`). Measured in Node 20 (`docs/performance.md`):
/// sha2 in wasm costs ≈ 0.27 µs a 64-byte block and a call out to the host
/// 0.5–3 µs depending on what the host has loaded, so the binding starts at
/// 1 KiB (16 blocks) and lowers it once the host's hash is cheap.
const DEFAULT_BACKEND_MIN: usize = 1024;

static BACKEND_MIN: AtomicUsize = AtomicUsize::new(DEFAULT_BACKEND_MIN);

/// Registers a host SHA-256 for large inputs (once; later calls are
/// ignored and return `false`). It must compute SHA-256: fingerprints are
/// a cross-port contract.
///
/// Hidden, not an API: the backend is process-global, right for one wasm
/// instance (the binding registers the host's crypto digest) and wrong for
/// a Rust program with several users of the crate.
#[doc(hidden)]
pub fn set_sha256_backend(backend: fn(&[u8]) -> Option<[u8; 32]>) -> bool {
    BACKEND.set(backend).is_ok()
}

/// The input length from which the registered backend is asked (1 KiB
/// until this is called). Which one hashes never changes a fingerprint,
/// only its cost. Hidden, process-global, as [`set_sha256_backend`].
#[doc(hidden)]
pub fn set_sha256_backend_min(min_len: usize) {
    BACKEND_MIN.store(min_len, Ordering::Relaxed);
}

pub(crate) fn digest(bytes: &[u8]) -> [u8; 32] {
    if bytes.len() >= BACKEND_MIN.load(Ordering::Relaxed) {
        if let Some(digest) = BACKEND.get().and_then(|backend| backend(bytes)) {
            return digest;
        }
    }
    Sha256::digest(bytes).into()
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&digest(bytes))
}

/// Lowercase hex of a digest, as fingerprints are written.
fn hex(digest: &[u8; 32]) -> String {
    let mut hex = String::with_capacity(64);
    for byte in digest {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        hex.push(HEX[(byte >> 4) as usize] as char);
        hex.push(HEX[(byte & 0x0F) as usize] as char);
    }
    hex
}
