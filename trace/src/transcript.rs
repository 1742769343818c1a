//! Temporary: the transcript types until the layout move lands.
pub use crate::replay::{Transcript, TranscriptCall, TranscriptRound};
