//! # doom-loop-trace
//!
//! Trace tooling for the `doom-loop` detector: reading recorded agent runs,
//! replaying them through a [`doom_loop::DoomLoopMonitor`], and the
//! `doomloop` CLI. It is kept apart from the detector crate on purpose: an
//! agent embeds the detector, while importers, replay and evaluation are
//! for people studying runs, and must not grow what every agent loads (the
//! npm package ships them as a second wasm module too).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod command;
pub mod conformance;
pub mod eval;
pub mod hook;
pub mod host;
pub mod html;
pub mod import;
mod json_list;
pub mod replay;
pub mod transcript;
