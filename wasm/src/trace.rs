//! The trace tooling's exports (feature `trace`, in the full build only):
//! replay of a recorded run. The lean detector module that agents load is
//! built without this feature, so none of it rides there.

use doom_loop::json::write_json_string;
use doom_loop::{Error, ErrorKind, JsString};
use wasm_bindgen::prelude::*;

use crate::{lowered, Result, WasmError};

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


// --- `npx doomloop`: the CLI's computations (doom_loop_trace::cli) -------
//
// The npm CLI hands the text it read to the same functions the native CLI
// calls, so both read input with the core's JSON reader and agree on every
// result and message. Plain strings in and out: the CLI's input is text.

fn cli_error(message: String) -> WasmError {
    Error::new(ErrorKind::InvalidArgument, message).into()
}

/// `doomloop canonicalize` over JSON text.
#[wasm_bindgen(js_name = cliCanonicalize)]
pub fn cli_canonicalize(text: &str) -> Result<String> {
    doom_loop_trace::cli::canonicalize_text(text).map_err(cli_error)
}

/// `doomloop fingerprint` over a tool name and JSON text.
#[wasm_bindgen(js_name = cliFingerprint)]
pub fn cli_fingerprint(tool: &str, text: &str) -> Result<String> {
    doom_loop_trace::cli::fingerprint_text(tool, text).map_err(cli_error)
}

/// `doomloop replay` over transcript text: `{stdout, warnings, finding}`
/// as JSON.
#[wasm_bindgen(js_name = cliReplay)]
pub fn cli_replay(text: &str, option: Option<String>, json: bool, fail_on: Option<String>) -> Result<String> {
    let rung = fail_on
        .as_deref()
        .map(doom_loop_trace::cli::fail_on_rung)
        .transpose()
        .map_err(cli_error)?;
    let run = doom_loop_trace::cli::replay_text(text, option.as_deref(), json, rung).map_err(cli_error)?;
    let mut out = String::from("{\"stdout\":");
    write_json_string(&JsString::from(run.stdout), &mut out);
    out.push_str(",\"warnings\":");
    out.push_str(&crate::json_strings(&run.warnings));
    out.push_str(",\"finding\":");
    match run.finding {
        Some(finding) => write_json_string(&JsString::from(finding), &mut out),
        None => out.push_str("null"),
    }
    out.push('}');
    Ok(out)
}
