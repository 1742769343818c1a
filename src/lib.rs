//! # doom-loop
//!
//! A doom-loop detector for LLM agents: a byte-for-byte Rust port of
//! `@openrouter/agent/doom-loop` (the TypeScript reference). For the same
//! inputs it produces the same canonical JSON, fingerprints, verdicts,
//! messages, persisted state and warnings, so a state blob written by one
//! resumes in the other.
//!
//! The crate is the pure core: no clocks, no randomness, no I/O, no wasm or
//! JS types. The `doomloop` CLI and the `doom-loop-wasm` npm package are
//! thin layers over it.
//!
//! ```
//! use doom_loop::{DoomLoopMonitor, ResolvedConfig, JsString, json::parse, ladder::Action};
//!
//! let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
//! let tool = JsString::from("get_invoice");
//! let args = parse(r#"{"invoice_id":"INV-2291"}"#)?;
//! let actions: Vec<_> = (1..=6)
//!     .map(|round| monitor.record_tool_call(&tool, &args, round as f64, &Default::default()))
//!     .map(|record| record.map(|r| r.verdict.map(|v| v.action)))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(actions[1], Some(Action::Observe));
//! assert_eq!(actions[2], Some(Action::Block));
//! assert_eq!(actions[5], Some(Action::Stop));
//! # Ok::<(), doom_loop::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod beyond;
pub mod canonical;
pub mod config;
pub mod conformance;
pub mod error;
pub mod fingerprint;
pub mod js_string;
pub mod json;
pub mod ladder;
pub mod loop_key;
pub mod monitor;
pub mod outcome;
pub mod state;
pub mod text;
#[cfg(test)]
mod test_rng;

pub use canonical::{canonicalize, MAX_CANONICALIZE_DEPTH};
pub use config::{
    recommended_doom_loop_option, resolve_doom_loop_option, ResolvedConfig, DEFAULT_MAX_ESCALATIONS,
    RECOMMENDED_DOOM_LOOP_OPTION,
};
pub use error::{Error, ErrorKind, Result};
pub use fingerprint::{fingerprint_key_material, fingerprint_tool_call};
pub use js_string::JsString;
pub use json::Value;
pub use ladder::{resolve_ladder_action, Action, DEFAULT_LADDER};
pub use loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
pub use monitor::{CallRecord, DeclaredCall, DoomLoopMonitor, RecordOptions, Verdict};
pub use text::{detect_text_repetition, TextRepetition};
