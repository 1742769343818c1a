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
//! What goes beyond the reference plugs in at one seam, [`evidence`]: the
//! traits the monitor drives opt-in evidence rules through, and the opaque
//! handle a configuration holds them by. The rules themselves
//! ([`crate::detectors`]) sit above this folder and implement those traits.
//!
//! Imports [`crate::value`] and [`crate::error`] only; nothing above (no
//! detector: `tests/module_graph.rs` checks it). Each module is also
//! reachable at the crate root (`doom_loop::canonical`, …).

pub mod canonical;
pub mod config;
pub mod evidence;
pub mod fingerprint;
pub mod ladder;
pub mod loop_key;
pub mod monitor;
pub mod state;
pub mod text;
