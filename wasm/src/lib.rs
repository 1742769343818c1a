//! WebAssembly binding of the `doom-loop` core, for the `doom-loop-wasm`
//! npm package.
//!
//! The boundary is text. JS values arrive *lowered* by the shim
//! (`js/lower.js`): JSON plus the bare words the core's value model has for
//! what JSON cannot hold (`undefined`, `NaN`, `bigint`, `hole`, `circular`),
//! strings escaped by `JSON.stringify` so lone surrogates survive the UTF-8
//! crossing (a plain `&str` from a JS string would turn them into U+FFFD).
//! Results leave as JSON text for `JSON.parse`. Everything that decides —
//! canonicalization, verdicts, messages, warnings — is the core's; this
//! crate only converts, and never unwraps: every failure becomes a JS
//! `Error` (or `TypeError`) through the one conversion below.

use doom_loop::canonical::canonicalize_lowered;
use doom_loop::config::{resolve_doom_loop_option, ResolvedConfig};
use doom_loop::fingerprint::{
    fingerprint_lowered_key_material, fingerprint_lowered_tool_call, fingerprint_lowered_tool_call_with_strings,
    set_sha256_backend, set_sha256_backend_min,
};
use doom_loop::json::{parse_lowered, parse_lowered_with_strings, to_json, write_json_string, Value};
use doom_loop::ladder::{Ladder, LadderOptions};
use doom_loop::loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
use doom_loop::monitor::{DeclaredCall, RecordOptions};
use doom_loop::text::RepetitionThresholds;
use doom_loop::{DoomLoopMonitor, Error, ErrorKind, JsString};
use wasm_bindgen::prelude::*;

// Talc, not dlmalloc (Rust's default on wasm32): the module is 1.7 KB
// smaller gzipped and, measured A/B, no slower, though a parsed call is
// dozens of small allocations (each key, string and object) and the
// allocator shows as ≈ 15 % of a session response's profile either way.
// Single-threaded wasm only, as this module is.
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// A core error on its way to JS.
pub struct WasmError(Error);

impl From<Error> for WasmError {
    fn from(error: Error) -> Self {
        WasmError(error)
    }
}

impl From<WasmError> for JsValue {
    fn from(WasmError(error): WasmError) -> JsValue {
        match error.kind() {
            ErrorKind::Type => js_sys::TypeError::new(error.message()).into(),
            _ => js_sys::Error::new(error.message()).into(),
        }
    }
}

type Result<T> = std::result::Result<T, WasmError>;

#[cfg(feature = "trace")]
mod cli;
#[cfg(feature = "trace")]
mod gateway;
mod session;
#[cfg(feature = "trace")]
mod trace;

#[wasm_bindgen]
extern "C" {
    /// The host's SHA-256 as `setHostSha256` registered it: a function of
    /// `(address, length, out)`, called with plain numbers (no value
    /// boxed, no string handed back: the cheaper trip moved the size from
    /// which the host beats sha2 from ≈ 300 to ≈ 190 bytes).
    #[wasm_bindgen(extends = js_sys::Function)]
    type HostSha256;

    /// `sha256.call(undefined, address, length, out)`.
    #[wasm_bindgen(method, catch, js_name = call)]
    fn hash_into(
        this: &HostSha256,
        receiver: &JsValue,
        address: u32,
        length: u32,
        out: u32,
    ) -> std::result::Result<bool, JsValue>;
}

thread_local! {
    static HOST_SHA256: std::cell::RefCell<Option<HostSha256>> = const { std::cell::RefCell::new(None) };
}

/// Registers the host's native SHA-256, asked for inputs of 1 KiB or more
/// (the core's default; `setHostSha256Min` moves it); any failure falls
/// back to sha2. It is called as `(address, length, out)` with the input in
/// wasm memory (`ioMemory()`), to be read in place — a copy of a large input
/// would cost a good part of the hashing — and answers by writing the digest
/// as 64 lowercase hex digits (ASCII) at `out` and returning `true`, or
/// declines by returning `false` (sha2 hashes that input).
#[wasm_bindgen(js_name = setHostSha256)]
pub fn set_host_sha256(sha256: js_sys::Function) {
    // Called from inside the host hash (which holds the slot), it changes
    // nothing rather than trap.
    HOST_SHA256.with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(sha256.unchecked_into());
        }
    });
    set_sha256_backend(host_sha256);
}

/// Moves the length from which the host's SHA-256 is asked (the host calls
/// it once its hash is cheap to reach). Safe to call from inside the host
/// hash itself: it touches nothing the call holds.
#[wasm_bindgen(js_name = setHostSha256Min)]
pub fn set_host_sha256_min(min_len: usize) {
    set_sha256_backend_min(min_len);
}

fn host_sha256(bytes: &[u8]) -> Option<[u8; 32]> {
    HOST_SHA256.with(|slot| {
        let slot = slot.try_borrow().ok()?;
        let function = slot.as_ref()?;
        // Addresses, not views: no unsafe code here, and the host reads the
        // input and writes the digits before anything can move them. The
        // digits land on this frame (wasm's stack is in linear memory),
        // zeroes until written: an answer without them is not hex.
        let mut digits = [0u8; 64];
        let out = digits.as_mut_ptr() as usize as u32;
        let (address, length) = (bytes.as_ptr() as usize as u32, u32::try_from(bytes.len()).ok()?);
        if !function.hash_into(&JsValue::UNDEFINED, address, length, out).ok()? {
            return None;
        }
        digest_from_hex(&digits)
    })
}

/// The 32 bytes of 64 lowercase hex digits; `None` for anything else (the
/// host's answer falls back to sha2 rather than make a fingerprint up).
fn digest_from_hex(digits: &[u8]) -> Option<[u8; 32]> {
    if digits.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(digits.chunks_exact(2)) {
        let &[high, low] = pair else { return None };
        *byte = hex_digit(high)? << 4 | hex_digit(low)?;
    }
    Some(digest)
}

fn hex_digit(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

fn lowered(text: &str) -> Result<Value> {
    Ok(parse_lowered(text)?)
}

/// The error of a call that finds the I/O buffer borrowed.
pub(crate) fn io_in_use() -> Error {
    Error::new(ErrorKind::InvalidArgument, "the I/O buffer is in use")
}

/// Lowered text the shim wrote at the start of the I/O buffer (`text_len`
/// bytes of UTF-8), then the raw strings it names (see `io_strings`).
pub(crate) fn lowered_from_io(text_len: usize, strings_len: usize, strings_count: usize) -> Result<Value> {
    IO.with(|io| {
        let io = io.try_borrow().map_err(|_| io_in_use())?;
        let malformed = |what: &str| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("the {what} in the I/O buffer is malformed"),
            )
        };
        let text = io_str(&io, 0, text_len).ok_or_else(|| malformed("lowered text"))?;
        if strings_count == 0 {
            return Ok(parse_lowered(text)?);
        }
        let strings = io_strings(&io, text_len, strings_len, strings_count).ok_or_else(|| malformed("raw strings"))?;
        Ok(parse_lowered_with_strings(text, &strings)?)
    })
}

/// The lowered text and the raw strings (their UTF-8 not yet checked) the
/// shim wrote in the I/O buffer (see `lowered_from_io`), lent to `read`;
/// `None` if a bound is wrong, the buffer is in use, or `read` declines.
pub(crate) fn read_io<R>(
    text_len: usize,
    strings_len: usize,
    strings_count: usize,
    read: impl FnOnce(&str, &[&[u8]]) -> Option<R>,
) -> Option<R> {
    IO.with(|io| {
        let io = io.try_borrow().ok()?;
        let text = io_str(&io, 0, text_len)?;
        let strings = io_raw_strings(&io, text_len, strings_len, strings_count)?;
        read(text, &strings)
    })
}

fn lowered_string(text: &str) -> Result<JsString> {
    match lowered(text)? {
        Value::String(s) => Ok(s),
        _ => Err(Error::new(ErrorKind::InvalidArgument, "expected a lowered string").into()),
    }
}

/// A string passed either raw (well formed) or as a JSON literal.
pub(crate) fn js_text(text: &str, is_json: bool) -> Result<JsString> {
    if is_json {
        lowered_string(text)
    } else {
        Ok(JsString::from(text))
    }
}

fn json_strings(items: &[String]) -> String {
    let values: Vec<Value> = items
        .iter()
        .map(|w| Value::String(JsString::from(w.as_str())))
        .collect();
    to_json(&Value::Array(values))
}

/// `canonicalizeKeyMaterial` over a lowered value.
#[wasm_bindgen(js_name = canonicalize)]
pub fn canonicalize(value: &str) -> Result<String> {
    Ok(canonicalize_lowered(value)?)
}

/// `fingerprintToolCall` (tool name as a JSON string literal).
#[wasm_bindgen(js_name = fingerprintToolCall)]
pub fn fingerprint_tool_call(tool_name: &str, key_material: &str) -> Result<String> {
    Ok(fingerprint_lowered_tool_call(
        &lowered_string(tool_name)?,
        key_material,
    )?)
}

/// `fingerprintKeyMaterial`.
#[wasm_bindgen(js_name = fingerprintKeyMaterial)]
pub fn fingerprint_key_material(key_material: &str) -> Result<String> {
    Ok(fingerprint_lowered_key_material(key_material)?)
}

// --- The hot path: one shared buffer instead of marshalled strings --------
//
// `fingerprintToolCall` and `recordToolCall` are called per tool call, and
// at a few microseconds each the glue's string passing (an allocation per
// argument, a decoded string and a result array back) would cost more than
// the work. So the shim writes `toolName`, the lowered key material (and,
// for a record, the lowered options) as UTF-8 into one reusable buffer in
// wasm memory, makes one call, and reads the fingerprint (and, for a
// record, the streak and any verdict JSON) from the same buffer. A call that fails returns a status only; the shim then
// repeats it through the string API above, which throws the core's error.

thread_local! {
    static IO: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The wasm memory, for the shim's view of the I/O buffer.
#[wasm_bindgen(js_name = ioMemory)]
pub fn io_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The I/O buffer never holds less than a result header (fingerprint + streak).
const IO_MIN: usize = 128;

/// Grows the I/O buffer to at least `capacity` bytes (it never shrinks);
/// returns its address, valid until the buffer or the memory grows.
#[wasm_bindgen(js_name = ioBuffer)]
pub fn io_buffer(capacity: usize) -> *const u8 {
    IO.with(|io| match io.try_borrow_mut() {
        Ok(mut io) => {
            io_reserve(&mut io, capacity.max(IO_MIN));
            io.as_ptr()
        }
        Err(_) => std::ptr::null(),
    })
}

fn io_reserve(io: &mut Vec<u8>, len: usize) {
    if io.len() < len {
        io.resize(len, 0);
    }
}

/// Runs `write` on the I/O buffer; `false` when it is in use (nothing is
/// written then, and the caller answers the slow way).
pub(crate) fn with_io_buffer(write: impl FnOnce(&mut Vec<u8>)) -> bool {
    IO.with(|io| match io.try_borrow_mut() {
        Ok(mut io) => {
            write(&mut io);
            true
        }
        Err(_) => false,
    })
}

/// Writes `bytes` at `at`, growing the buffer if needed (the shim sees the
/// growth from the lengths it is told and asks for the new address).
pub(crate) fn io_write(io: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    let end = at + bytes.len();
    io_reserve(io, end);
    io[at..end].copy_from_slice(bytes);
}

/// The UTF-8 text the shim wrote at `start..start + len` of the I/O
/// buffer; `None` if the bounds or the UTF-8 are wrong.
fn io_str(io: &[u8], start: usize, len: usize) -> Option<&str> {
    std::str::from_utf8(io.get(start..start.checked_add(len)?)?).ok()
}

/// The raw strings the shim wrote at `start`: `count` UTF-8 texts back to
/// back, `len` bytes in all, then their byte lengths as little-endian
/// `u32`s. `None` if any bound, length or UTF-8 is wrong.
fn io_strings(io: &[u8], start: usize, len: usize, count: usize) -> Option<Vec<&str>> {
    io_raw_strings(io, start, len, count)?
        .into_iter()
        .map(|bytes| std::str::from_utf8(bytes).ok())
        .collect()
}

/// [`io_strings`] with their UTF-8 not checked here: for the core's
/// fingerprints, which check it once, as the escaped literal (a second
/// check of a megabyte file was 4 % of its fingerprint).
fn io_raw_strings(io: &[u8], start: usize, len: usize, count: usize) -> Option<Vec<&[u8]>> {
    let table = start.checked_add(len)?;
    let lengths = io.get(table..table.checked_add(count.checked_mul(4)?)?)?;
    let mut at = start;
    let mut strings = Vec::with_capacity(count);
    for length in lengths.chunks_exact(4) {
        let length = usize::try_from(u32::from_le_bytes(length.try_into().ok()?)).ok()?;
        let end = at.checked_add(length)?;
        strings.push(io.get(at..end)?);
        at = end;
    }
    (at == table).then_some(strings)
}

/// A tool call's fingerprint from lowered key material and the raw strings
/// it refers to (none: the ordinary lowered text).
fn fingerprint_io_call(tool: &JsString, material: &str, strings: &[&[u8]]) -> Option<String> {
    if strings.is_empty() {
        fingerprint_lowered_tool_call(tool, material).ok()
    } else {
        fingerprint_lowered_tool_call_with_strings(tool, material, strings).ok()
    }
}

/// Test support, not API (the shim never calls it): traps the instance
/// while the I/O buffer is borrowed, the state an out-of-memory abort in
/// the middle of a record leaves — so the tests can prove that nothing
/// answers after a trap without exhausting 4 GiB first.
#[wasm_bindgen(js_name = __trapForTests)]
pub fn trap_for_tests() {
    IO.with(|io| {
        let _held = io.try_borrow_mut();
        std::process::abort()
    })
}

/// `fingerprintToolCall` over the I/O buffer (tool name, lowered key
/// material, then the raw strings it refers to — see `io_strings`; none
/// for ordinary lowered text): the fingerprint (64 hex digits) replaces
/// the input at its start. `false` on any failure.
#[wasm_bindgen(js_name = fingerprintToolCallIo)]
pub fn fingerprint_tool_call_io(
    tool_len: usize,
    material_len: usize,
    strings_len: usize,
    strings_count: usize,
) -> bool {
    IO.with(|io| {
        let Ok(mut io) = io.try_borrow_mut() else {
            return false;
        };
        let fingerprint = (|| {
            let tool = JsString::from(io_str(&io, 0, tool_len)?);
            let material = io_str(&io, tool_len, material_len)?;
            let strings = io_raw_strings(&io, tool_len.checked_add(material_len)?, strings_len, strings_count)?;
            fingerprint_io_call(&tool, material, &strings)
        })();
        fingerprint.is_some_and(|fingerprint| {
            io_write(&mut io, 0, fingerprint.as_bytes());
            true
        })
    })
}

/// `resolveDoomLoopOption`: JSON `{resolved, warnings, error?, typeError?}`.
#[wasm_bindgen(js_name = resolveDoomLoopOption)]
pub fn resolve_option(option: &str) -> Result<String> {
    let option = lowered(option)?;
    let resolution = resolve_doom_loop_option(Some(&option));
    let mut out = String::from("{\"warnings\":");
    out.push_str(&json_strings(&resolution.warnings));
    match resolution.result {
        Ok(None) => out.push_str(",\"resolved\":null"),
        Ok(Some(config)) => {
            out.push_str(",\"resolved\":");
            out.push_str(&config.to_json());
        }
        Err(error) => {
            out.push_str(",\"error\":");
            write_json_string(&JsString::from(error.message()), &mut out);
        }
    }
    out.push('}');
    Ok(out)
}

/// `detectTextRepetition`: JSON result or `null`.
#[wasm_bindgen(js_name = detectTextRepetition)]
pub fn detect_text_repetition(text: &str, is_json: bool, options: &str) -> Result<String> {
    let options = lowered(options)?;
    let thresholds = RepetitionThresholds::from_js_options(Some(&options));
    Ok(
        match doom_loop::detect_text_repetition(&js_text(text, is_json)?, &thresholds) {
            Some(result) => result.to_json(),
            None => "null".to_string(),
        },
    )
}

/// `resolveLadderAction`: the rung name, or `undefined`.
#[wasm_bindgen(js_name = resolveLadderAction)]
pub fn resolve_ladder_action(ladder: &str, streak: f64, options: &str) -> Result<Option<String>> {
    let ladder = Ladder::from_js(&lowered(ladder)?);
    let options = lowered(options)?;
    let flag = |name: &str| options.as_object().and_then(|o| o.get(name)).cloned();
    let allow_escalate = match flag("allowEscalate") {
        None | Some(Value::Null | Value::Undefined) => true,
        Some(v) => v.is_truthy(),
    };
    let options = LadderOptions {
        allow_block: flag("allowBlock").is_some_and(|v| v.is_truthy()),
        allow_escalate,
    };
    Ok(doom_loop::resolve_ladder_action(&ladder, streak, options).map(|a| a.as_str().to_string()))
}

/// `resolveLoopKeyMaterial` for declarations that are data (absent, `false`,
/// field lists, other shapes): JSON `{kind, warning?, fields?}` where
/// `fields` lists the selected field names (the shim reads their values
/// from the caller's own object) and key material is otherwise the args.
#[wasm_bindgen(js_name = resolveLoopKeyDeclaration)]
pub fn resolve_loop_key_declaration(loop_key: &str, args: &str) -> Result<String> {
    let declaration = lowered(loop_key)?;
    let args = lowered(args)?;
    let loop_key = match &declaration {
        Value::Undefined => LoopKey::Absent,
        other => LoopKey::Declared(other),
    };
    let resolution = resolve_loop_key_material(loop_key, &args)?;
    let fields = match (&declaration, &resolution) {
        (Value::Array(_), LoopKeyResolution::Key(Value::Object(subset))) => {
            Some(subset.iter().map(|(k, _)| Value::String(k.clone())).collect())
        }
        _ => None,
    };
    Ok(resolution_json(&resolution, fields))
}

/// `resolveLoopKeyMaterial` for a function declaration, given what the
/// function did: `outcome` is `"threw"` (with its message), `"null"`,
/// `"undefined"` or `"value"`. JSON `{kind, warning?}`.
#[wasm_bindgen(js_name = resolveLoopKeyOutcome)]
pub fn resolve_loop_key_outcome(outcome: &str, thrown: &str) -> Result<String> {
    let thrown = lowered_string(thrown)?.to_string();
    let function = |_: &Value| -> std::result::Result<Option<Value>, String> {
        match outcome {
            "threw" => Err(thrown.clone()),
            "null" => Ok(Some(Value::Null)),
            "undefined" => Ok(None),
            _ => Ok(Some(Value::Bool(true))),
        }
    };
    let resolution = resolve_loop_key_material(LoopKey::Function(&function), &Value::Null)?;
    Ok(resolution_json(&resolution, None))
}

fn resolution_json(resolution: &LoopKeyResolution, fields: Option<Vec<Value>>) -> String {
    let (kind, warning) = match resolution {
        LoopKeyResolution::Exempt => ("exempt", None),
        LoopKeyResolution::Key(_) => ("key", None),
        LoopKeyResolution::Fallback { warning, .. } => ("fallback", Some(warning)),
    };
    let mut out = format!("{{\"kind\":\"{kind}\"");
    if let Some(warning) = warning {
        out.push_str(",\"warning\":");
        write_json_string(&JsString::from(warning.as_str()), &mut out);
    }
    if let Some(fields) = fields {
        out.push_str(",\"fields\":");
        out.push_str(&to_json(&Value::Array(fields)));
    }
    out.push('}');
    out
}

/// The detector state machine (wrapped by the shim's `DoomLoopMonitor`).
#[wasm_bindgen]
pub struct Monitor {
    inner: DoomLoopMonitor,
}

#[wasm_bindgen]
impl Monitor {
    /// A monitor over a lowered resolved configuration.
    #[wasm_bindgen(constructor)]
    pub fn new(config: &str) -> Result<Monitor> {
        let config = ResolvedConfig::from_value(&lowered(config)?)?;
        Ok(Monitor {
            inner: DoomLoopMonitor::new(config),
        })
    }

    /// `declareRound` over lowered `[{toolName, keyMaterial}]`; JSON warnings.
    #[wasm_bindgen(js_name = declareRound)]
    pub fn declare_round(&mut self, round: f64, calls: &str) -> Result<String> {
        let Value::Array(items) = lowered(calls)? else {
            return Err(Error::new(ErrorKind::Type, "declareRound: calls must be an array").into());
        };
        let calls: Vec<DeclaredCall> = items.iter().map(DeclaredCall::from_value).collect();
        Ok(json_strings(&self.inner.declare_round(round, &calls)))
    }

    /// `recordToolCall`; JSON record.
    #[wasm_bindgen(js_name = recordToolCall)]
    pub fn record_tool_call(
        &mut self,
        tool_name: &str,
        key_material: &str,
        round: f64,
        options: &str,
    ) -> Result<String> {
        let options = RecordOptions::from_js(Some(&lowered(options)?));
        let record = self
            .inner
            .record_lowered_call(&lowered_string(tool_name)?, key_material, round, &options)?;
        Ok(record.to_json())
    }

    /// `recordToolCall` over the I/O buffer (see `fingerprintToolCallIo`),
    /// which holds the tool name, the lowered key material, the lowered
    /// options, then the raw strings of the key material. Leaves there the fingerprint (64 hex digits), the streak as
    /// a little-endian f64, then the verdict's JSON if any; returns
    /// `2 × verdict length + duplicateInRound`, or `-1` on failure (nothing
    /// recorded).
    #[wasm_bindgen(js_name = recordToolCallIo)]
    pub fn record_tool_call_io(
        &mut self,
        tool_len: usize,
        material_len: usize,
        options_len: usize,
        round: f64,
        strings_len: usize,
        strings_count: usize,
    ) -> f64 {
        IO.with(|io| {
            let Ok(mut io) = io.try_borrow_mut() else {
                return -1.0;
            };
            let record = (|| {
                let tool = JsString::from(io_str(&io, 0, tool_len)?);
                let material = io_str(&io, tool_len, material_len)?;
                let options = io_str(&io, tool_len.checked_add(material_len)?, options_len)?;
                let options_end = tool_len.checked_add(material_len)?.checked_add(options_len)?;
                let strings = io_raw_strings(&io, options_end, strings_len, strings_count)?;
                let options = RecordOptions::from_js(Some(&parse_lowered(options).ok()?));
                if strings.is_empty() {
                    self.inner.record_lowered_call(&tool, material, round, &options).ok()
                } else {
                    self.inner
                        .record_lowered_call_with_strings(&tool, material, &strings, round, &options)
                        .ok()
                }
            })();
            let Some(record) = record else {
                return -1.0;
            };
            let verdict = record.verdict.as_ref().map(|v| v.to_json()).unwrap_or_default();
            io_write(&mut io, 0, record.fingerprint.as_bytes());
            io_write(&mut io, 64, &record.streak.to_le_bytes());
            io_write(&mut io, 72, verdict.as_bytes());
            (verdict.len() * 2 + usize::from(record.duplicate_in_round)) as f64
        })
    }

    /// `recordAssistantText`; JSON verdict or `null`.
    #[wasm_bindgen(js_name = recordAssistantText)]
    pub fn record_assistant_text(&mut self, text: &str, is_json: bool) -> Result<String> {
        let text = js_text(text, is_json)?;
        Ok(match self.inner.record_assistant_text(&text) {
            Some(verdict) => verdict.to_json(),
            None => "null".to_string(),
        })
    }

    /// The opt-in ledger and failure streak: one call's result. `outcome`
    /// is lowered (`undefined` when the tool declares no output key).
    #[wasm_bindgen(js_name = recordToolResult)]
    pub fn record_tool_result(
        &mut self,
        tool_name: &str,
        input: &str,
        outcome: &str,
        failed: bool,
        round: f64,
    ) -> Result<String> {
        let outcome = lowered(outcome)?;
        let outcome = (!matches!(outcome, Value::Undefined)).then_some(&outcome);
        let verdict = self.inner.record_tool_result(
            &lowered_string(tool_name)?,
            &lowered_string(input)?,
            outcome,
            failed,
            round,
        )?;
        Ok(verdict.map_or_else(|| "null".to_string(), |v| v.to_json()))
    }

    /// Whether `recordToolResult` reads its outcome (an opt-in detector
    /// that needs it is configured); when not, the shim passes none.
    #[wasm_bindgen(js_name = readsOutcomes)]
    pub fn reads_outcomes(&self) -> bool {
        self.inner.config().beyond.reads_outcomes()
    }

    /// The opt-in budget guard: one turn's spend.
    #[wasm_bindgen(js_name = recordSpend)]
    pub fn record_spend(&mut self, amount: f64) -> String {
        self.inner
            .record_spend(amount)
            .map_or_else(|| "null".to_string(), |v| v.to_json())
    }

    /// `resetTextStreak`.
    #[wasm_bindgen(js_name = resetTextStreak)]
    pub fn reset_text_streak(&mut self) {
        self.inner.reset_text_streak();
    }

    /// `canEscalate`.
    #[wasm_bindgen(js_name = canEscalate)]
    pub fn can_escalate(&self) -> bool {
        self.inner.can_escalate()
    }

    /// `consumeEscalation`.
    #[wasm_bindgen(js_name = consumeEscalation)]
    pub fn consume_escalation(&mut self) {
        self.inner.consume_escalation();
    }

    /// `getState`; JSON.
    #[wasm_bindgen(js_name = getState)]
    pub fn get_state(&self) -> String {
        to_json(&self.inner.get_state())
    }

    /// `restore` over a lowered blob; JSON warnings.
    pub fn restore(&mut self, state: &str) -> Result<String> {
        Ok(json_strings(&self.inner.restore(&lowered(state)?)))
    }
}
