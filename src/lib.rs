//! # doom-loop
//!
//! A doom-loop detector for LLM agents: a byte-for-byte Rust port of
//! `@openrouter/agent/doom-loop` (the TypeScript reference). For the same
//! inputs it produces the same canonical JSON, fingerprints, verdicts,
//! messages, persisted state and warnings, so a state blob written by one
//! resumes in the other.
//!
//! The crate is the pure core: no clocks, no randomness, no I/O, no wasm or
//! JS types. The `doomloop` CLI (crate `doom-loop-cli`) and the
//! `doom-loop-wasm` npm package are thin layers over it.
//!
//! ```
//! use doom_loop::{json::parse, Action, DoomLoopMonitor};
//!
//! let mut monitor = DoomLoopMonitor::default();
//! let args = parse(r#"{"invoice_id":"INV-2291"}"#)?;
//! let actions: Vec<Option<Action>> = (1..=6)
//!     .map(|round| monitor.record_call("get_invoice", &args, round).map(|r| r.action()))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(actions[1], Some(Action::Observe));
//! assert_eq!(actions[2], Some(Action::Block));
//! assert_eq!(actions[5], Some(Action::Stop));
//! # Ok::<(), doom_loop::Error>(())
//! ```
//!
//! ## Two layers
//!
//! Underneath is the **parity core**, whose signatures follow the reference
//! so the wasm binding and the conformance runner can drive it exactly:
//! [`JsString`] (JS strings, lone surrogates included), [`Value`] (a JS
//! value with `JSON.parse` semantics), rounds and streaks as `f64`,
//! [`DoomLoopMonitor::record_tool_call`], [`DoomLoopMonitor::get_state`].
//! Over it, the **Rust surface**: tool names and texts as `&str` or
//! `String`, integer rounds ([`RoundNumber`]), [`DoomLoopMonitor::record_call`],
//! [`DoomLoopMonitor::record_text`], [`Default`] monitors, `Display` /
//! `FromStr` for [`Action`] and [`Detector`], the typed [`DoomLoopState`],
//! and raw digests ([`tool_call_digest`], [`CallRecord::digest`]).
//!
//! ## Features
//!
//! | feature | adds |
//! | --- | --- |
//! | `serde` | `Serialize` / `Deserialize` for [`DoomLoopState`], [`Value`], [`JsString`], [`Action`], [`Detector`]; `Serialize` for [`Verdict`] and [`CallRecord`]. The state's JSON is byte-identical to [`DoomLoopMonitor::get_state`]'s. |
//! | `serde_json` | `serde`, plus `interop`: [`Value`] from and into `serde_json::Value`, canonical JSON and fingerprints of a `serde_json::Value` without going through text, `DoomLoopMonitor::record_json_call`. |
//!
//! Neither is on by default: the core depends on `sha2` and `ryu-js` only.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The modules live in folders, one per layer (each folder's `mod.rs` says
// what it owns); imports run one way, value <- parity <- detectors <-
// surface and session (with the wiring of options to detectors), as
// `tests/module_graph.rs` checks. The flat paths (`doom_loop::json`,
// `crate::canonical`, ...) are re-exports of the folders' modules, public
// where the module is.
pub mod detectors;
pub mod error;
pub mod parity;
pub mod session;
pub mod surface;
pub mod value;
mod wiring;

pub use detectors::{beyond, effects, novelty, outcome, repetition};
pub use parity::{canonical, evidence, fingerprint, ladder, loop_key, monitor, state, text};

pub mod config {
    //! Resolving the `doomLoop` option into the configuration the monitor
    //! runs: the reference's resolution (its ladder, escalation and text
    //! options, warnings and `TypeError`s, byte for byte:
    //! [`crate::parity::config`]) with the opt-in evidence rules its other
    //! keys turn on plugged in ([`crate::evidence`], [`crate::beyond`]),
    //! and the recommended option.
    pub use crate::parity::config::{
        ConfigResolution, EscalationConfig, ResolvedConfig, TextConfig, DEFAULT_MAX_ESCALATIONS,
    };
    pub use crate::wiring::{recommended_doom_loop_option, resolve_doom_loop_option, RECOMMENDED_DOOM_LOOP_OPTION};
}
#[cfg(feature = "serde_json")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde_json")))]
pub use surface::interop;
pub use value::{js_string, json};

use surface::{idiomatic, typed_state};
#[cfg(test)]
use value::test_rng;
use value::{sort, whitespace};

/// The Rust examples of the README and of the docs pages, compiled and run
/// as doc tests: every page with a ```` ```rust ```` block is included here
/// (`tests/readme_examples.rs` fails when one is not). Blocks of other
/// languages carry an info string (`js`, `ts`, `sh`, `text`, `json`, …), so
/// rustdoc does not compile them.
#[cfg(doctest)]
mod doc_pages {
    #[doc = include_str!("../README.md")]
    mod readme {}
    #[doc = include_str!("../docs/rust.md")]
    mod rust {}
    #[doc = include_str!("../docs/detectors.md")]
    mod detectors {}
    #[doc = include_str!("../docs/session.md")]
    mod session {}
    /// The examples that need the `serde_json` feature.
    #[cfg(feature = "serde_json")]
    #[doc = include_str!("../docs/rust-serde.md")]
    mod rust_serde {}
}

pub use canonical::{canonicalize, MAX_CANONICALIZE_DEPTH};
pub use config::{
    recommended_doom_loop_option, resolve_doom_loop_option, ResolvedConfig, DEFAULT_MAX_ESCALATIONS,
    RECOMMENDED_DOOM_LOOP_OPTION,
};
pub use error::{Error, ErrorKind, Result};
pub use fingerprint::{fingerprint_key_material, fingerprint_tool_call};
pub use idiomatic::{key_material_digest, tool_call_digest, Detector, ParseNameError, RoundNumber};
pub use js_string::JsString;
pub use json::Value;
pub use ladder::{resolve_ladder_action, Action, DEFAULT_LADDER};
pub use loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
pub use monitor::{CallRecord, DeclaredCall, DoomLoopMonitor, RecordOptions, Verdict};
pub use text::{detect_text_repetition, TextRepetition};
pub use typed_state::{DoomLoopState, StreakState, ToolState};
