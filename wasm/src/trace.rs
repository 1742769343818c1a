//! The trace tooling's exports (feature `trace`, in the full build only):
//! replay of a recorded run. The lean detector module that agents load is
//! built without this feature, so none of it rides there.

use doom_loop::json::write_json_string;
use doom_loop::JsString;
use wasm_bindgen::prelude::*;

use crate::{lowered, Result};

/// Replays a lowered transcript: the timeline JSON with its terminal
/// rendering under `text`.
#[wasm_bindgen(js_name = replayTranscript)]
pub fn replay_transcript(document: &str) -> Result<String> {
    let transcript = doom_loop_trace::replay::parse_transcript(&lowered(document)?)?;
    let timeline = doom_loop_trace::replay::replay(&transcript)?;
    let mut json = timeline.to_json();
    json.pop();
    json.push_str(",\"text\":");
    write_json_string(&JsString::from(timeline.render()), &mut json);
    json.push('}');
    Ok(json)
}

