//! **The opt-in detectors** — what goes beyond the reference.
//!
//! Off by default, so the defaults stay byte-for-byte the reference's:
//! [`outcome`] (outcome-aware streaks: the same call with the same result)
//! and [`beyond`], the aggregator the monitor consults when an option
//! turns a detector on. New detectors belong here.
//!
//! Imports [`crate::value`] only: the monitor ([`crate::parity`]) holds the
//! aggregator, so a detector here must not reach back into the parity core
//! (it takes fingerprints and values as input instead). Each module is also
//! reachable at the crate root (`doom_loop::beyond`, `doom_loop::outcome`).

pub mod beyond;
pub mod outcome;
