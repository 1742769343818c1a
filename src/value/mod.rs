//! **Values and strings** — the bottom layer, below everything else.
//!
//! What a JS value and a JS string are, in Rust: [`js_string::JsString`]
//! (UTF-16 semantics, lone surrogates included), [`json::Value`] (a JS
//! value with `JSON.parse` semantics, plus the JS-only values the binding
//! lowers), ECMAScript whitespace and the reference's sort order. The
//! parity contract starts here: byte-identical output needs JS strings,
//! JS number formatting and JS key order before any detector runs.
//!
//! Imports nothing of the crate but [`crate::error`]. The modules are also
//! reachable at the crate root (`doom_loop::json`, `doom_loop::js_string`).

pub(crate) mod float;
pub mod js_string;
pub mod json;
pub(crate) mod small_map;
pub(crate) mod sort;
#[cfg(test)]
pub(crate) mod test_rng;
pub(crate) mod whitespace;
