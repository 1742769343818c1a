//! The typed state under serde (the `serde_json` feature): its JSON is
//! byte-identical to `get_state`'s, it reads back to the same state, and a
//! monitor restored from it resumes exactly where the original stood.
//!
//! Checked on every state the reference corpus's monitor traces reach
//! (`vectors/reference/monitor-traces.json`: the steps replayed, the state
//! compared after every step that can change it) and on built-in scenarios
//! that reach every field of the state (multi-call rounds, call streaks,
//! the text streak, escalations, the opt-in detectors' section).
#![cfg(feature = "serde_json")]

use std::path::Path;

use doom_loop::json::{parse, parse_js, to_json, Object};
use doom_loop::{resolve_doom_loop_option, DoomLoopMonitor, DoomLoopState, JsString, RecordOptions, Value};

/// What checking one state found.
#[derive(Debug, Default)]
struct Tally {
    identical: usize,
    lone_surrogates: usize,
}

/// The state's serde JSON against `get_state`'s, and the round trips.
fn check(monitor: &DoomLoopMonitor, tally: &mut Tally, at: &str) {
    let expected = to_json(&monitor.get_state());
    let state = monitor.state();
    assert_eq!(state.to_json(), expected, "{at}: typed state");
    match serde_json::to_string(&state) {
        Ok(json) => {
            assert_eq!(json, expected, "{at}: serde JSON");
            let back: DoomLoopState = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(back, state, "{at}: read back");
            let mut resumed = DoomLoopMonitor::new(monitor.config().clone());
            assert!(resumed.restore_state(&back).is_empty(), "{at}: restore warnings");
            assert_eq!(to_json(&resumed.get_state()), expected, "{at}: resumed");
            tally.identical += 1;
        }
        Err(error) => {
            // Only a name or fingerprint with a lone surrogate may refuse,
            // and it must say so.
            assert!(error.to_string().contains("lone surrogate"), "{at}: {error}");
            assert!(
                expected.contains("\\ud"),
                "{at}: refused a state without lone surrogates: {expected}"
            );
            tally.lone_surrogates += 1;
        }
    }
}

fn decode_stand_ins(value: &Value) -> Value {
    match value {
        Value::Object(o) if o.len() == 1 && o.get("$nan") == Some(&Value::Bool(true)) => Value::Number(f64::NAN),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), decode_stand_ins(v)))
                .collect::<Object>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(decode_stand_ins).collect()),
        other => other.clone(),
    }
}

fn text<'a>(step: &'a Object, name: &str) -> &'a JsString {
    step.get(name)
        .and_then(Value::as_js_string)
        .unwrap_or_else(|| panic!("`{name}` is a string"))
}

fn args(step: &Object) -> Value {
    parse_js(text(step, "args")).expect("args parse")
}

fn replay(trace: &Object, tally: &mut Tally, at: &str) {
    let option = decode_stand_ins(trace.get("option").expect("option"));
    let config = resolve_doom_loop_option(Some(&option))
        .result
        .expect("resolves")
        .expect("detection on");
    let mut monitor = DoomLoopMonitor::new(config);
    let Some(Value::Array(steps)) = trace.get("steps") else {
        panic!("{at}: steps")
    };
    for (i, step) in steps.iter().enumerate() {
        let step = step.as_object().expect("step object");
        let at = format!("{at} step {i}");
        match text(step, "op").to_string().as_str() {
            "declare" => {
                let Some(Value::Array(calls)) = step.get("calls") else {
                    panic!("{at}: calls")
                };
                let calls: Vec<(JsString, Value)> = calls
                    .iter()
                    .map(|c| c.as_object().expect("call"))
                    .map(|c| (text(c, "toolName").clone(), args(c)))
                    .collect();
                let round = step.get("round").expect("round").to_number();
                monitor.declare(round, calls.iter().map(|(t, v)| (t, v)));
            }
            "record" => {
                let options = RecordOptions::from_js(step.get("options"));
                let round = step.get("round").expect("round").to_number();
                // A rejected record leaves the state as it was; still checked.
                let _ = monitor.record_call_with(text(step, "toolName"), &args(step), round, &options);
            }
            "text" => {
                monitor.record_text(text(step, "text"));
            }
            "resetText" => monitor.reset_text_streak(),
            "consumeEscalation" => monitor.consume_escalation(),
            "restore" => {
                monitor.restore(step.get("state").expect("state"));
            }
            _ => continue,
        }
        check(&monitor, tally, &at);
    }
}

#[test]
fn every_state_of_the_reference_traces_serializes_as_get_state() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/reference/monitor-traces.json");
    let Ok(corpus) = std::fs::read_to_string(&path) else {
        eprintln!(
            "SKIPPED: {} is absent (the packaged crate ships only the upstream vectors); \
             the built-in scenarios below still run",
            path.display()
        );
        return;
    };
    let corpus = parse(&corpus).expect("corpus parses");
    let Some(Value::Array(traces)) = corpus.as_object().and_then(|o| o.get("traces")) else {
        panic!("traces")
    };
    let mut tally = Tally::default();
    for (i, trace) in traces.iter().enumerate() {
        replay(trace.as_object().expect("trace"), &mut tally, &format!("trace {i}"));
    }
    eprintln!("{tally:?}");
    assert_eq!(traces.len(), 400);
    assert!(tally.identical > 4000, "{tally:?}");
}

#[test]
fn built_in_scenarios_reach_every_field() {
    let mut tally = Tally::default();
    let option = parse(
        r#"{"ladder":{"escalate":2},"escalation":{"model":"big","maxEscalations":3},"cycles":4,"failures":true,"budget":{"maxSpend":1e9}}"#,
    )
    .unwrap();
    let config = resolve_doom_loop_option(Some(&option)).result.unwrap().unwrap();
    let mut monitor = DoomLoopMonitor::new(config);
    let (a, b, c) = (
        parse(r#"{"id":1}"#).unwrap(),
        parse(r#"{"id":2}"#).unwrap(),
        parse(r#"{"id":0.5}"#).unwrap(),
    );
    for round in 1..=4u32 {
        monitor.declare(round, [("fan", &a), ("fan", &b)]);
        monitor.record_call("fan", &a, round).unwrap();
        monitor.record_call("fan", &b, round).unwrap();
        // Alternating arguments: a cycle, and call streaks the set cannot rebuild.
        monitor
            .record_call("alt", if round % 2 == 0 { &a } else { &c }, round)
            .unwrap();
        monitor.record_call("7", &c, round).unwrap();
        // A set that grows and shrinks: per-call streaks outrun the set's.
        if round % 2 == 0 {
            monitor.declare(round, [("grow", &a), ("grow", &b)]);
            monitor.record_call("grow", &b, round).unwrap();
        }
        monitor.record_call("grow", &a, round).unwrap();
        monitor.record_text("Same text again.");
        let fingerprint = JsString::from(doom_loop::fingerprint_tool_call(&"alt".into(), &a).unwrap());
        monitor
            .record_tool_result(&"alt".into(), &fingerprint, None, true, f64::from(round))
            .unwrap();
        monitor.record_spend(0.1 * f64::from(round));
        check(&monitor, &mut tally, &format!("round {round}"));
    }
    monitor.consume_escalation();
    check(&monitor, &mut tally, "after an escalation");
    let state = monitor.state();
    assert!(state.tools.iter().any(|(_, t)| t.round_fingerprints.is_some()));
    assert!(state.tools.iter().any(|(_, t)| t.call_streaks.is_some()));
    assert!(state.text.is_some() && state.beyond.is_some() && state.escalations_used == 1.0);
    assert_eq!(state.tools[0].0, "7", "array-index names first, as JS orders them");

    // Restored odd numbers: a fractional text streak, huge call streaks.
    let blob = r#"{"tools":{"t":{"fingerprint":"f","streak":2,"callStreaks":{"x":123456789012345680000,"y":9007199254740993}}},"text":{"fingerprint":"g","streak":-2.5},"escalationsUsed":4}"#;
    monitor.restore(&parse(blob).unwrap());
    check(&monitor, &mut tally, "odd numbers");
    // A lone surrogate in a name: the text form carries it, serde refuses.
    monitor.restore(&parse(r#"{"tools":{"\ud800":{"fingerprint":"f","streak":1}}}"#).unwrap());
    check(&monitor, &mut tally, "lone surrogate");
    assert_eq!((tally.identical, tally.lone_surrogates), (6, 1));
}

#[test]
fn a_malformed_state_is_an_error_naming_the_field() {
    let error =
        serde_json::from_str::<DoomLoopState>(r#"{"tools":{"t":{"fingerprint":"f","streak":"2"}}}"#).unwrap_err();
    assert!(
        error.to_string().contains("tools.t.streak: expected a finite number"),
        "{error}"
    );
    let error = serde_json::from_str::<DoomLoopState>(r#"[]"#).unwrap_err();
    assert!(error.to_string().contains("state: expected an object"), "{error}");
}
