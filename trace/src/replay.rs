//! Replaying a recorded agent transcript through the detector.
//!
//! A transcript is what an agent run leaves behind: per model turn, the
//! assistant's text and the tool calls it made (with their results, where
//! recorded). Replaying it runs the session engine
//! ([`doom_loop::session::Session`]) — the same one every adapter runs, so
//! what a replay (and `doomloop eval`) reports is what an agent would have
//! got: the text checked when the response arrives, the round's calls
//! declared as one set and each recorded with its `loopKey` identity
//! (absent → full arguments, malformed JSON → the raw text, an unhashable
//! identity → full arguments → skipped), in-round duplicates sharing the
//! first call's decision, then the round's results, and the run halting at
//! the first `stop` (a text `stop` halts before the response's calls run).
//! It reports a timeline: per round, each call's fingerprint, effective
//! streak, the rung reached and the verdict text. The CLI (`doomloop
//! replay`), the npm package's CLI and the playground all render this one
//! timeline, so they cannot disagree.
//!
//! Reading the formats agents write is [`crate::import`]'s job;
//! [`parse_transcript`] is its single-document entry, kept here for callers
//! of the replay API.

use doom_loop::config::resolve_doom_loop_option;
use doom_loop::error::{Error, ErrorKind, Result};
use doom_loop::js_string::JsString;
use doom_loop::json::{js_number, write_json_string, write_number, Value};
use doom_loop::ladder::Action;
use doom_loop::monitor::Verdict;
use doom_loop::session::{Call, CallKey, Capabilities, Response, Session, SessionOptions};

pub use crate::transcript::{Transcript, TranscriptCall, TranscriptRound};

use crate::json_list::write_list;

/// What happened to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallReport {
    /// The tool.
    pub tool_name: JsString,
    /// Its fingerprint (absent when exempt or unhashable).
    pub fingerprint: Option<JsString>,
    /// The effective streak.
    pub streak: f64,
    /// A repeat within the round (shares the first call's decision).
    pub duplicate_in_round: bool,
    /// `loopKey: false` or a null identity: not tracked.
    pub exempt: bool,
    /// Arguments were not JSON; identity is the raw text.
    pub malformed: bool,
    /// The verdict, if a rung was reached.
    pub verdict: Option<Verdict>,
    /// The call's recorded result, where the trace has one.
    pub result: Option<Value>,
    /// The call failed (an error result).
    pub failed: bool,
}

/// One round of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundReport {
    /// 1-based round number.
    pub round: usize,
    /// The text verdict of the turn's assistant text.
    pub text_verdict: Option<Verdict>,
    /// The calls.
    pub calls: Vec<CallReport>,
}

/// The replay's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Rounds replayed (up to and including the stopping one).
    pub rounds: Vec<RoundReport>,
    /// Rounds in the transcript.
    pub total_rounds: usize,
    /// The verdict that stopped the run.
    pub stop_verdict: Option<Verdict>,
    /// Warnings (config, loop keys, fallbacks), in order.
    pub warnings: Vec<String>,
    /// The detector state after the last replayed round.
    pub state: Value,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}

/// Reads a transcript in any accepted shape (see [`crate::import`]).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming what is missing or malformed and
/// where, or, for a shape not recognised, the shapes accepted.
pub fn parse_transcript(document: &Value) -> Result<Transcript> {
    crate::import::import_value(document)
}

/// Replays a transcript through the session engine
/// ([`doom_loop::session::Session`]) — the one every adapter runs: per
/// round, the text, then the calls recorded as one round, then the
/// calls' recorded results (as an adapter feeds them after the round has
/// run), stopping at the round that halts the run.
///
/// # Errors
/// The config's `TypeError`, or [`ErrorKind::InvalidArgument`] when the
/// `doomLoop` option turns detection off.
pub fn replay(transcript: &Transcript) -> Result<Timeline> {
    let resolution = resolve_doom_loop_option(Some(&transcript.option));
    let mut warnings = transcript.warnings.clone();
    warnings.extend(resolution.warnings);
    let config = resolution
        .result?
        .ok_or_else(|| invalid("the transcript's `doomLoop` option turns detection off"))?;
    let options = SessionOptions {
        loop_keys: transcript.loop_keys.clone(),
        loop_effects: transcript.loop_effects.clone(),
        capabilities: Capabilities::default(),
    };
    let mut session = Session::new(config, options);
    warnings.extend(session.take_warnings());
    let mut reports = Vec::new();
    let mut stop_verdict = None;
    for (index, round) in transcript.rounds.iter().enumerate() {
        let number = index + 1;
        reports.push(replay_round(&mut session, round, number));
        warnings.extend(session.take_warnings());
        if let Some(verdict) = session.halt() {
            stop_verdict = Some(verdict.clone());
            break;
        }
    }
    Ok(Timeline {
        rounds: reports,
        total_rounds: transcript.rounds.len(),
        stop_verdict,
        warnings,
        state: session.monitor().get_state(),
    })
}

/// The model response of a transcript's round `number` (1-based) as the
/// session engine takes it: its text, and its calls, each identified by its
/// tool's declared loop key and carrying its place in the run as its id.
pub fn round_response(round: &TranscriptRound, number: usize) -> Response {
    let calls = round
        .calls
        .iter()
        .enumerate()
        .map(|(index, call)| Call {
            id: replay_call_id(number, index),
            tool_name: call.tool_name.clone(),
            args: call.args.clone(),
            malformed: call.malformed,
            key: CallKey::Declared,
        })
        .collect();
    Response {
        text: round.text.clone(),
        calls,
    }
}

/// The id a replayed call carries in the session: its place in the run.
pub fn replay_call_id(round: usize, index: usize) -> JsString {
    JsString::from(format!("r{round}c{index}"))
}

fn replay_round(session: &mut Session, round: &TranscriptRound, number: usize) -> RoundReport {
    let outcome = session.on_response(round_response(round, number));
    let calls = round
        .calls
        .iter()
        .zip(outcome.decisions)
        .map(|(call, decision)| {
            // The round has run: its results arrive (a no-op for a default config).
            let fed = if call.result.is_some() || call.failed {
                session.on_result(&decision.id, call.result.as_ref(), call.failed)
            } else {
                None
            };
            CallReport {
                tool_name: call.tool_name.clone(),
                fingerprint: decision.fingerprint,
                streak: decision.streak,
                duplicate_in_round: decision.duplicate_in_round,
                exempt: decision.exempt,
                malformed: call.malformed,
                verdict: match (decision.verdict, fed) {
                    (Some(call), Some(result)) if result.action > call.action => Some(result),
                    (call, result) => call.or(result),
                },
                result: call.result.clone(),
                failed: call.failed,
            }
        })
        .collect();
    RoundReport {
        round: number,
        text_verdict: outcome.text_verdict,
        calls,
    }
}

impl Timeline {
    /// The timeline as JSON (for the npm package and the playground).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"rounds\":[");
        write_list(&mut out, &self.rounds, |round, out| {
            out.push_str(&format!("{{\"round\":{},\"textVerdict\":", round.round));
            push_verdict(&round.text_verdict, out);
            out.push_str(",\"calls\":[");
            write_list(out, &round.calls, |call, out| {
                out.push_str("{\"toolName\":");
                write_json_string(&call.tool_name, out);
                out.push_str(",\"fingerprint\":");
                match &call.fingerprint {
                    Some(f) => write_json_string(f, out),
                    None => out.push_str("null"),
                }
                out.push_str(",\"streak\":");
                write_number(call.streak, out);
                out.push_str(&format!(
                    ",\"duplicateInRound\":{},\"exempt\":{},\"malformed\":{},\"verdict\":",
                    call.duplicate_in_round, call.exempt, call.malformed
                ));
                push_verdict(&call.verdict, out);
                out.push_str(",\"result\":");
                match &call.result {
                    Some(result) => out.push_str(&doom_loop::json::to_json(result)),
                    None => out.push_str("null"),
                }
                out.push_str(&format!(",\"failed\":{}}}", call.failed));
            });
            out.push_str("]}");
        });
        out.push_str(&format!("],\"totalRounds\":{},\"stopVerdict\":", self.total_rounds));
        push_verdict(&self.stop_verdict, &mut out);
        out.push_str(",\"warnings\":");
        let warnings: Vec<Value> = self
            .warnings
            .iter()
            .map(|w| Value::String(JsString::from(w.as_str())))
            .collect();
        out.push_str(&doom_loop::json::to_json(&Value::Array(warnings)));
        out.push_str(",\"state\":");
        out.push_str(&doom_loop::json::to_json(&self.state));
        out.push('}');
        out
    }

    /// The timeline as a terminal table: one line per call, the verdict
    /// text under the call that earned it, and how the run ended.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for warning in &self.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        for round in &self.rounds {
            if let Some(verdict) = round.text_verdict.as_ref().filter(|v| shows_message(v)) {
                out.push_str(&format!(
                    "round {:>3}  {:<18} {:<10} streak {:>3}  {}\n           {}\n",
                    round.round,
                    "(assistant text)",
                    short(&verdict.fingerprint),
                    js_number(verdict.streak),
                    verdict.action.as_str().to_ascii_uppercase(),
                    verdict.message
                ));
            }
            for call in &round.calls {
                let fingerprint = call.fingerprint.as_ref().map_or_else(|| "-".to_string(), short);
                let mut status = match (&call.verdict, call.exempt) {
                    (_, true) => "exempt".to_string(),
                    (Some(v), _) => v.action.as_str().to_ascii_uppercase(),
                    (None, _) => "ok".to_string(),
                };
                if call.duplicate_in_round {
                    status.push_str(" (duplicate in round)");
                }
                if call.malformed {
                    status.push_str(" (malformed JSON)");
                }
                out.push_str(&format!(
                    "round {:>3}  {:<18} {:<10} streak {:>3}  {status}\n",
                    round.round,
                    call.tool_name.to_string(),
                    fingerprint,
                    js_number(call.streak)
                ));
                if let Some(v) = call
                    .verdict
                    .as_ref()
                    .filter(|v| shows_message(v) && !call.duplicate_in_round)
                {
                    out.push_str(&format!("           {}\n", v.message));
                }
            }
        }
        match &self.stop_verdict {
            Some(v) => out.push_str(&format!(
                "stopped: doom_loop at round {} of {} ({} streak {})\n",
                self.rounds.len(),
                self.total_rounds,
                detector_name(v),
                js_number(v.streak)
            )),
            None => out.push_str(&format!("completed: {} rounds, no stop\n", self.total_rounds)),
        }
        out
    }
}

/// Observe verdicts are counted, not explained: their text is the same
/// as the stronger rung's that follows.
fn shows_message(verdict: &Verdict) -> bool {
    verdict.action >= Action::Steer
}

/// The opt-in detector when one raised the verdict: it says more than the
/// reference kind it is reported under.
fn detector_name(verdict: &Verdict) -> String {
    if let Some(name) = verdict.opt_in_detector {
        return name.to_string();
    }
    match &verdict.detector {
        Value::String(s) => s.to_string(),
        other => doom_loop::json::to_json(other),
    }
}

fn short(fingerprint: &JsString) -> String {
    format!("{}…", fingerprint.slice_utf16(0, 8))
}

fn push_verdict(verdict: &Option<Verdict>, out: &mut String) {
    match verdict {
        Some(v) => v.write_json(out),
        None => out.push_str("null"),
    }
}
