//! The trace tooling's exports (feature `trace`, in the full build only):
//! importing recorded runs in every format the importers read, replaying
//! them, and evaluating many. The lean detector module that agents load is
//! built without this feature, so none of it rides there.
//!
//! Inputs arrive as a lowered JS value (an object or array already parsed
//! by the caller) or as bytes (file contents: JSON, JSON Lines, gzip —
//! recognised by its magic bytes and decompressed here, so one call works
//! the same in every runtime). Answers leave as JSON text.

use doom_loop::json::write_json_string;
use doom_loop::{Error, ErrorKind, JsString, Value};
use doom_loop_trace::eval::{EvalOption, Evaluation};
use doom_loop_trace::import::{gzip_limit_error, import_bytes, import_detected, ImportedRun, MAX_DECOMPRESSED_BYTES};
use doom_loop_trace::replay::{replay, Transcript};
use wasm_bindgen::prelude::*;

use crate::{lowered, Result};

fn push_string(s: &str, out: &mut String) {
    write_json_string(&JsString::from(s), out);
}

/// `{format, transcript}` for one run.
fn imported_json(format: &str, transcript: &Transcript) -> String {
    let mut out = String::from("{\"format\":");
    push_string(format, &mut out);
    out.push_str(",\"transcript\":");
    out.push_str(&transcript.to_json());
    out.push('}');
    out
}

/// The one run of some bytes, with its format.
fn single_run(bytes: &[u8], name: &str) -> Result<ImportedRun> {
    let mut runs = import_bytes(bytes, name);
    match runs.len() {
        1 => {
            let run = runs.remove(0);
            match &run.transcript {
                Ok(_) => Ok(run),
                Err(error) => Err(error.clone().into()),
            }
        }
        n => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{name}: holds {n} runs, not one: replay one of them, or evaluate them all"),
        )
        .into()),
    }
}

/// Reads one run from a lowered JS value in any accepted shape:
/// `{format, transcript}` with the transcript in the rounds format (each
/// call's `result` and `failed` included).
#[wasm_bindgen(js_name = importTranscript)]
pub fn import_transcript(document: &str) -> Result<String> {
    let (format, transcript) = import_detected(&lowered(document)?)?;
    Ok(imported_json(format.name(), &transcript))
}

/// [`import_transcript`] from file bytes (JSON, JSON Lines, gzip); `name`
/// is used in error messages.
#[wasm_bindgen(js_name = importTranscriptBytes)]
pub fn import_transcript_bytes(bytes: &[u8], name: &str) -> Result<String> {
    let run = single_run(bytes, name)?;
    let format = run.format.map_or("", |f| f.name());
    let transcript = run.transcript.map_err(crate::WasmError::from)?;
    Ok(imported_json(format, &transcript))
}

fn timeline_json(mut transcript: Transcript, option: Option<String>, mut warnings: Vec<String>) -> Result<String> {
    if let Some(option) = option {
        transcript.option = lowered(&option)?;
    }
    let mut timeline = replay(&transcript)?;
    // The import's warnings (lines skipped, formats mixed) first.
    warnings.append(&mut timeline.warnings);
    timeline.warnings = warnings;
    let mut json = timeline.to_json();
    json.pop();
    json.push_str(",\"text\":");
    write_json_string(&JsString::from(timeline.render()), &mut json);
    json.push('}');
    Ok(json)
}

/// Replays a lowered transcript in any accepted shape: the timeline JSON
/// with its terminal rendering under `text`. `option`, when given (lowered),
/// replaces the transcript's own `doomLoop` option.
#[wasm_bindgen(js_name = replayTranscript)]
pub fn replay_transcript(document: &str, option: Option<String>) -> Result<String> {
    let (_, transcript) = import_detected(&lowered(document)?)?;
    timeline_json(transcript, option, Vec::new())
}

/// [`replay_transcript`] from file bytes (JSON, JSON Lines, gzip).
#[wasm_bindgen(js_name = replayTranscriptBytes)]
pub fn replay_transcript_bytes(bytes: &[u8], name: &str, option: Option<String>) -> Result<String> {
    let run = single_run(bytes, name)?;
    let transcript = run.transcript.map_err(crate::WasmError::from)?;
    timeline_json(transcript, option, run.warnings)
}

/// An evaluation in progress (`evaluateTranscripts` in the shim): add
/// inputs, then read the report.
#[wasm_bindgen]
pub struct Evaluator {
    inner: Evaluation,
}

#[wasm_bindgen]
impl Evaluator {
    /// `options`: a lowered array of `{label, option}`; empty: the defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> Result<Evaluator> {
        let options = match lowered(options)? {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let object = item.as_object().ok_or_else(|| {
                        Error::new(
                            ErrorKind::Type,
                            format!("options[{i}] is not an object {{label, option}}"),
                        )
                    })?;
                    let label = match object.get("label") {
                        Some(Value::String(label)) => label.to_string(),
                        _ => format!("option {}", i + 1),
                    };
                    let option = object.get("option").cloned().unwrap_or(Value::Bool(true));
                    Ok(EvalOption::new(label, option))
                })
                .collect::<std::result::Result<Vec<_>, Error>>()?,
            _ => return Err(Error::new(ErrorKind::Type, "options is not an array").into()),
        };
        Ok(Evaluator {
            inner: Evaluation::new(options),
        })
    }

    /// Adds every run of some file bytes (JSON, JSON Lines with a run per
    /// line, gzip); returns how many runs were read (failed ones included).
    #[wasm_bindgen(js_name = addBytes)]
    pub fn add_bytes(&mut self, bytes: &[u8], name: &str) -> usize {
        self.inner.add_bytes(bytes, name)
    }

    /// Counts an input refused by the gzip limit (Node's own gunzip hit
    /// it) as a failed run, with the core's message.
    #[wasm_bindgen(js_name = addGzipRefused)]
    pub fn add_gzip_refused(&mut self, name: &str) {
        self.inner.add_gzip_refused(name);
    }

    /// Adds one run given as a lowered JS value; `source`/`id` name it,
    /// `resolved` is its success label (`undefined`: not labelled).
    #[wasm_bindgen(js_name = addDocument)]
    pub fn add_document(&mut self, document: &str, source: &str, id: &str, resolved: Option<bool>) {
        let transcript = lowered(document)
            .map_err(|crate::WasmError(e)| e)
            .and_then(|value| import_detected(&value).map(|(_, t)| t))
            .map_err(|e| Error::new(e.kind(), format!("{id}: {}", e.message())));
        self.inner.add_run(source, id, resolved, transcript);
    }

    /// The report as JSON (see `Report::to_json`), its table under `text`.
    pub fn report(&self) -> String {
        let report = self.inner.report();
        let mut json = report.to_json();
        json.pop();
        json.push_str(",\"text\":");
        push_string(&report.render(), &mut json);
        json.push('}');
        json
    }
}

/// The most bytes gzip input may decompress to (the npm package gives
/// Node's own gunzip the same limit).
#[wasm_bindgen(js_name = maxDecompressedBytes)]
pub fn max_decompressed_bytes() -> f64 {
    MAX_DECOMPRESSED_BYTES as f64
}

/// The error for an input refused by the gzip limit, placed at `name`.
#[wasm_bindgen(js_name = gzipRefusal)]
pub fn gzip_refusal(name: &str) -> String {
    format!("{name}: {}", gzip_limit_error().message())
}

/// Whether a lowered array is a list of runs (rather than one run's
/// messages), as the importers decide for a file.
#[wasm_bindgen(js_name = isRunList)]
pub fn is_run_list(document: &str) -> Result<bool> {
    Ok(doom_loop_trace::import::is_run_list(&lowered(document)?))
}
