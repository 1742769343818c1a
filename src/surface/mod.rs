//! **The Rust-idiomatic surface** over the parity core.
//!
//! `&str` tool names, integer rounds ([`crate::RoundNumber`]),
//! [`crate::DoomLoopMonitor::record_call`], `Display` / `FromStr` for
//! [`crate::Action`] and [`crate::Detector`], the typed
//! [`crate::DoomLoopState`], raw digests, the optional `serde` impls and the
//! `serde_json` interop. Nothing here changes a verdict: it converts, and
//! the parity core decides.
//!
//! The top layer: imports the parity core, the detectors and the values;
//! nothing imports it but `lib.rs`. Its items are re-exported at the crate
//! root (and `interop` as `doom_loop::interop`).

pub(crate) mod idiomatic;
#[cfg(feature = "serde_json")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde_json")))]
pub mod interop;
#[cfg(feature = "serde")]
mod serde_impls;
pub(crate) mod typed_state;
