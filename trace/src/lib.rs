//! # doom-loop-trace
//!
//! The library that reads agent logs and measures them: the importers
//! (every log format agents write, into one [`transcript::Transcript`]),
//! the replay of a run through a [`doom_loop::DoomLoopMonitor`], the
//! evaluation of many runs and its HTML report, and the conformance runner
//! of the upstream vectors. It is kept apart from the detector crate on
//! purpose: an agent embeds the detector, while importers, replay and
//! evaluation are for people studying runs, and must not grow what every
//! agent loads (the npm package ships them as a second wasm module too).
//!
//! It also owns [`host`], the file and process interface its folder walk
//! reads through, so that the same code runs natively and as wasm over
//! Node's `fs`. The crates above stand on both: `doom-loop-guard` (the
//! coding-agent hooks) and `doom-loop-cli` (the `doomloop` command); the
//! gateway uses the importers and the replay. Nothing here imports them.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod conformance;
pub mod eval;
pub mod host;
pub mod html;
pub mod import;
mod json_list;
pub mod replay;
pub mod transcript;
