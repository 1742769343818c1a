//! **The parity core** — the port of the reference (`@openrouter/agent/doom-loop`).
//!
//! Everything whose output the parity contract fixes byte for byte:
//! RFC 8785 canonical JSON ([`canonical`]), SHA-256 fingerprints
//! ([`fingerprint`]), loop keys ([`loop_key`]), the escalation ladder
//! ([`ladder`]), option resolution and its warnings ([`config`]), the
//! monitor and its verdicts and messages ([`monitor`]), the persisted state
//! and its fail-open restore ([`state`]) and the text-repetition detector
//! ([`text`]). Signatures follow the reference (JS strings, `f64` rounds)
//! so the wasm binding and the conformance runner can drive it exactly;
//! the Rust-idiomatic face over it is [`crate::surface`].
//!
//! Imports [`crate::value`], [`crate::error`] and [`crate::detectors`] (the
//! monitor carries the opt-in aggregator); nothing above. Each module is
//! also reachable at the crate root (`doom_loop::canonical`, …).

pub mod canonical;
pub mod config;
pub mod fingerprint;
pub mod ladder;
pub mod loop_key;
pub mod monitor;
pub mod state;
pub mod text;
