//! The transcript: what an agent run leaves behind, per model turn the
//! assistant's text and the tool calls it made (with their results where
//! the trace recorded them).
//!
//! Below both of its users: the importers ([`crate::import`]) build it
//! from the formats agents write, and the replay ([`crate::replay`]) runs
//! it through the detector. Neither imports the other's types from the
//! other, so the two cannot form a circle.

use doom_loop::js_string::JsString;
use doom_loop::json::{write_json_string, Object, Value};

use crate::json_list::write_list;

/// One tool call of a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct TranscriptCall {
    /// The tool.
    pub tool_name: JsString,
    /// Parsed arguments, or the raw text when it is not JSON.
    pub args: Value,
    /// True when `args` is raw text that did not parse.
    pub malformed: bool,
    /// What the call returned, where the trace recorded it (any JSON value;
    /// `None` when unknown). Outcome-aware detection compares these.
    pub result: Option<Value>,
    /// The call failed (an error result).
    pub failed: bool,
    /// The id its result names (`tool_call_id`, `tool_use_id`, `call_id`),
    /// where the format has one: what a gateway rewrites a refused call's
    /// result by.
    pub id: Option<JsString>,
}

/// One model turn: its text and its tool calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TranscriptRound {
    /// Assistant text, if any.
    pub text: Option<JsString>,
    /// Tool calls, in order.
    pub calls: Vec<TranscriptCall>,
    /// Model tokens this turn cost (input + output, cache included), where
    /// the log records usage; what a stop before it would have saved.
    pub tokens: Option<f64>,
    /// A user message came between the previous turn and this one (the
    /// chat, Anthropic and Responses readers mark it; the others leave it
    /// false). A user turn lifts a halt.
    pub after_user: bool,
}

/// A transcript ready to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    /// The `doomLoop` option (default `true`).
    pub option: Value,
    /// Per-tool `loopKey` declarations (data forms: field lists or `false`).
    pub loop_keys: Object,
    /// Per-tool `loopEffect` declarations (`"write"` or `"read"`), read by
    /// the opt-in effect-aware streaks.
    pub loop_effects: Object,
    /// The rounds.
    pub rounds: Vec<TranscriptRound>,
    /// What the import noticed about the log's declarations and read past
    /// (tool annotations that are not booleans): the replay says them
    /// first, the evaluation once per run.
    pub warnings: Vec<String>,
}

impl TranscriptCall {
    /// A call whose result is not known.
    pub fn new(tool_name: JsString, args: Value, malformed: bool) -> Self {
        TranscriptCall {
            tool_name,
            args,
            malformed,
            result: None,
            failed: false,
            id: None,
        }
    }
}

impl Transcript {
    /// The transcript as rounds-format JSON: `{doomLoop, loopKeys, loopEffects?, rounds:
    /// [{text, calls: [{toolName, args, malformed, result, failed}]}]}` —
    /// what every importer produced, for the npm package and the
    /// playground. A malformed call's `args` is its raw text.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"doomLoop\":");
        out.push_str(&doom_loop::json::to_json(&self.option));
        out.push_str(",\"loopKeys\":");
        out.push_str(&doom_loop::json::to_json(&Value::Object(self.loop_keys.clone())));
        if !self.loop_effects.is_empty() {
            out.push_str(",\"loopEffects\":");
            out.push_str(&doom_loop::json::to_json(&Value::Object(self.loop_effects.clone())));
        }
        out.push_str(",\"rounds\":[");
        write_list(&mut out, &self.rounds, |round, out| {
            out.push_str("{\"text\":");
            match &round.text {
                Some(text) => write_json_string(text, out),
                None => out.push_str("null"),
            }
            out.push_str(",\"calls\":[");
            write_list(out, &round.calls, |call, out| {
                out.push_str("{\"toolName\":");
                write_json_string(&call.tool_name, out);
                out.push_str(",\"args\":");
                out.push_str(&doom_loop::json::to_json(&call.args));
                out.push_str(&format!(",\"malformed\":{},\"result\":", call.malformed));
                match &call.result {
                    Some(result) => out.push_str(&doom_loop::json::to_json(result)),
                    None => out.push_str("null"),
                }
                out.push_str(&format!(",\"failed\":{}}}", call.failed));
            });
            out.push(']');
            if let Some(tokens) = round.tokens {
                out.push_str(",\"tokens\":");
                out.push_str(&doom_loop::json::js_number(tokens));
            }
            out.push('}');
        });
        out.push_str("]}");
        out
    }
}
