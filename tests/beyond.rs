//! The opt-in detectors: each loop shape the reference misses is caught
//! once configured, the shapes that are progress stay silent, the defaults
//! stay the reference's, and their state survives getState → restore.

use doom_loop::json::{parse, to_json, Value};
use doom_loop::{resolve_doom_loop_option, DoomLoopMonitor, JsString, RecordOptions, ResolvedConfig, Verdict};

/// The detector a verdict names: the opt-in one when it raised the verdict.
fn label(v: &Verdict) -> String {
    v.opt_in_detector
        .map_or_else(|| to_json(&v.detector), |name| format!("\"{name}\""))
}

fn monitor(option: &str) -> DoomLoopMonitor {
    let config = resolve_doom_loop_option(Some(&parse(option).unwrap()))
        .result
        .unwrap()
        .unwrap();
    DoomLoopMonitor::new(config)
}

/// Records one call per round; returns each round's (detector, action), if any.
fn calls(m: &mut DoomLoopMonitor, tool: &str, args: &[&str]) -> Vec<Option<(String, &'static str)>> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            m.record_tool_call(
                &JsString::from(tool),
                &parse(a).unwrap(),
                (i + 1) as f64,
                &RecordOptions::default(),
            )
            .unwrap()
            .verdict
            .map(|v| (label(&v), v.action.as_str()))
        })
        .collect()
}

fn alternating(n: usize, a: &'static str, b: &'static str) -> Vec<&'static str> {
    (0..n).map(|i| if i % 2 == 0 { a } else { b }).collect()
}

#[test]
fn inv_2291_alternation_is_invisible_by_default_and_caught_as_a_cycle() {
    let args = alternating(12, r#"{"invoice_id":"INV-2291"}"#, r#"{"invoice_id":"inv-2291 "}"#);
    let mut reference = monitor("true");
    assert!(calls(&mut reference, "get_invoice", &args).iter().all(Option::is_none));

    let mut cycles = monitor(r#"{"cycles":true}"#);
    let verdicts = calls(&mut cycles, "get_invoice", &args);
    let cycle = |a: &'static str| Some(("\"tool-cycle\"".to_string(), a));
    assert_eq!(verdicts[3], cycle("observe"), "A,B,A,B: 2 cycles");
    assert_eq!(verdicts[5], cycle("block"), "3 cycles");
    assert_eq!(verdicts[11], cycle("stop"), "6 cycles");
}

#[test]
fn a_three_call_cycle_is_caught() {
    let args: Vec<&str> = [r#"{"p":"a"}"#, r#"{"p":"b"}"#, r#"{"p":"c"}"#]
        .iter()
        .cycle()
        .take(9)
        .copied()
        .collect();
    let mut m = monitor(r#"{"cycles":{"maxPeriod":3}}"#);
    let verdicts = calls(&mut m, "open", &args);
    assert_eq!(verdicts[5].as_ref().map(|v| v.1), Some("observe"));
    assert_eq!(verdicts[8].as_ref().map(|v| v.1), Some("block"));
}

#[test]
fn pagination_is_not_a_cycle() {
    let pages: Vec<String> = (1..=12).map(|p| format!(r#"{{"page":{p}}}"#)).collect();
    let args: Vec<&str> = pages.iter().map(String::as_str).collect();
    let mut m = monitor(r#"{"cycles":true,"ledger":true,"failures":true}"#);
    assert!(calls(&mut m, "list", &args).iter().all(Option::is_none));
}

fn results(m: &mut DoomLoopMonitor, tool: &str, rounds: &[(&str, &str, bool)]) -> Vec<Option<(String, &'static str)>> {
    let tool = JsString::from(tool);
    rounds
        .iter()
        .enumerate()
        .map(|(i, (args, outcome, failed))| {
            let round = (i + 1) as f64;
            let record = m
                .record_tool_call(&tool, &parse(args).unwrap(), round, &RecordOptions::default())
                .unwrap();
            let outcome: Value = parse(outcome).unwrap();
            m.record_tool_result(&tool, &record.fingerprint, Some(&outcome), *failed, round)
                .unwrap()
                .or(record.verdict)
                .map(|v| (label(&v), v.action.as_str()))
        })
        .collect()
}

#[test]
fn a_nonce_that_changes_nothing_is_caught_by_the_ledger() {
    let args: Vec<String> = (0..6).map(|n| format!(r#"{{"q":"status","nonce":{n}}}"#)).collect();
    let rounds: Vec<(&str, &str, bool)> = args
        .iter()
        .map(|a| (a.as_str(), r#"{"status":"pending"}"#, false))
        .collect();
    let mut reference = monitor("true");
    assert!(results(&mut reference, "check", &rounds).iter().all(Option::is_none));
    let mut ledger = monitor(r#"{"ledger":true}"#);
    let verdicts = results(&mut ledger, "check", &rounds);
    assert_eq!(verdicts[1], Some(("\"no-progress\"".to_string(), "observe")));
    assert_eq!(verdicts[5], Some(("\"no-progress\"".to_string(), "stop")));
}

#[test]
fn a_poller_whose_result_changes_is_silent() {
    let args: Vec<String> = (0..8).map(|n| format!(r#"{{"job":7,"nonce":{n}}}"#)).collect();
    let outcomes: Vec<String> = (0..8).map(|n| format!(r#"{{"progress":{}}}"#, n * 10)).collect();
    let rounds: Vec<(&str, &str, bool)> = args
        .iter()
        .zip(&outcomes)
        .map(|(a, o)| (a.as_str(), o.as_str(), false))
        .collect();
    let mut m = monitor(r#"{"ledger":true,"failures":true,"cycles":true}"#);
    assert!(results(&mut m, "poll", &rounds).iter().all(Option::is_none));
}

#[test]
fn edit_test_edit_with_changing_results_is_silent() {
    let mut m = monitor(r#"{"ledger":true,"failures":true,"cycles":true}"#);
    let tool_edit = JsString::from("edit");
    let tool_test = JsString::from("test");
    for round in 1..=8 {
        let r = round as f64;
        let edit = m
            .record_tool_call(
                &tool_edit,
                &parse(&format!(r#"{{"line":{round}}}"#)).unwrap(),
                r,
                &RecordOptions::default(),
            )
            .unwrap();
        assert!(edit.verdict.is_none());
        let test = m
            .record_tool_call(&tool_test, &parse("{}").unwrap(), r, &RecordOptions::default())
            .unwrap();
        let failing = parse(&format!(r#"{{"failing":{}}}"#, 9 - round)).unwrap();
        let verdict = m
            .record_tool_result(&tool_test, &test.fingerprint, Some(&failing), round < 8, r)
            .unwrap();
        // The same test command every round is the reference's own evidence;
        // the opt-in detectors add nothing while the results keep changing.
        assert!(verdict.is_none() || label(&verdict.unwrap()) == "\"tool-failure\"");
    }
}

#[test]
fn a_tool_failing_with_varying_arguments_is_caught() {
    let args: Vec<String> = (0..6).map(|n| format!(r#"{{"invoice_id":"INV-{n}"}}"#)).collect();
    let rounds: Vec<(&str, &str, bool)> = args
        .iter()
        .map(|a| (a.as_str(), r#"{"error":"timeout"}"#, true))
        .collect();
    let mut m = monitor(r#"{"failures":true}"#);
    let verdicts = results(&mut m, "get_invoice", &rounds);
    assert_eq!(verdicts[1], Some(("\"tool-failure\"".to_string(), "observe")));
    assert_eq!(verdicts[5], Some(("\"tool-failure\"".to_string(), "stop")));
}

#[test]
fn the_budget_guard_stops_a_loop_before_it_spends_the_limit() {
    let mut m = monitor(r#"{"budget":{"maxSpendWhileLooping":3000,"unit":"tokens"}}"#);
    let tool = JsString::from("get_invoice");
    let args = parse(r#"{"invoice_id":"INV-2291"}"#).unwrap();
    let mut stopped_at = None;
    for round in 1..=10 {
        m.record_tool_call(&tool, &args, round as f64, &RecordOptions::default())
            .unwrap();
        if let Some(v) = m.record_spend(1000.0) {
            assert_eq!(label(&v), "\"budget\"");
            stopped_at = Some(round);
            break;
        }
    }
    // Round 1 is no loop yet; rounds 2, 3, 4 are (observe onwards).
    assert_eq!(stopped_at, Some(4));
}

#[test]
fn a_copy_of_a_monitor_keeps_its_opt_in_state_and_that_a_loop_is_suspected() {
    let mut m = monitor(r#"{"cycles":true,"budget":{"maxSpendWhileLooping":1000}}"#);
    let args = alternating(3, r#"{"x":1}"#, r#"{"x":2}"#);
    calls(&mut m, "t", &args);
    calls(&mut m, "u", &[r#"{"y":1}"#, r#"{"y":1}"#]); // observe: a loop is suspected
    let mut copy = m.clone();
    assert_eq!(to_json(&copy.get_state()), to_json(&m.get_state()));
    // The suspicion, which no state persists, was copied: this spend counts.
    assert_eq!(
        copy.record_spend(1000.0).map(|v| label(&v)),
        Some("\"budget\"".to_string())
    );
    assert!(m.clone().record_spend(999.0).is_none());
    // The copy is its own: the original's cycle evidence is unchanged by it.
    calls(&mut copy, "t", &[r#"{"x":9}"#]);
    assert_ne!(to_json(&copy.get_state()), to_json(&m.get_state()));
    let v = m
        .record_tool_call(
            &JsString::from("t"),
            &parse(r#"{"x":2}"#).unwrap(),
            4.0,
            &RecordOptions::default(),
        )
        .unwrap();
    assert_eq!(v.verdict.map(|v| label(&v)), Some("\"tool-cycle\"".to_string()));
}

#[test]
fn defaults_stay_the_reference_and_state_survives_restore() {
    let mut plain = monitor("true");
    calls(&mut plain, "t", &[r#"{"a":1}"#, r#"{"a":2}"#]);
    assert!(!to_json(&plain.get_state()).contains("beyond"));
    assert!(!resolve_doom_loop_option(Some(&parse("true").unwrap()))
        .result
        .unwrap()
        .unwrap()
        .to_json()
        .contains("beyond"));

    let option = r#"{"cycles":true,"ledger":true,"failures":true,"budget":{"maxSpend":1e9}}"#;
    let mut m = monitor(option);
    let args = alternating(3, r#"{"x":1}"#, r#"{"x":2}"#);
    calls(&mut m, "t", &args);
    m.record_spend(5.0);
    let state = m.get_state();
    let mut resumed = monitor(option);
    assert!(resumed.restore(&state).is_empty());
    assert_eq!(to_json(&resumed.get_state()), to_json(&state));
    // The resumed run completes the A,B,A,B cycle on its next round.
    let v = resumed
        .record_tool_call(
            &JsString::from("t"),
            &parse(r#"{"x":2}"#).unwrap(),
            1.0,
            &RecordOptions::default(),
        )
        .unwrap();
    assert_eq!(v.verdict.map(|v| label(&v)), Some("\"tool-cycle\"".to_string()));

    // A default monitor ignores the extra key, as the reference does.
    let mut reference = DoomLoopMonitor::new(ResolvedConfig::default());
    reference.restore(&state);
    assert!(!to_json(&reference.get_state()).contains("beyond"));
}

/// Regression (issue 10): opt-in verdicts carried `detector: "tool-cycle"` etc.,
/// which a consumer validating against the reference (its engine's
/// `DoomLoopDetected` payload schema) rejects. They now keep `detector` within
/// the reference's four kinds and name the opt-in detector in `optInDetector`.
#[test]
fn opt_in_verdicts_keep_a_reference_detector_kind() {
    let reference_kinds = [
        "tool-fingerprint",
        "server-tool-fingerprint",
        "text-repetition",
        "text-streak",
    ];
    let option = r#"{"cycles":true,"ledger":true,"failures":true,"budget":{"maxSpend":1}}"#;
    let mut m = monitor(option);
    let tool = JsString::from("get_invoice");
    let mut seen = Vec::new();
    for (i, args) in alternating(6, r#"{"id":"A"}"#, r#"{"id":"a "}"#).iter().enumerate() {
        let round = (i + 1) as f64;
        let record = m
            .record_tool_call(&tool, &parse(args).unwrap(), round, &RecordOptions::default())
            .unwrap();
        let result = m
            .record_tool_result(&tool, &record.fingerprint, Some(&parse("{}").unwrap()), false, round)
            .unwrap();
        seen.extend(record.verdict.into_iter().chain(result));
        let pay = JsString::from("pay");
        let call = m
            .record_tool_call(
                &pay,
                &parse(&format!(r#"{{"n":{i}}}"#)).unwrap(),
                round,
                &RecordOptions::default(),
            )
            .unwrap();
        let failure = m
            .record_tool_result(
                &pay,
                &call.fingerprint,
                Some(&parse(&format!(r#"{{"n":{i}}}"#)).unwrap()),
                true,
                round,
            )
            .unwrap();
        seen.extend(failure);
    }
    let server = m
        .record_tool_call(
            &JsString::from("server:web_search_call"),
            &parse("{}").unwrap(),
            7.0,
            &RecordOptions::server_tool(),
        )
        .unwrap();
    seen.extend(server.verdict);
    seen.extend(m.record_spend(5.0));
    let mut opt_ins: Vec<&str> = seen.iter().filter_map(|v| v.opt_in_detector).collect();
    opt_ins.sort_unstable();
    opt_ins.dedup();
    assert_eq!(opt_ins, ["budget", "no-progress", "tool-cycle", "tool-failure"]);
    for v in &seen {
        let kind = to_json(&v.detector);
        assert!(reference_kinds.iter().any(|k| kind == format!("\"{k}\"")), "{kind}");
        let json = v.to_json();
        match v.opt_in_detector {
            Some(name) => assert!(
                json.starts_with(&format!("{{\"detector\":{kind},\"optInDetector\":\"{name}\",")),
                "{json}"
            ),
            None => assert!(!json.contains("optInDetector"), "{json}"),
        }
    }
    for v in &seen {
        let expected = v
            .opt_in_detector
            .map(|name| name.parse::<doom_loop::Detector>().unwrap());
        if expected.is_some() {
            assert_eq!(
                v.detector_kind(),
                expected,
                "detector_kind names the opt-in detector that fired"
            );
        }
    }
    let budget = seen.iter().find(|v| v.opt_in_detector == Some("budget")).unwrap();
    assert_eq!(to_json(&budget.detector), "\"text-streak\"");
    assert!(budget.tool_name.is_none());
}
