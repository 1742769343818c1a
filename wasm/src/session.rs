//! The session engine's binding (`doom_loop::session`), in both modules:
//! the shim's `DoomLoopSession` (js/session.js) wraps it. Events arrive as
//! lowered JS values; every answer is JSON `{"value": …, "warnings": […]}`
//! (`warnings` only when there are some: the host prints them).

use doom_loop::json::{write_json_string, Value};
use doom_loop::session::{
    answer_json, verdicts_json, Call, CallAction, CallKey, Decision, Response, Session as CoreSession, SessionOptions,
};
use doom_loop::{JsString, ResolvedConfig};
use wasm_bindgen::prelude::*;

use doom_loop::fingerprint::fingerprint_lowered_prefix;
use doom_loop::json::parse_lowered_prefix;

use crate::{
    io_in_use, io_write, js_text, json_strings, lowered, lowered_from_io, lowered_string, read_io, with_io_buffer,
    Result,
};

// --- The fast read --------------------------------------------------------
//
// The shim writes a response as `{"text":…,"calls":[…]}` and each call as
// `{"id":…,"toolName":…,"malformed":…,"key":…,"args":…}` (`key` only when
// the host resolved the identity), the arguments last. Almost every call
// has no key, is well formed and names a tool without a data-form loop key:
// its identity is the fingerprint of its arguments, which is taken here
// straight from their text (the tree-free canonicalizer), so neither the
// skeleton nor the arguments are ever built as a tree — the tree was most
// of an adapter's fixed cost per response (docs/performance.md). Where the
// shim took that fingerprint itself (small plain arguments, as for a bare
// fingerprint: js/session.js), the call comes as
// `…,"malformed":false,"key":{"fingerprint":"…"},"args":null}` and is read
// here too, the fingerprint handed on as the tree read would.
//
// Anything else — another key, a malformed call, a data loop key, arguments the
// tree-free canonicalizer declines (it never reproduces an error), any
// other shape — declines the whole input, which is then parsed as a tree
// as before: the same decisions either way, this read only being faster.
// Nothing is recorded before the read succeeds.

/// A reader of the shim's lowered response over the I/O buffer's text and
/// raw strings; every method returns `None` to decline.
struct FastRead<'a> {
    text: &'a str,
    pos: usize,
    strings: &'a [&'a [u8]],
    used: usize,
}

impl<'a> FastRead<'a> {
    fn new(text: &'a str, strings: &'a [&'a [u8]]) -> Self {
        FastRead {
            text,
            pos: 0,
            strings,
            used: 0,
        }
    }

    /// The text not read yet (`None`, never a panic, if the position is
    /// not on a character boundary: a trap would end the instance).
    fn rest(&self) -> Option<&'a str> {
        self.text.get(self.pos..)
    }

    /// Consumes `token` if the text goes on with it.
    fn eat(&mut self, token: &str) -> bool {
        let found = self.rest().is_some_and(|rest| rest.starts_with(token));
        if found {
            self.pos += token.len();
        }
        found
    }

    fn token(&mut self, token: &str) -> Option<()> {
        self.eat(token).then_some(())
    }

    fn string(&mut self) -> Option<JsString> {
        let rest = self.rest()?;
        // Most strings (ids, tool names, fingerprints) have no escape and
        // no control character: taken as they are, as the parser would.
        if let Some(body) = rest.strip_prefix('"') {
            let end = body.bytes().position(|b| b == b'"' || b == b'\\' || b < 0x20);
            if let Some(end) = end.filter(|&end| body.as_bytes()[end] == b'"') {
                self.pos += end + 2;
                return Some(JsString::from(&body[..end]));
            }
        }
        match parse_lowered_prefix(rest).ok()? {
            (Value::String(s), len) => {
                self.pos += len;
                Some(s)
            }
            _ => None,
        }
    }

    /// The response's text: `null`, a literal, or the next raw string.
    fn response_text(&mut self) -> Option<Option<JsString>> {
        if self.eat("null") {
            return Some(None);
        }
        if self.eat("raw") {
            let text = std::str::from_utf8(self.strings.get(self.used)?).ok()?;
            self.used += 1;
            return Some(Some(JsString::from(text)));
        }
        self.string().map(Some)
    }

    /// One unkeyed, well-formed call keyed by its arguments, fingerprinted.
    // Out of line: `onResponse` and `onCall` share one copy (module size).
    #[inline(never)]
    fn call(&mut self, keys_by_arguments: &impl Fn(&JsString) -> bool) -> Option<Call> {
        self.token("{\"id\":")?;
        let id = self.string()?;
        self.token(",\"toolName\":")?;
        let tool_name = self.string()?;
        self.token(",\"malformed\":false,")?;
        if !keys_by_arguments(&tool_name) {
            return None;
        }
        if self.eat("\"key\":{\"fingerprint\":") {
            // The shim fingerprinted small plain arguments itself (as for a
            // bare fingerprint): read as the tree read takes it.
            let fingerprint = self.string()?;
            self.token("},\"args\":null}")?;
            return Some(Call {
                id,
                tool_name,
                args: Value::Null,
                malformed: false,
                key: CallKey::Fingerprint(fingerprint),
            });
        }
        self.token("\"args\":")?;
        let args = fingerprint_lowered_prefix(&tool_name, self.rest()?, self.strings.get(self.used..)?)?;
        self.pos += args.len;
        self.used += args.strings;
        self.token("}")?;
        Some(Call {
            id,
            tool_name,
            // Never read: the identity is the fingerprint.
            args: Value::Null,
            malformed: false,
            key: CallKey::Fingerprint(JsString::from(args.fingerprint)),
        })
    }

    fn calls(&mut self, keys_by_arguments: &impl Fn(&JsString) -> bool) -> Option<Vec<Call>> {
        self.token("[")?;
        let mut calls = Vec::new();
        if self.eat("]") {
            return Some(calls);
        }
        loop {
            calls.push(self.call(keys_by_arguments)?);
            if self.eat("]") {
                return Some(calls);
            }
            self.token(",")?;
        }
    }

    #[inline(never)]
    fn response(&mut self, keys_by_arguments: &impl Fn(&JsString) -> bool) -> Option<Response> {
        self.token("{\"text\":")?;
        let text = self.response_text()?;
        self.token(",\"calls\":")?;
        let calls = self.calls(keys_by_arguments)?;
        self.token("}")?;
        self.end()?;
        Some(Response { text, calls })
    }

    /// The whole text and every raw string read.
    fn end(&self) -> Option<()> {
        (self.pos == self.text.len() && self.used == self.strings.len()).then_some(())
    }
}

fn verdict_json(verdict: Option<&doom_loop::Verdict>) -> String {
    verdict.map_or_else(|| "null".to_string(), |v| v.to_json())
}

// --- The compact answer ------------------------------------------------
//
// `onResponse`, `onCall` and `wouldHalt` take their input in the I/O
// buffer: the shim writes the lowered response (or calls) at its start,
// then the raw strings it names. The first two answer in the same place —
// its length as the return value, or 0 for the compact answer.
//
// Almost every response and call ends the same way: each call runs, no
// verdict, no warning. Its JSON answer (≈ 300 B a call) cost the shim a
// decoded string and a `JSON.parse` — a sixth of an adapter's time per
// response, more than the call's fingerprint. So such an outcome is left
// in the I/O buffer instead, as numbers and the fingerprint's digits, and
// the shim builds the same objects from it; the call's id and tool name
// are the ones the shim lowered (one decision per call, in order).
// Anything else — a verdict, a refusal, a halt, a warning — answers JSON.
//
// Layout: the round as a little-endian f64 at 0, then one record of
// `DECISION_BYTES` per decision from `DECISIONS_AT`: the streak (f64 LE),
// a flag byte (`FLAG_*`), then from `FINGERPRINT_AT` the fingerprint's 64
// hex digits (zeros when it has none).

/// Where the first decision record starts.
const DECISIONS_AT: usize = 8;
/// The size of one decision record.
const DECISION_BYTES: usize = 80;
/// Where a record's fingerprint starts.
const FINGERPRINT_AT: usize = 16;
const FLAG_REFUSE: u8 = 1;
const FLAG_DUPLICATE_IN_ROUND: u8 = 2;
const FLAG_EXEMPT: u8 = 4;
const FLAG_MALFORMED: u8 = 8;
const FLAG_FINGERPRINT: u8 = 16;

/// A decision's compact record, when it says all the JSON would: no
/// verdict or message to carry, a fingerprint of 64 digits, and a streak
/// that JSON writes as the same number (not NaN, ±Infinity or -0).
fn compact_record(decision: &Decision) -> Option<[u8; DECISION_BYTES]> {
    let plain_streak = decision.streak.is_finite() && !(decision.streak == 0.0 && decision.streak.is_sign_negative());
    if decision.verdict.is_some() || decision.message.is_some() || !plain_streak {
        return None;
    }
    let flag = |set: bool, flag: u8| if set { flag } else { 0 };
    let mut record = [0u8; DECISION_BYTES];
    record[..8].copy_from_slice(&decision.streak.to_le_bytes());
    record[8] = flag(decision.action == CallAction::Refuse, FLAG_REFUSE)
        | flag(decision.duplicate_in_round, FLAG_DUPLICATE_IN_ROUND)
        | flag(decision.exempt, FLAG_EXEMPT)
        | flag(decision.malformed, FLAG_MALFORMED)
        | flag(decision.fingerprint.is_some(), FLAG_FINGERPRINT);
    if let Some(fingerprint) = &decision.fingerprint {
        let digits = fingerprint.as_bytes();
        if digits.len() != DECISION_BYTES - FINGERPRINT_AT {
            return None;
        }
        record[FINGERPRINT_AT..].copy_from_slice(digits);
    }
    Some(record)
}

/// One session (the shim's `DoomLoopSession`).
#[wasm_bindgen]
pub struct Session {
    inner: CoreSession,
}

impl Session {
    /// Leaves the answer in the I/O buffer: the compact one (see above;
    /// returns 0) when `compact` and the decisions allow it and no warning
    /// is pending, else the JSON answer of `json` (returns its length).
    fn answer_in_io(
        &mut self,
        compact: bool,
        round: u64,
        decisions: &[Decision],
        json: impl FnOnce() -> String,
    ) -> Result<f64> {
        let warnings = self.inner.take_warnings();
        let records = (compact && warnings.is_empty())
            .then(|| decisions.iter().map(compact_record).collect::<Option<Vec<_>>>())
            .flatten();
        let written = records.is_some_and(|records| {
            with_io_buffer(|io| {
                io_write(io, 0, &(round as f64).to_le_bytes());
                for (i, record) in records.iter().enumerate() {
                    io_write(io, DECISIONS_AT + i * DECISION_BYTES, record);
                }
            })
        });
        if written {
            return Ok(0.0);
        }
        let answer = answer_json(&json(), &warnings);
        if with_io_buffer(|io| io_write(io, 0, answer.as_bytes())) {
            Ok(answer.len() as f64)
        } else {
            Err(io_in_use().into())
        }
    }

    /// `{"value": body, "warnings": [...]}` with the warnings taken.
    fn answer(&mut self, body: &str) -> String {
        answer_json(body, &self.inner.take_warnings())
    }
}

#[wasm_bindgen]
impl Session {
    /// A session over a lowered resolved config, lowered options
    /// `{loopKeys, capabilities}` and a lowered state (`undefined`: fresh).
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str, options: &str, state: &str) -> Result<Session> {
        let config = ResolvedConfig::from_value(&lowered(config)?)?;
        let options = SessionOptions::from_value(&lowered(options)?);
        let inner = match lowered(state)? {
            Value::Undefined => CoreSession::new(config, options),
            state => CoreSession::restore(config, options, &state),
        };
        Ok(Session { inner })
    }

    /// The warnings since the last answer (the constructor's, first).
    #[wasm_bindgen(js_name = takeWarnings)]
    pub fn take_warnings(&mut self) -> String {
        json_strings(&self.inner.take_warnings())
    }

    /// `onResponse` over a lowered `{text, calls}` in the I/O buffer
    /// (`text_len` bytes, then the long strings of its text and calls raw,
    /// in document order: `strings_len` bytes, `strings_count` strings);
    /// leaves the round outcome there (see above).
    #[wasm_bindgen(js_name = onResponse)]
    pub fn on_response(&mut self, text_len: usize, strings_len: usize, strings_count: usize) -> Result<f64> {
        let keys_by_arguments = |tool: &JsString| self.inner.keys_by_arguments(tool);
        let fast = read_io(text_len, strings_len, strings_count, |text, strings| {
            FastRead::new(text, strings).response(&keys_by_arguments)
        });
        let response = match fast {
            Some(response) => response,
            None => Response::from_value(lowered_from_io(text_len, strings_len, strings_count)?)?,
        };
        let outcome = self.inner.on_response(response);
        // Compact only when it carries nothing but its round and plain
        // decisions (no text verdict, halt or verdict).
        let compact = outcome.text_verdict.is_none() && outcome.halt.is_none() && outcome.verdicts.is_empty();
        self.answer_in_io(compact, outcome.round, &outcome.decisions, || outcome.to_json())
    }

    /// One call seen alone (recorded into the current round), in the I/O
    /// buffer as in `onResponse`; leaves its decision there (see above).
    #[wasm_bindgen(js_name = onCall)]
    pub fn on_call(&mut self, text_len: usize, strings_len: usize, strings_count: usize) -> Result<f64> {
        let keys_by_arguments = |tool: &JsString| self.inner.keys_by_arguments(tool);
        let fast = read_io(text_len, strings_len, strings_count, |text, strings| {
            let mut read = FastRead::new(text, strings);
            let call = read.call(&keys_by_arguments)?;
            read.end().map(|()| call)
        });
        let call = match fast {
            Some(call) => call,
            None => Call::from_value(lowered_from_io(text_len, strings_len, strings_count)?)?,
        };
        let decision = self.inner.on_call(call);
        let round = self.inner.round();
        self.answer_in_io(true, round, std::slice::from_ref(&decision), || decision.to_json())
    }

    /// Opens a new, empty round.
    #[wasm_bindgen(js_name = beginRound)]
    pub fn begin_round(&mut self) {
        self.inner.begin_round();
    }

    /// Seals the current round of a halted run.
    #[wasm_bindgen(js_name = sealRound)]
    pub fn seal_round(&mut self) {
        self.inner.seal_round();
    }

    /// Closes the current round.
    #[wasm_bindgen(js_name = endRound)]
    pub fn end_round(&mut self) {
        self.inner.end_round();
    }

    /// A response's text alone (itself, or its JSON literal when `is_json`:
    /// a lone surrogate cannot cross as UTF-8); the verdict or null.
    #[wasm_bindgen(js_name = onText)]
    pub fn on_text(&mut self, text: &str, is_json: bool) -> Result<String> {
        let text = js_text(text, is_json)?;
        let verdict = self.inner.on_text(&text);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// A server tool's record (name as a JSON string, lowered identity).
    #[wasm_bindgen(js_name = onServerTool)]
    pub fn on_server_tool(&mut self, tool_name: &str, identity: &str) -> Result<String> {
        let name = lowered_string(tool_name)?;
        let verdict = self.inner.on_server_tool(&name, &lowered(identity)?);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// A call's result (id as a JSON string; lowered outcome, `undefined`
    /// when the tool declares none); the verdict or null.
    #[wasm_bindgen(js_name = onResult)]
    pub fn on_result(&mut self, id: &str, outcome: &str, failed: bool) -> Result<String> {
        let id = lowered_string(id)?;
        let outcome = lowered(outcome)?;
        let outcome = (!matches!(outcome, Value::Undefined)).then_some(&outcome);
        let verdict = self.inner.on_result(&id, outcome, failed);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// Whether `onResult` reads its outcome (an opt-in detector that needs
    /// it is configured); when not, the shim passes none.
    #[wasm_bindgen(js_name = readsOutcomes)]
    pub fn reads_outcomes(&self) -> bool {
        self.inner.config().beyond.reads_outcomes()
    }

    /// One response's spend; the verdict or null.
    #[wasm_bindgen(js_name = onSpend)]
    pub fn on_spend(&mut self, amount: f64) -> String {
        let verdict = self.inner.on_spend(amount);
        self.answer(&verdict_json(verdict.as_ref()))
    }

    /// A new user turn.
    #[wasm_bindgen(js_name = onUserTurn)]
    pub fn on_user_turn(&mut self) {
        self.inner.on_user_turn();
    }

    /// Resumes a lowered persisted state in place.
    pub fn resume(&mut self, state: &str) -> Result<String> {
        let state = lowered(state)?;
        self.inner.resume(&state);
        Ok(self.answer("null"))
    }

    /// The text of a call not executed because the run is halted (a JSON string), or null.
    #[wasm_bindgen(js_name = haltText)]
    pub fn halt_text(&self) -> String {
        let mut out = String::new();
        match self.inner.halt_text() {
            Some(text) => write_json_string(&text, &mut out),
            None => out.push_str("null"),
        }
        out
    }

    /// Re-arms a restored halt.
    #[wasm_bindgen(js_name = resumeHalt)]
    pub fn resume_halt(&mut self) {
        self.inner.resume_halt();
    }

    /// Would these lowered calls, in the I/O buffer as in `onResponse`, as
    /// the next round, halt the run?
    #[wasm_bindgen(js_name = wouldHalt)]
    pub fn would_halt(&self, text_len: usize, strings_len: usize, strings_count: usize) -> Result<bool> {
        Ok(self.inner.would_halt(&Call::list_from_value(lowered_from_io(
            text_len,
            strings_len,
            strings_count,
        )?)?))
    }

    /// The queued guidance (a JSON string or null), consumed.
    #[wasm_bindgen(js_name = takeGuidance)]
    pub fn take_guidance(&mut self) -> String {
        let mut out = String::new();
        match self.inner.take_guidance() {
            Some(text) => write_json_string(&text, &mut out),
            None => out.push_str("null"),
        }
        out
    }

    /// Takes a pending escalation; true when the next request escalates.
    #[wasm_bindgen(js_name = takeEscalation)]
    pub fn take_escalation(&mut self, apply: bool) -> bool {
        self.inner.take_escalation(apply)
    }

    /// `{guidance, escalate}` for the next request, consumed.
    #[wasm_bindgen(js_name = nextRequest)]
    pub fn next_request(&mut self) -> String {
        self.inner.next_request().to_json()
    }

    /// The halt verdict or null.
    pub fn halt(&self) -> String {
        verdict_json(self.inner.halt())
    }

    /// Every verdict so far.
    pub fn verdicts(&self) -> String {
        verdicts_json(self.inner.verdicts())
    }

    /// The decision for a call of the current round (id as a JSON string), or null.
    pub fn decision(&self, id: &str) -> Result<String> {
        let id: JsString = lowered_string(id)?;
        Ok(self
            .inner
            .decision(&id)
            .map_or_else(|| "null".to_string(), |d| d.to_json()))
    }

    /// The tool of a call awaiting its result (id as a JSON string), as a
    /// JSON string, or `undefined`.
    #[wasm_bindgen(js_name = pendingTool)]
    pub fn pending_tool(&self, id: &str) -> Result<Option<String>> {
        let id: JsString = lowered_string(id)?;
        Ok(self.inner.pending_tool(&id).map(|name| {
            let mut out = String::new();
            write_json_string(name, &mut out);
            out
        }))
    }

    /// The current round number.
    pub fn round(&self) -> f64 {
        self.inner.round() as f64
    }

    /// The state to persist, as JSON.
    #[wasm_bindgen(js_name = getState)]
    pub fn get_state(&self) -> String {
        self.inner.state_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doom_loop::fingerprint::{fingerprint_lowered_tool_call, fingerprint_lowered_tool_call_with_strings};

    /// The value, or the test fails saying what was expected (the binding's
    /// own code has no unwrap: a panic there would trap the instance).
    fn some<T>(value: Option<T>, what: &str) -> T {
        match value {
            Some(value) => value,
            None => panic!("{what}"),
        }
    }

    fn ok<T, E: std::fmt::Debug>(value: std::result::Result<T, E>) -> T {
        match value {
            Ok(value) => value,
            Err(error) => panic!("{error:?}"),
        }
    }

    fn lowered_string(text: &str) -> JsString {
        some(
            ok(doom_loop::json::parse_lowered(text)).as_js_string().cloned(),
            "a string",
        )
    }

    fn no_loop_keys(_: &JsString) -> bool {
        true
    }

    fn read(text: &str, strings: &[&[u8]]) -> Option<Response> {
        FastRead::new(text, strings).response(&no_loop_keys)
    }

    fn key(call: &Call) -> &str {
        match &call.key {
            CallKey::Fingerprint(fingerprint) => fingerprint.as_str().unwrap_or_default(),
            _ => "",
        }
    }

    #[test]
    fn reads_the_shims_response_and_fingerprints_each_call_from_its_text() {
        // As js/session.js writes it: the arguments last, raw strings in
        // document order (the response's text first).
        let text = concat!(
            r#"{"text":raw,"calls":[{"id":"a\ud800","toolName":"edit","malformed":false,"args":{"path":"b","content":raw}},"#,
            r#"{"id":"b","toolName":"t\ud800","malformed":false,"args":[1,hole,undefined,1.50]}]}"#
        );
        let strings: &[&[u8]] = &[b"said", b"x = \"1\"\n"];
        let response = some(read(text, strings), "the shim's shape reads fast");
        assert_eq!(response.text, Some(JsString::from("said")));
        assert_eq!(response.calls.len(), 2);
        let edit = &response.calls[0];
        assert_eq!(edit.id, lowered_string(r#""a\ud800""#));
        let expected = ok(fingerprint_lowered_tool_call_with_strings(
            &JsString::from("edit"),
            r#"{"path":"b","content":raw}"#,
            &strings[1..],
        ));
        assert_eq!(key(edit), expected);
        let lone = lowered_string(r#""t\ud800""#);
        assert_eq!(response.calls[1].tool_name, lone);
        assert_eq!(
            key(&response.calls[1]),
            ok(fingerprint_lowered_tool_call(&lone, "[1,hole,undefined,1.5]"))
        );
        assert!(read(r#"{"text":null,"calls":[]}"#, &[]).is_some_and(|r| r.text.is_none() && r.calls.is_empty()));
        // Plain strings are taken as they are, escaped ones through the
        // parser: the same strings either way.
        let strings = [
            (r#""é x""#, "é x"),
            (r#""a\"b""#, "a\"b"),
            (r#""\u00e9\n""#, "é\n"),
            (r#""""#, ""),
        ];
        for (literal, expected) in strings {
            let text = format!(r#"{{"text":{literal},"calls":[]}}"#);
            let response = some(read(&text, &[]), "a string reads fast");
            assert_eq!(response.text, Some(JsString::from(expected)), "{literal}");
        }
    }

    #[test]
    fn declines_whatever_the_tree_must_decide() {
        let call = |rest: &str| format!(r#"{{"text":"","calls":[{{"id":"1","toolName":"t","malformed":{rest}}}]}}"#);
        for text in [
            call(r#"true,"args":"{oops""#),
            call(r#"false,"key":"exempt","args":{}"#),
            call(r#"false,"key":{"material":1},"args":{}"#),
            call(r#"false,"args":{"n":bigint}"#),
            call(r#"false,"args":[circular]"#),
            call(r#"false,"args":{},"extra":1"#),
            // A raw control character: no string the shim writes, and not JSON.
            "{\"text\":\"\u{1}\",\"calls\":[]}".to_string(),
            // The old order (arguments before the flags).
            r#"{"text":"","calls":[{"id":"1","toolName":"t","args":{},"malformed":false}]}"#.to_string(),
            r#"{"text":"","calls":[]} "#.to_string(),
            r#"{"calls":[],"text":""}"#.to_string(),
        ] {
            assert!(read(&text, &[]).is_none(), "{text}");
        }
        // A raw string left unused, or one too few.
        let plain = call(r#"false,"args":{}"#);
        assert!(read(&plain, &[]).is_some());
        assert!(read(&plain, &[b"spare"]).is_none());
        assert!(read(&call(r#"false,"args":[raw]"#), &[]).is_none());
        // Not UTF-8: no JS string encodes to it.
        assert!(read(&call(r#"false,"args":[raw]"#), &[&[0xFF]]).is_none());
        // A tool with a data-form loop key needs its arguments as a tree.
        let keyed = |tool: &JsString| tool.as_str() != Some("t");
        assert!(FastRead::new(&plain, &[]).response(&keyed).is_none());
    }

    #[test]
    fn reads_a_fingerprint_the_shim_took_as_the_tree_read_does() {
        let digits = "0123456789abcdef".repeat(4);
        let text = format!(
            r#"{{"text":null,"calls":[{{"id":"a","toolName":"t","malformed":false,"key":{{"fingerprint":"{digits}"}},"args":null}},{{"id":"b","toolName":"t","malformed":false,"args":{{}}}}]}}"#
        );
        let response = some(read(&text, &[]), "a shim's fingerprint reads fast");
        assert_eq!(key(&response.calls[0]), digits);
        assert_eq!(
            response.calls[1].key,
            CallKey::Fingerprint(ok(fingerprint_lowered_tool_call(&JsString::from("t"), "{}")).into())
        );
        // Exactly what the tree read makes of the same call.
        let tree = ok(Response::from_value(ok(doom_loop::json::parse_lowered(&text))));
        assert_eq!(tree.calls[0].key, response.calls[0].key);
        // Anything after the fingerprint but the arguments' null, or a tool
        // keyed by a data-form loop key: the tree decides.
        for rest in [r#"},"args":{}}"#, r#"},"args":null,"x":1}"#, r#","x":1},"args":null}"#] {
            let odd = format!(
                r#"{{"text":null,"calls":[{{"id":"a","toolName":"t","malformed":false,"key":{{"fingerprint":"{digits}"{rest}]}}"#
            );
            assert!(read(&odd, &[]).is_none(), "{odd}");
        }
        let keyed = |tool: &JsString| tool.as_str() != Some("t");
        assert!(FastRead::new(&text, &[]).response(&keyed).is_none());
    }

    #[test]
    fn one_call_alone_reads_as_in_a_response() {
        let text = r#"{"id":"x","toolName":"t","malformed":false,"args":{"b":1,"a":2}}"#;
        let mut read = FastRead::new(text, &[]);
        let call = some(read.call(&no_loop_keys), "a call reads fast");
        assert!(read.end().is_some());
        assert_eq!(
            key(&call),
            ok(fingerprint_lowered_tool_call(&JsString::from("t"), r#"{"a":2,"b":1}"#))
        );
    }
}
