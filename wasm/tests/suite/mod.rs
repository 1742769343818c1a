//! The in-wasm suite of the binding, run by `node.rs` (`wasm-pack test
//! --node wasm`) and `browser.rs` (`wasm-pack test --headless --chrome
//! wasm`): what only shows in a real wasm instance with a JS host — the
//! error a core failure becomes on the JS side (TypeError vs Error), the
//! shim's I/O buffer as JS sees it while wasm memory grows (views detach;
//! addresses move), and hostile state blobs restored without a trap.

use doom_loop_wasm::{
    canonicalize, fingerprint_key_material, fingerprint_tool_call, fingerprint_tool_call_io, io_buffer, io_memory,
    resolve_loop_key_declaration, resolve_option, Monitor,
};
use js_sys::{Reflect, Uint8Array, WebAssembly};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

/// A test step's failure: the tests return it instead of panicking, so a
/// failure carries the JS error or names what was missing.
type Outcome<T = ()> = Result<T, JsValue>;

/// `what` was absent: a failure naming it.
fn missing(what: &str) -> JsValue {
    JsValue::from_str(&format!("missing: {what}"))
}

/// Bytes the binding wrote, as text.
fn utf8(bytes: Vec<u8>) -> Outcome<String> {
    String::from_utf8(bytes).map_err(|e| JsValue::from_str(&format!("not UTF-8: {e}")))
}

// ---------------------------------------------------------------- helpers

/// A JS error's message.
fn message(error: &JsValue) -> String {
    Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default()
}

/// How a binding failure reaches JS: `TypeError` where the reference throws
/// one, `Error` otherwise.
fn js_error<T>(result: Result<T, doom_loop_wasm::WasmError>) -> JsValue {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => JsValue::from(error),
    }
}

fn assert_type_error(error: &JsValue, needle: &str) {
    let is_type_error = error.is_instance_of::<js_sys::TypeError>();
    assert!(is_type_error, "not a TypeError: {}", message(error));
    assert_message_has(error, needle);
}

fn assert_plain_error(error: &JsValue, needle: &str) {
    assert!(error.is_instance_of::<js_sys::Error>(), "not an Error: {error:?}");
    let is_type_error = error.is_instance_of::<js_sys::TypeError>();
    assert!(!is_type_error, "a TypeError: {}", message(error));
    assert_message_has(error, needle);
}

fn assert_message_has(error: &JsValue, needle: &str) {
    let text = message(error);
    assert!(text.contains(needle), "message {text:?} lacks {needle:?}");
}

/// The resolved config of a `doomLoop` option, as the shim passes it to `new Monitor`.
fn resolved(option: &str) -> Outcome<String> {
    let answer = js_sys::JSON::parse(&resolve_option(option)?)?;
    let config = Reflect::get(&answer, &"resolved".into())?;
    js_sys::JSON::stringify(&config)?
        .as_string()
        .ok_or_else(|| missing("the resolved config's JSON"))
}

fn monitor() -> Outcome<Monitor> {
    Ok(Monitor::new(&resolved("true")?)?)
}

/// A fresh view of `len` bytes of wasm memory at `address`, as the shim makes one.
fn view(address: *const u8, len: usize) -> Outcome<Uint8Array> {
    let memory = io_memory().dyn_into::<WebAssembly::Memory>()?;
    Ok(Uint8Array::new_with_byte_offset_and_length(
        &memory.buffer(),
        address as u32,
        len as u32,
    ))
}

/// Writes `parts` back to back into the I/O buffer through a JS view; their lengths.
fn write_io(parts: &[&str]) -> Outcome<Vec<usize>> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let bytes = view(io_buffer(total), total)?;
    let mut at = 0;
    for part in parts {
        bytes
            .subarray(at as u32, (at + part.len()) as u32)
            .copy_from(part.as_bytes());
        at += part.len();
    }
    Ok(parts.iter().map(|p| p.len()).collect())
}

fn read_io(len: usize) -> Outcome<Vec<u8>> {
    Ok(view(io_buffer(len), len)?.to_vec())
}

// ----------------------------------------------------------- error mapping

#[wasm_bindgen_test]
fn type_errors_where_the_reference_throws_one() {
    // A config without its sections: the reference reads a property of undefined.
    assert_type_error(&js_error(Monitor::new("{}")), "lacks `ladder`");
    // A field list over a non-object: the reference's `in` operator throws.
    assert_type_error(
        &js_error(resolve_loop_key_declaration(r#"["id"]"#, "5")),
        "Cannot use 'in' operator",
    );
}

#[wasm_bindgen_test]
fn plain_errors_for_bad_values_and_bad_text() {
    let cases = [
        ("NaN", "NaN"),
        ("{\"a\":bigint}", "bigint"),
        ("{\"a\":circular}", "ircular"),
        ("{\"a\":", ""),
        ("not json", ""),
    ];
    for (input, needle) in cases {
        let error = js_error(canonicalize(input));
        assert_plain_error(&error, needle);
        assert!(!message(&error).is_empty(), "{input}: empty message");
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_plain_error(&js_error(fingerprint_key_material(&deep)), "");
    assert_plain_error(&js_error(fingerprint_tool_call("not a string literal", "1")), "");
}

// ------------------------------------------- the I/O buffer, memory growth

/// Grows wasm memory by `bytes` (and keeps it allocated until dropped).
fn grow_memory(bytes: usize) -> Outcome<Vec<u8>> {
    let memory = io_memory().dyn_into::<WebAssembly::Memory>()?;
    let before = memory.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length();
    let block = vec![1u8; bytes];
    let after = memory.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length();
    assert!(after > before, "memory did not grow ({before} → {after})");
    Ok(block)
}

#[wasm_bindgen_test]
fn io_fingerprint_survives_memory_growth() -> Outcome {
    let material = r#"{"command":"ls","cwd":"/tmp"}"#;
    let expected = fingerprint_tool_call("\"bash\"", material)?;

    let lengths = write_io(&["bash", material])?;
    let stale = view(io_buffer(64), 64)?;
    assert!(fingerprint_tool_call_io(lengths[0], lengths[1], 0, 0));
    assert_eq!(utf8(read_io(64)?)?, expected);

    let _held = grow_memory(8 << 20)?;
    // A view made before the growth is detached: the shim must not reuse it.
    assert_eq!(stale.length(), 0, "a view of the old memory should be detached");

    let lengths = write_io(&["bash", material])?;
    assert!(fingerprint_tool_call_io(lengths[0], lengths[1], 0, 0));
    assert_eq!(utf8(read_io(64)?)?, expected);
    Ok(())
}

#[wasm_bindgen_test]
fn io_buffer_growth_to_megabytes_keeps_the_input() -> Outcome {
    // The buffer grows (and wasm memory with it) when the shim asks for more
    // than it holds; the address it answers is where the input must go.
    let big_material = format!("{{\"blob\":\"{}\"}}", "x".repeat(4 << 20));
    let expected = fingerprint_tool_call("\"bash\"", &big_material)?;
    let lengths = write_io(&["bash", &big_material])?;
    assert!(fingerprint_tool_call_io(lengths[0], lengths[1], 0, 0));
    assert_eq!(utf8(read_io(64)?)?, expected);
    Ok(())
}

#[wasm_bindgen_test]
fn io_record_verdict_longer_than_the_buffer_is_read_whole() -> Outcome {
    // The verdict's JSON is written after the header and can outgrow the
    // buffer the input fitted in: the shim asks for the buffer again with
    // the length it was told, and must find the whole verdict there.
    let mut through_io = monitor()?;
    let mut through_strings = monitor()?;
    let tool = "t".repeat(3000);
    let material = r#"{"id":1}"#;
    let mut saw_verdict = false;
    for round in 1..=4 {
        let lengths = write_io(&[&tool, material, "{}"])?;
        let packed = through_io.record_tool_call_io(lengths[0], lengths[1], lengths[2], f64::from(round), 0, 0);
        let expected = through_strings.record_tool_call(&format!("\"{tool}\""), material, f64::from(round), "{}")?;
        assert!(packed >= 0.0, "round {round}: the I/O record failed");
        let verdict_len = (packed as usize) / 2;
        let out = read_io(72 + verdict_len)?;
        let expected = js_sys::JSON::parse(&expected)?;
        let fingerprint = Reflect::get(&expected, &"fingerprint".into())?
            .as_string()
            .ok_or_else(|| missing("the record's fingerprint"))?;
        assert_eq!(utf8(out[..64].to_vec())?, fingerprint);
        let streak_bytes: [u8; 8] = out[64..72].try_into().map_err(|_| missing("the streak's 8 bytes"))?;
        assert_eq!(
            JsValue::from(f64::from_le_bytes(streak_bytes)),
            Reflect::get(&expected, &"streak".into())?
        );
        if verdict_len > 0 {
            saw_verdict = true;
            assert!(verdict_len > tool.len(), "the verdict names the tool");
            let verdict = utf8(out[72..].to_vec())?;
            let expected_verdict = Reflect::get(&expected, &"verdict".into())?;
            assert_eq!(
                js_sys::JSON::stringify(&js_sys::JSON::parse(&verdict)?)?,
                js_sys::JSON::stringify(&expected_verdict)?
            );
        }
    }
    assert!(saw_verdict, "four identical calls should draw a verdict");
    Ok(())
}

// ------------------------------------------------------ hostile state blobs

#[wasm_bindgen_test]
fn hostile_state_blobs_restore_without_a_trap() -> Outcome {
    let deep = format!("{}{}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
    let huge_array = format!("[{}0]", "0,".repeat(200_000));
    let blobs: Vec<String> = vec![
        "null".into(),
        "undefined".into(),
        "42".into(),
        "\"state\"".into(),
        "[]".into(),
        huge_array.clone(),
        deep.clone(),
        format!("{{\"toolStreaks\":{huge_array}}}"),
        r#"{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}"#.into(),
        r#"{"toolStreaks":{"bash":{"fingerprint":7,"streak":"NaN"}},"round":-1e308}"#.into(),
        r#"{"toolStreaks":{"bash":{"fingerprint":"x","streak":1e308,"round":NaN}},"textStreak":-Infinity}"#.into(),
        r#"{"toolStreaks":[null,{"streak":1}],"escalations":"many","pendingEscalation":{}}"#.into(),
        r#"{"toolStreaks":{"\ud800":{"fingerprint":"\udfff","streak":2}}}"#.into(),
        format!("{{\"textHistory\":[\"{}\"]}}", "y".repeat(1 << 20)),
        "{\"a\":".into(),
        "{\"a\":bigint,\"b\":hole,\"c\":circular}".into(),
    ];
    for blob in &blobs {
        let mut m = monitor()?;
        // Bad text may be refused (an Error), never a trap; anything that
        // parses is restored with warnings at most.
        match m.restore(blob) {
            Ok(warnings) => assert!(js_sys::JSON::parse(&warnings).is_ok()),
            Err(error) => assert!(!message(&JsValue::from(error)).is_empty()),
        }
        // The monitor keeps working and its state stays JSON.
        let state = m.get_state();
        assert!(
            js_sys::JSON::parse(&state).is_ok(),
            "state is not JSON after restoring {}",
            &blob[..blob.len().min(60)]
        );
        let record = m.record_tool_call("\"bash\"", "{}", 1.0, "{}")?;
        assert!(js_sys::JSON::parse(&record).is_ok());
        // And what it saves restores into a fresh monitor unchanged.
        let mut again = monitor()?;
        again.restore(&m.get_state())?;
        assert_eq!(again.get_state(), m.get_state());
    }
    Ok(())
}
