//! Python binding of the `doom-loop` core: the native module
//! `doom_loop._core` of the `doom-loop` wheel, wrapped by the pure-Python
//! package `doom_loop` (python/doom_loop/).
//!
//! The boundary is text, as in the wasm binding: Python values arrive as
//! the core's lowered text (JSON plus `NaN`, `Infinity`, written by
//! `json.dumps` in the package), a model's arguments as their own JSON
//! text, and every answer leaves as JSON text for `json.loads`. Everything
//! that decides — canonicalization, fingerprints, verdicts, messages,
//! warnings, the session engine, the gateway — is the core's; this crate
//! only converts. Every failure becomes one exception type,
//! `DoomLoopError` (a `ValueError`), carrying the core's message; nothing
//! here unwraps. Inputs from 64 KiB up are worked on with the GIL
//! released: the work touches only Rust-owned copies.

use std::borrow::Cow;

use doom_loop::canonical::canonicalize_lowered;
use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option, ResolvedConfig};
use doom_loop::fingerprint::{fingerprint_lowered_key_material, fingerprint_lowered_tool_call};
use doom_loop::json::{parse, parse_lowered, to_json, write_json_string, Value};
use doom_loop::loop_key::{resolve_loop_key_material, LoopKey};
use doom_loop::monitor::{DeclaredCall, RecordOptions};
use doom_loop::session::{answer_json, verdicts_json, Call, Response, Session as CoreSession, SessionOptions};
use doom_loop::text::RepetitionThresholds;
use doom_loop::{canonicalize, fingerprint_key_material, fingerprint_tool_call, DoomLoopMonitor, JsString};
use doom_loop_gateway::{decide, Api, GatewayOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

create_exception!(
    _core,
    DoomLoopError,
    PyValueError,
    "An error of the doom-loop core (its message is the reference's)."
);

/// Inputs from this size up are worked on with the GIL released.
const DETACH_FROM: usize = 64 * 1024;

/// The one conversion of a core error.
fn error(error: doom_loop::Error) -> PyErr {
    DoomLoopError::new_err(error.message().to_string())
}

fn invalid(message: impl Into<String>) -> PyErr {
    DoomLoopError::new_err(message.into())
}

type Result<T> = std::result::Result<T, PyErr>;

/// Runs `work` with the GIL released when `len` is large (the closure only
/// touches owned Rust data).
fn detached<T: Send>(py: Python<'_>, len: usize, work: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_FROM {
        py.detach(work)
    } else {
        work()
    }
}

/// A text argument: `str`, or `bytes` / `bytearray` holding UTF-8.
fn text_of<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> Result<Cow<'a, str>> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Cow::Owned(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes())
            .map(|s| Cow::Owned(s.to_string()))
            .map_err(|e| invalid(format!("{what} is not UTF-8 (byte {})", e.valid_up_to())));
    }
    if let Ok(b) = value.cast::<PyByteArray>() {
        return String::from_utf8(b.to_vec())
            .map(Cow::Owned)
            .map_err(|e| invalid(format!("{what} is not UTF-8 (byte {})", e.utf8_error().valid_up_to())));
    }
    Err(invalid(format!(
        "{what} must be str or bytes, not {}",
        value.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

/// A Python `str` as a JS string: a lone surrogate (which UTF-8 cannot
/// carry, and a Python `str` can hold) stays that code unit.
fn js_string_of(value: &Bound<'_, PyAny>) -> Result<JsString> {
    let s = value.cast::<PyString>().map_err(|_| invalid("expected a str"))?;
    if let Ok(text) = s.to_cow() {
        return Ok(JsString::from(&*text));
    }
    let encoded = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let bytes = encoded.cast::<PyBytes>().map_err(|_| invalid("expected a str"))?;
    let units: Vec<u16> = bytes
        .as_bytes()
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    Ok(JsString::from_code_units(&units))
}

fn lowered(text: &str) -> Result<Value> {
    parse_lowered(text).map_err(error)
}

/// A text passed either as itself or, when it holds a lone surrogate
/// (which UTF-8 cannot carry), as its JSON string literal.
fn js_text(text: &str, is_json: bool) -> Result<JsString> {
    if !is_json {
        return Ok(JsString::from(text));
    }
    match lowered(text)? {
        Value::String(s) => Ok(s),
        _ => Err(invalid("expected a JSON string")),
    }
}

fn json_strings(items: &[String]) -> String {
    let values: Vec<Value> = items
        .iter()
        .map(|w| Value::String(JsString::from(w.as_str())))
        .collect();
    to_json(&Value::Array(values))
}

fn string_json(s: &JsString) -> String {
    let mut out = String::new();
    write_json_string(s, &mut out);
    out
}

// --- Canonical form and fingerprints ---------------------------------------

/// `canonicalizeKeyMaterial` of lowered text.
#[pyfunction]
fn canonicalize_lowered_text(py: Python<'_>, value: &Bound<'_, PyAny>) -> Result<String> {
    let text = text_of(value, "value")?.into_owned();
    detached(py, text.len(), move || canonicalize_lowered(&text)).map_err(error)
}

/// Whether `text` has no bare word outside its strings but `true`,
/// `false`, `null` and exponents: then the lowered reader (which also
/// knows `NaN`, `undefined`, …) reads it as `JSON.parse` does, and the
/// core canonicalizes it straight from the text, building no tree (4× the
/// speed on a megabyte of rows).
fn plain_json(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b if b.is_ascii_alphabetic() => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    i += 1;
                }
                if !matches!(&bytes[start..i], b"true" | b"false" | b"null" | b"e" | b"E") {
                    return false;
                }
            }
            _ => i += 1,
        }
    }
    true
}

/// `canonicalizeKeyMaterial(JSON.parse(text))`.
#[pyfunction]
fn canonicalize_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> Result<String> {
    let text = text_of(text, "JSON text")?.into_owned();
    detached(py, text.len(), move || {
        if plain_json(&text) {
            canonicalize_lowered(&text)
        } else {
            canonicalize(&parse(&text)?)
        }
    })
    .map_err(error)
}

/// `fingerprintToolCall` of lowered key material.
#[pyfunction]
fn fingerprint_tool_call_lowered(
    py: Python<'_>,
    tool_name: &Bound<'_, PyAny>,
    key_material: &Bound<'_, PyAny>,
) -> Result<String> {
    let text = text_of(key_material, "key material")?.into_owned();
    let tool = js_string_of(tool_name)?;
    detached(py, text.len(), move || fingerprint_lowered_tool_call(&tool, &text)).map_err(error)
}

/// `fingerprintToolCall(toolName, JSON.parse(text))`.
#[pyfunction]
fn fingerprint_tool_call_json(py: Python<'_>, tool_name: &Bound<'_, PyAny>, text: &Bound<'_, PyAny>) -> Result<String> {
    let text = text_of(text, "arguments")?.into_owned();
    let tool = js_string_of(tool_name)?;
    detached(py, text.len(), move || {
        if plain_json(&text) {
            fingerprint_lowered_tool_call(&tool, &text)
        } else {
            fingerprint_tool_call(&tool, &parse(&text)?)
        }
    })
    .map_err(error)
}

/// `fingerprintKeyMaterial` of lowered key material.
#[pyfunction]
fn fingerprint_key_material_lowered(py: Python<'_>, key_material: &Bound<'_, PyAny>) -> Result<String> {
    let text = text_of(key_material, "key material")?.into_owned();
    detached(py, text.len(), move || fingerprint_lowered_key_material(&text)).map_err(error)
}

/// `fingerprintKeyMaterial(JSON.parse(text))`.
#[pyfunction]
fn fingerprint_key_material_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> Result<String> {
    let text = text_of(text, "JSON text")?.into_owned();
    detached(py, text.len(), move || {
        if plain_json(&text) {
            fingerprint_lowered_key_material(&text)
        } else {
            fingerprint_key_material(&parse(&text)?)
        }
    })
    .map_err(error)
}

// --- Options, text, loop keys ------------------------------------------------

/// `RECOMMENDED_DOOM_LOOP_OPTION` as JSON.
#[pyfunction]
fn recommended_option_json() -> String {
    to_json(&recommended_doom_loop_option())
}

/// `resolveDoomLoopOption` of a lowered option (`None`: `undefined`):
/// JSON `{resolved, warnings}`; a configuration error raises.
#[pyfunction]
#[pyo3(signature = (option=None))]
fn resolve_option(option: Option<&str>) -> Result<String> {
    let option = option.map(lowered).transpose()?;
    let resolution = resolve_doom_loop_option(option.as_ref());
    let resolved = resolution.result.map_err(error)?;
    Ok(format!(
        "{{\"resolved\":{},\"warnings\":{}}}",
        resolved.map_or_else(|| "null".to_string(), |c| c.to_json()),
        json_strings(&resolution.warnings)
    ))
}

/// `detectTextRepetition`: JSON result or `null`.
#[pyfunction]
#[pyo3(signature = (text, options=None, is_json=false))]
fn detect_text_repetition(py: Python<'_>, text: &str, options: Option<&str>, is_json: bool) -> Result<String> {
    let options = options.map(lowered).transpose()?;
    let thresholds = RepetitionThresholds::from_js_options(options.as_ref());
    let text = js_text(text, is_json)?;
    Ok(detached(py, text.as_bytes().len(), move || {
        doom_loop::detect_text_repetition(&text, &thresholds).map_or_else(|| "null".to_string(), |r| r.to_json())
    }))
}

/// `resolveLoopKeyMaterial` for a data declaration (lowered; `None`:
/// absent) over lowered arguments: the reference's JSON resolution.
#[pyfunction]
#[pyo3(signature = (loop_key, args))]
fn resolve_loop_key(loop_key: Option<&str>, args: &str) -> Result<String> {
    let declaration = loop_key.map(lowered).transpose()?;
    let args = lowered(args)?;
    let loop_key = match &declaration {
        None | Some(Value::Undefined) => LoopKey::Absent,
        Some(other) => LoopKey::Declared(other),
    };
    Ok(resolve_loop_key_material(loop_key, &args).map_err(error)?.to_json())
}

// --- The monitor ---------------------------------------------------------

/// The detector state machine (`DoomLoopMonitor`).
#[pyclass(module = "doom_loop._core")]
struct Monitor {
    inner: DoomLoopMonitor,
}

#[pymethods]
impl Monitor {
    /// A monitor over a resolved configuration (JSON).
    #[new]
    fn new(config: &str) -> Result<Monitor> {
        let config = ResolvedConfig::from_value(&lowered(config)?).map_err(error)?;
        Ok(Monitor {
            inner: DoomLoopMonitor::new(config),
        })
    }

    /// `declareRound` over lowered `[{toolName, keyMaterial}]`; JSON warnings.
    fn declare_round(&mut self, round: f64, calls: &str) -> Result<String> {
        let Value::Array(items) = lowered(calls)? else {
            return Err(invalid("declareRound: calls must be an array"));
        };
        let calls: Vec<DeclaredCall> = items.iter().map(DeclaredCall::from_value).collect();
        Ok(json_strings(&self.inner.declare_round(round, &calls)))
    }

    /// `recordToolCall` of lowered key material and options; JSON record.
    #[pyo3(signature = (tool_name, key_material, round, options=None))]
    fn record_tool_call(
        &mut self,
        tool_name: &Bound<'_, PyAny>,
        key_material: &str,
        round: f64,
        options: Option<&str>,
    ) -> Result<String> {
        let options = options.map(lowered).transpose()?;
        let options = RecordOptions::from_js(options.as_ref());
        let record = self
            .inner
            .record_lowered_call(&js_string_of(tool_name)?, key_material, round, &options)
            .map_err(error)?;
        Ok(record.to_json())
    }

    /// `recordAssistantText`; JSON verdict or `null`.
    #[pyo3(signature = (text, is_json=false))]
    fn record_assistant_text(&mut self, text: &str, is_json: bool) -> Result<String> {
        Ok(self
            .inner
            .record_assistant_text(&js_text(text, is_json)?)
            .map_or_else(|| "null".to_string(), |v| v.to_json()))
    }

    /// One call's result (lowered outcome; `None`: none declared); JSON verdict or `null`.
    #[pyo3(signature = (tool_name, input, outcome, failed, round))]
    fn record_tool_result(
        &mut self,
        tool_name: &str,
        input: &str,
        outcome: Option<&str>,
        failed: bool,
        round: f64,
    ) -> Result<String> {
        let outcome = outcome.map(lowered).transpose()?;
        let verdict = self
            .inner
            .record_tool_result(
                &JsString::from(tool_name),
                &JsString::from(input),
                outcome.as_ref(),
                failed,
                round,
            )
            .map_err(error)?;
        Ok(verdict.map_or_else(|| "null".to_string(), |v| v.to_json()))
    }

    /// The opt-in budget guard: one turn's spend; JSON verdict or `null`.
    fn record_spend(&mut self, amount: f64) -> String {
        self.inner
            .record_spend(amount)
            .map_or_else(|| "null".to_string(), |v| v.to_json())
    }

    /// `resetTextStreak`.
    fn reset_text_streak(&mut self) {
        self.inner.reset_text_streak();
    }

    /// `canEscalate`.
    fn can_escalate(&self) -> bool {
        self.inner.can_escalate()
    }

    /// `consumeEscalation`.
    fn consume_escalation(&mut self) {
        self.inner.consume_escalation();
    }

    /// `getState` as JSON.
    fn get_state(&self) -> String {
        to_json(&self.inner.get_state())
    }

    /// `restore` of a lowered blob; JSON warnings (fails open, as the reference).
    fn restore(&mut self, state: &str) -> Result<String> {
        Ok(json_strings(&self.inner.restore(&lowered(state)?)))
    }
}

// --- The session engine -------------------------------------------------

/// One call for the session: `(id, tool_name, arguments, is_json)` —
/// arguments as the model's JSON text (`is_json`; text that does not parse
/// is a malformed call identified by its raw text, as in the JS shim) or as
/// lowered text.
type CallInput<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, String, bool);

fn call_of((id, tool_name, arguments, is_json): CallInput<'_>) -> Result<Call> {
    let (id, tool_name) = (js_string_of(&id)?, js_string_of(&tool_name)?);
    if !is_json {
        return Ok(Call::new(id, tool_name, lowered(&arguments)?));
    }
    Ok(match parse(&arguments) {
        Ok(args) => Call::new(id, tool_name, args),
        Err(_) => Call::malformed(id, tool_name, arguments.as_str()),
    })
}

fn verdict_json(verdict: Option<&doom_loop::Verdict>) -> String {
    verdict.map_or_else(|| "null".to_string(), |v| v.to_json())
}

/// One agent run (`doom_loop::session::Session`). Every answer that may
/// carry warnings is JSON `{"value": …, "warnings": [...]}`.
#[pyclass(module = "doom_loop._core")]
struct Session {
    inner: CoreSession,
}

impl Session {
    fn answer(&mut self, body: &str) -> String {
        answer_json(body, &self.inner.take_warnings())
    }
}

#[pymethods]
impl Session {
    /// A session over a resolved config (JSON), lowered options
    /// `{loopKeys, loopEffects, capabilities}` and a lowered state (`None`: fresh).
    #[new]
    #[pyo3(signature = (config, options, state=None))]
    fn new(config: &str, options: &str, state: Option<&str>) -> Result<Session> {
        let config = ResolvedConfig::from_value(&lowered(config)?).map_err(error)?;
        let options = SessionOptions::from_value(&lowered(options)?);
        let inner = match state.map(lowered).transpose()? {
            None | Some(Value::Undefined) => CoreSession::new(config, options),
            Some(state) => CoreSession::restore(config, options, &state),
        };
        Ok(Session { inner })
    }

    /// The warnings since the last answer (the constructor's, first).
    fn take_warnings(&mut self) -> String {
        json_strings(&self.inner.take_warnings())
    }

    /// A model response: its text and its calls; the round's outcome.
    #[pyo3(signature = (text, calls, is_json=false))]
    fn on_response(
        &mut self,
        py: Python<'_>,
        text: Option<&str>,
        calls: Vec<CallInput<'_>>,
        is_json: bool,
    ) -> Result<String> {
        let len: usize = calls.iter().map(|c| c.2.len()).sum();
        let calls = calls.into_iter().map(call_of).collect::<Result<Vec<_>>>()?;
        let response = Response {
            text: text.map(|t| js_text(t, is_json)).transpose()?,
            calls,
        };
        let inner = &mut self.inner;
        let body = detached(py, len, move || inner.on_response(response).to_json());
        Ok(self.answer(&body))
    }

    /// A response given as lowered `{text, calls}` (the JS shim's shape).
    fn on_response_lowered(&mut self, response: &str) -> Result<String> {
        let response = Response::from_value(lowered(response)?).map_err(error)?;
        let body = self.inner.on_response(response).to_json();
        Ok(self.answer(&body))
    }

    /// One call seen alone (recorded into the current round); its decision.
    fn on_call(&mut self, call: CallInput<'_>) -> Result<String> {
        let call = call_of(call)?;
        let body = self.inner.on_call(call).to_json();
        Ok(self.answer(&body))
    }

    /// Opens a new, empty round.
    fn begin_round(&mut self) {
        self.inner.begin_round();
    }

    /// Seals the current round of a halted run.
    fn seal_round(&mut self) {
        self.inner.seal_round();
    }

    /// Closes the current round.
    fn end_round(&mut self) {
        self.inner.end_round();
    }

    /// A response's text alone; the verdict or null.
    #[pyo3(signature = (text, is_json=false))]
    fn on_text(&mut self, text: &str, is_json: bool) -> Result<String> {
        let verdict = self.inner.on_text(&js_text(text, is_json)?);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// A server tool's record (lowered identity); the verdict or null.
    fn on_server_tool(&mut self, tool_name: &str, identity: &str) -> Result<String> {
        let verdict = self
            .inner
            .on_server_tool(&JsString::from(tool_name), &lowered(identity)?);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// A call's result (lowered outcome; `None` when the tool declares
    /// none); the verdict or null.
    #[pyo3(signature = (id, outcome=None, failed=false))]
    fn on_result(&mut self, id: &str, outcome: Option<&str>, failed: bool) -> Result<String> {
        let outcome = outcome.map(lowered).transpose()?;
        let verdict = self.inner.on_result(&JsString::from(id), outcome.as_ref(), failed);
        Ok(self.answer(&verdict_json(verdict.as_ref())))
    }

    /// Whether `on_result` reads its outcome.
    fn reads_outcomes(&self) -> bool {
        self.inner.config().beyond.reads_outcomes()
    }

    /// One response's spend; the verdict or null.
    fn on_spend(&mut self, amount: f64) -> String {
        let verdict = self.inner.on_spend(amount);
        self.answer(&verdict_json(verdict.as_ref()))
    }

    /// A new user turn (lifts a halt).
    fn on_user_turn(&mut self) {
        self.inner.on_user_turn();
    }

    /// Resumes a lowered persisted state in place (fails open).
    fn resume(&mut self, state: &str) -> Result<String> {
        let state = lowered(state)?;
        self.inner.resume(&state);
        Ok(self.answer("null"))
    }

    /// The text of a call not executed because the run is halted, or null (JSON).
    fn halt_text(&self) -> String {
        self.inner
            .halt_text()
            .map_or_else(|| "null".to_string(), |t| string_json(&t))
    }

    /// Re-arms a restored halt.
    fn resume_halt(&mut self) {
        self.inner.resume_halt();
    }

    /// Would these calls, as the next round, halt the run?
    fn would_halt(&self, calls: Vec<CallInput<'_>>) -> Result<bool> {
        let calls = calls.into_iter().map(call_of).collect::<Result<Vec<_>>>()?;
        Ok(self.inner.would_halt(&calls))
    }

    /// `{guidance, escalate}` for the next request, consumed (JSON).
    fn next_request(&mut self) -> String {
        self.inner.next_request().to_json()
    }

    /// The halt verdict or null (JSON).
    fn halt(&self) -> String {
        verdict_json(self.inner.halt())
    }

    /// Every verdict so far (JSON).
    fn verdicts(&self) -> String {
        verdicts_json(self.inner.verdicts())
    }

    /// The decision for a call of the current round, or null (JSON).
    fn decision(&self, id: &str) -> String {
        self.inner
            .decision(&JsString::from(id))
            .map_or_else(|| "null".to_string(), |d| d.to_json())
    }

    /// The current round number.
    #[getter]
    fn round(&self) -> u64 {
        self.inner.round()
    }

    /// The state to persist (JSON; the reference's `doomLoop` blob).
    fn get_state(&self) -> String {
        self.inner.state_json()
    }
}

// --- The gateway ------------------------------------------------------------

fn gateway_options(option: Option<&str>, loop_keys: Option<&str>) -> Result<GatewayOptions> {
    let mut options = GatewayOptions::default();
    if let Some(option) = option {
        options.option = lowered(option)?;
    }
    if let Some(loop_keys) = loop_keys {
        match lowered(loop_keys)? {
            Value::Object(keys) => options.loop_keys = keys,
            _ => return Err(invalid("loop_keys must be an object")),
        }
    }
    Ok(options)
}

fn api_of(api: &str) -> Result<Api> {
    Api::from_name(api).ok_or_else(|| invalid(format!("unknown API {api:?}: chat, responses or anthropic")))
}

fn body_of(body: &Bound<'_, PyAny>) -> Result<Vec<u8>> {
    if let Ok(b) = body.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    Ok(text_of(body, "body")?.into_owned().into_bytes())
}

/// Decides one LLM API request (`chat`, `responses` or `anthropic`) by
/// replaying its whole conversation: `option` and `loop_keys` are lowered
/// (`None`: the recommended option, no loop keys). JSON `{action, body?,
/// contentType?, headers, log}`.
#[pyfunction]
#[pyo3(signature = (api, body, option=None, loop_keys=None))]
fn gateway_decide(
    py: Python<'_>,
    api: &str,
    body: &Bound<'_, PyAny>,
    option: Option<&str>,
    loop_keys: Option<&str>,
) -> Result<String> {
    let (api, options, body) = (api_of(api)?, gateway_options(option, loop_keys)?, body_of(body)?);
    Ok(detached(py, body.len(), move || decide(api, &body, &options).to_json()))
}

/// The gateway with its cache of conversation prefixes (`Gateway` of
/// doom-loop-gateway): the same decisions as `gateway_decide`, an agent's
/// next request going on from its previous one instead of a whole replay.
#[pyclass(module = "doom_loop._core")]
struct Gateway {
    inner: doom_loop_gateway::Gateway,
}

#[pymethods]
impl Gateway {
    #[new]
    #[pyo3(signature = (option=None, loop_keys=None, capacity=256))]
    fn new(option: Option<&str>, loop_keys: Option<&str>, capacity: usize) -> Result<Gateway> {
        Ok(Gateway {
            inner: doom_loop_gateway::Gateway::new(gateway_options(option, loop_keys)?, capacity),
        })
    }

    /// Decides one request (JSON, as `gateway_decide`).
    fn decide(&mut self, py: Python<'_>, api: &str, body: &Bound<'_, PyAny>) -> Result<String> {
        let (api, body) = (api_of(api)?, body_of(body)?);
        let inner = &mut self.inner;
        Ok(detached(py, body.len(), move || inner.decide(api, &body).to_json()))
    }
}

/// The native module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DoomLoopError", m.py().get_type::<DoomLoopError>())?;
    m.add_function(wrap_pyfunction!(canonicalize_lowered_text, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize_json, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_tool_call_lowered, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_tool_call_json, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_key_material_lowered, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_key_material_json, m)?)?;
    m.add_function(wrap_pyfunction!(recommended_option_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_option, m)?)?;
    m.add_function(wrap_pyfunction!(detect_text_repetition, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_loop_key, m)?)?;
    m.add_function(wrap_pyfunction!(gateway_decide, m)?)?;
    m.add_class::<Monitor>()?;
    m.add_class::<Session>()?;
    m.add_class::<Gateway>()?;
    Ok(())
}
