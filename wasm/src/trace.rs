//! The trace tooling's exports (feature `trace`, in the full build only):
//! replay of a recorded run. The lean detector module that agents load is
//! built without this feature, so none of it rides there.

use doom_loop::json::write_json_string;
use doom_loop::{Error, ErrorKind, JsString};
use wasm_bindgen::prelude::*;

use doom_loop_trace::cli::{self, OptionChoice};
use doom_loop_trace::eval::Evaluation;
use doom_loop_trace::import::{import_bytes, ImportedRun};

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
    cli::canonicalize_text(text).map_err(cli_error)
}

/// `doomloop fingerprint` over a tool name and JSON text.
#[wasm_bindgen(js_name = cliFingerprint)]
pub fn cli_fingerprint(tool: &str, text: &str) -> Result<String> {
    cli::fingerprint_text(tool, text).map_err(cli_error)
}

/// `doomloop replay` over the bytes of a trace (any format the importers
/// read; `name` places errors), under `option` (JSON text) or, with
/// `recommended`, the recommended option: `{stdout, warnings, finding}`
/// as JSON.
#[wasm_bindgen(js_name = cliReplay)]
pub fn cli_replay(
    bytes: &[u8],
    name: &str,
    option: Option<String>,
    recommended: bool,
    json: bool,
    fail_on: Option<String>,
) -> Result<String> {
    let choice = match (&option, recommended) {
        (Some(text), _) => OptionChoice::Json(text),
        (None, true) => OptionChoice::Recommended,
        (None, false) => OptionChoice::Trace,
    };
    let run = cli::replay_bytes(bytes, name, choice, json, rung(fail_on)?).map_err(cli_error)?;
    Ok(cli_run(&run.stdout, &run.warnings, run.finding.as_deref()))
}

fn rung(fail_on: Option<String>) -> Result<Option<doom_loop::ladder::Action>> {
    fail_on.as_deref().map(cli::fail_on_rung).transpose().map_err(cli_error)
}

fn cli_run(stdout: &str, warnings: &[String], finding: Option<&str>) -> String {
    let mut out = String::from("{\"stdout\":");
    write_json_string(&JsString::from(stdout), &mut out);
    out.push_str(",\"warnings\":");
    out.push_str(&crate::json_strings(warnings));
    out.push_str(",\"finding\":");
    match finding {
        Some(finding) => write_json_string(&JsString::from(finding), &mut out),
        None => out.push_str("null"),
    }
    out.push('}');
    out
}

/// `doomloop eval`: the npm CLI reads the files (it has the file system)
/// and hands each one's bytes here; runs are imported first, then added in
/// steps so that the CLI can show progress.
#[wasm_bindgen(js_name = CliEval)]
pub struct CliEval {
    evaluation: Evaluation,
    pending: std::collections::VecDeque<ImportedRun>,
}

#[wasm_bindgen(js_class = CliEval)]
impl CliEval {
    /// An evaluation of `eval`'s options (`--option` texts, `--recommended`,
    /// `--compare`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Vec<String>, recommended: bool, compare: bool) -> Result<CliEval> {
        Ok(CliEval {
            evaluation: Evaluation::new(cli::eval_options(&options, recommended, compare).map_err(cli_error)?),
            pending: std::collections::VecDeque::new(),
        })
    }

    /// Reads the runs of one file's bytes; returns how many runs are pending.
    pub fn import(&mut self, bytes: &[u8], name: &str) -> usize {
        self.pending.extend(import_bytes(bytes, name));
        self.pending.len()
    }

    /// Replays up to `count` pending runs; returns how many remain.
    pub fn step(&mut self, count: usize) -> usize {
        for _ in 0..count {
            match self.pending.pop_front() {
                Some(run) => self.evaluation.add_imported(run),
                None => break,
            }
        }
        self.pending.len()
    }

    /// The report and outcome: `{stdout, warnings, finding}` as JSON.
    pub fn finish(&mut self, json: bool, fail_on: Option<String>) -> Result<String> {
        self.step(usize::MAX);
        let run = cli::eval_finish(&self.evaluation, json, rung(fail_on)?);
        Ok(cli_run(&run.stdout, &run.warnings, run.finding.as_deref()))
    }
}
