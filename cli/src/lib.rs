//! # doom-loop-cli
//!
//! The `doomloop` command: clap's definition of the command line, every
//! subcommand and its messages and exit statuses ([`command`]), what the
//! subcommands compute from the bytes they read ([`compute`]), and
//! `doomloop hook …`'s command line ([`hook`]). It is the top of the crates:
//! the measuring is `doom-loop-trace`'s (importers, replay, eval, the
//! conformance runner and the I/O host), the coding-agent guard is
//! `doom-loop-guard`'s, and this crate only parses, dispatches and prints,
//! so no logic lives twice and neither library carries a command-line
//! parser. The native binary (`src/bin/doomloop.rs`) and `npx doomloop`
//! (the same [`command::main`] compiled to wasm in `wasm/`) run it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod command;
pub mod compute;
pub mod hook;
