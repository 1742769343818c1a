//! The session engine (`doom_loop::session`): every rung, in-round
//! duplicates, malformed arguments, loop-key forms, results, capabilities,
//! and state round trips (its own and the reference's shape).

use doom_loop::json::{parse, to_json, Value};
use doom_loop::ladder::Action;
use doom_loop::session::{
    Call, CallAction, CallKey, Capabilities, Response, Session, SessionOptions, SESSION_STATE_KEY,
};
use doom_loop::{resolve_doom_loop_option, DoomLoopMonitor, JsString, ResolvedConfig};

fn config(option: &str) -> ResolvedConfig {
    let option = parse(option).expect("option JSON");
    resolve_doom_loop_option(Some(&option))
        .result
        .expect("valid option")
        .expect("detection on")
}

fn args(text: &str) -> Value {
    parse(text).expect("args JSON")
}

fn invoice(id: &str) -> Call {
    Call::new(id, "get_invoice", args(r#"{"invoice_id":"INV-2291"}"#))
}

fn respond(session: &mut Session, calls: Vec<Call>) -> doom_loop::session::RoundOutcome {
    session.on_response(Response { text: None, calls })
}

/// The action of the first decision's verdict per response, for `n` identical responses.
fn ladder_run(session: &mut Session, n: usize) -> Vec<Option<Action>> {
    (1..=n)
        .map(|i| {
            respond(session, vec![invoice(&format!("c{i}"))]).decisions[0]
                .verdict
                .as_ref()
                .map(|v| v.action)
        })
        .collect()
}

#[test]
fn reference_defaults_observe_block_stop() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let actions = ladder_run(&mut session, 6);
    assert_eq!(
        actions,
        vec![
            None,
            Some(Action::Observe),
            Some(Action::Block),
            Some(Action::Block),
            Some(Action::Block),
            Some(Action::Stop)
        ]
    );
    let halt = session.halt().expect("halted at the 6th call").clone();
    assert_eq!(halt.action, Action::Stop);
    // A later response is sealed: refused with the halt text, not recorded.
    let streak_before = to_json(&session.state());
    let sealed = respond(&mut session, vec![invoice("c7")]);
    assert_eq!(sealed.decisions[0].action, CallAction::Refuse);
    assert!(sealed.decisions[0]
        .message
        .as_ref()
        .unwrap()
        .to_string()
        .starts_with("Not executed: this run was stopped"));
    assert_eq!(sealed.round, 0);
    assert_eq!(to_json(&session.state()), streak_before);
}

#[test]
fn block_refuses_with_the_verdict_text() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    ladder_run(&mut session, 2);
    let third = respond(&mut session, vec![invoice("c3")]);
    let decision = &third.decisions[0];
    assert_eq!(decision.action, CallAction::Refuse);
    assert_eq!(
        decision.message.as_ref(),
        Some(&decision.verdict.as_ref().unwrap().message)
    );
    assert!(third.halt.is_none());
}

#[test]
fn steer_and_escalate_shape_the_next_request() {
    let cfg = config(
        r#"{"ladder":{"observe":2,"steer":3,"escalate":4,"block":5,"stop":6},"escalation":{"model":"big","maxEscalations":1}}"#,
    );
    let mut session = Session::new(cfg, SessionOptions::default());
    let actions = ladder_run(&mut session, 3);
    assert_eq!(actions[2], Some(Action::Steer));
    let patch = session.next_request();
    assert!(patch.guidance.is_some());
    assert!(!patch.escalate);
    // Consumed once.
    assert_eq!(session.next_request().guidance, None);
    let fourth = respond(&mut session, vec![invoice("c4")]);
    assert_eq!(fourth.decisions[0].verdict.as_ref().unwrap().action, Action::Escalate);
    assert_eq!(fourth.decisions[0].action, CallAction::Run);
    let patch = session.next_request();
    assert!(patch.escalate);
    assert!(patch
        .guidance
        .unwrap()
        .to_string()
        .ends_with("The next turn runs on a stronger model: use it to change course."));
    assert!(to_json(&session.state()).contains("\"escalationsUsed\":1"));
    // Budget spent: the next escalate streak falls through to a weaker rung.
    let mut session2 = session.clone();
    respond(&mut session2, vec![Call::new("x", "other", args("{}"))]);
    assert!(!session2.next_request().escalate);
}

#[test]
fn steer_guidance_is_deduplicated() {
    let cfg = config(r#"{"ladder":{"observe":false,"steer":2,"block":false,"stop":false}}"#);
    let mut session = Session::new(cfg, SessionOptions::default());
    // Two tools, each steered in the same round: per-call texts differ by tool only.
    for round in 0..3 {
        let a = Call::new(format!("a{round}"), "a", args("{}"));
        let a2 = Call::new(format!("b{round}"), "a", args(r#"{"x":1}"#));
        respond(&mut session, vec![a, a2]);
    }
    let pending = session.pending_guidance().len();
    let guidance = session.take_guidance().unwrap().to_string();
    assert_eq!(guidance.lines().count(), pending);
    let unique: std::collections::HashSet<&str> = guidance.lines().collect();
    assert_eq!(unique.len(), pending, "no message twice: {guidance}");
}

#[test]
fn parallel_duplicates_count_once_and_share_the_first_decision() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let mut last = None;
    for round in 1..=3 {
        let out = respond(
            &mut session,
            vec![
                invoice(&format!("{round}a")),
                invoice(&format!("{round}b")),
                invoice(&format!("{round}c")),
            ],
        );
        assert!(!out.decisions[0].duplicate_in_round);
        assert!(out.decisions[1].duplicate_in_round && out.decisions[2].duplicate_in_round);
        assert_eq!(out.decisions[0].action, out.decisions[1].action);
        assert_eq!(out.decisions[0].verdict, out.decisions[2].verdict);
        last = Some(out);
    }
    // Three rounds of a triple fan-out: streak 3 (block), not 9.
    let out = last.unwrap();
    assert_eq!(out.decisions[0].streak, 3.0);
    assert_eq!(out.decisions[2].action, CallAction::Refuse);
    // The verdicts of a round are reported once.
    assert_eq!(out.verdicts.len(), 1);
}

#[test]
fn malformed_arguments_are_identified_by_their_text() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let mut actions = Vec::new();
    for round in 1..=3 {
        let out = respond(
            &mut session,
            vec![Call::malformed(format!("m{round}"), "run", "{not json")],
        );
        assert!(out.decisions[0].malformed);
        actions.push(out.decisions[0].action);
    }
    assert_eq!(actions, vec![CallAction::Run, CallAction::Run, CallAction::Refuse]);
    // Other raw text: another identity.
    let out = respond(&mut session, vec![Call::malformed("m4", "run", "{other")]);
    assert_eq!(out.decisions[0].streak, 1.0);
}

#[test]
fn loop_key_forms() {
    let mut loop_keys = doom_loop::json::Object::new();
    loop_keys.insert(JsString::from("shell"), args(r#"["command"]"#));
    loop_keys.insert(JsString::from("clock"), Value::Bool(false));
    loop_keys.insert(JsString::from("odd"), args("42"));
    let options = SessionOptions {
        loop_keys,
        ..SessionOptions::default()
    };
    let mut session = Session::new(ResolvedConfig::default(), options);
    let mut shell = Vec::new();
    for round in 1..=3 {
        // The field list ignores `ts`: the same command repeats.
        let call = Call::new(
            format!("s{round}"),
            "shell",
            args(&format!(r#"{{"command":"ls","ts":{round}}}"#)),
        );
        let clock = Call::new(format!("k{round}"), "clock", args("{}"));
        let mut host = Call::new(
            format!("h{round}"),
            "lookup",
            args(&format!(r#"{{"id":"A","nonce":{round}}}"#)),
        );
        host.key = CallKey::Material(args(r#""A""#));
        let mut exempt = Call::new(format!("e{round}"), "lookup2", args("{}"));
        exempt.key = CallKey::Exempt;
        let out = respond(&mut session, vec![call, clock, host, exempt]);
        assert!(out.decisions[1].exempt && out.decisions[3].exempt);
        assert_eq!(
            out.decisions[2].streak, round as f64,
            "host-resolved key material repeats"
        );
        shell.push(out.decisions[0].action);
    }
    assert_eq!(shell[2], CallAction::Refuse);
    // An unsupported shape falls back to the full arguments, with the reference's warning.
    let warnings = session.take_warnings();
    let out = respond(&mut session, vec![Call::new("o", "odd", args("{}"))]);
    assert!(!out.decisions[0].exempt);
    let warnings: Vec<String> = warnings.into_iter().chain(session.take_warnings()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("loopKey has unsupported shape (number)")),
        "{warnings:?}"
    );
    // A field list on non-object arguments: not monitored, with a warning.
    let out = respond(&mut session, vec![Call::new("s", "shell", args("3"))]);
    assert!(out.decisions[0].exempt);
    assert!(session
        .take_warnings()
        .iter()
        .any(|w| w.contains("could not be resolved")));
}

#[test]
fn unhashable_key_material_falls_back_to_the_arguments() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let mut call = Call::new("u", "t", args(r#"{"a":1}"#));
    call.key = CallKey::Material(Value::BigInt);
    let out = respond(&mut session, vec![call]);
    assert!(out.decisions[0].fingerprint.is_some());
    assert!(session
        .take_warnings()
        .iter()
        .any(|w| w.contains("using its full arguments")));
    let out = respond(&mut session, vec![Call::new("v", "t", Value::BigInt)]);
    assert!(out.decisions[0].fingerprint.is_none() && out.decisions[0].action == CallAction::Run);
}

#[test]
fn text_stop_halts_before_the_responses_calls() {
    let cfg = config(r#"{"ladder":{"observe":2,"block":false,"stop":3}}"#);
    let mut session = Session::new(cfg, SessionOptions::default());
    let text = JsString::from("I will check the invoice again.");
    for i in 1..=3 {
        let out = session.on_response(Response {
            text: Some(text.clone()),
            calls: vec![Call::new(format!("c{i}"), "t", args(&format!(r#"{{"i":{i}}}"#)))],
        });
        if i == 3 {
            assert_eq!(out.text_verdict.as_ref().unwrap().action, Action::Stop);
            assert!(out.halt.is_some());
            assert_eq!(out.decisions[0].action, CallAction::Refuse);
            assert!(
                out.decisions[0].fingerprint.is_none(),
                "halted before it ran: not recorded"
            );
        }
    }
}

#[test]
fn results_feed_outcome_streaks_once_per_call() {
    let cfg = config(r#"{"outcomes":true}"#);
    // A paging tool whose every page is new is progress: never blocked.
    let mut session = Session::new(cfg.clone(), SessionOptions::default());
    for page in 1..=8 {
        let out = respond(
            &mut session,
            vec![Call::new(format!("p{page}"), "scroll_down", args("{}"))],
        );
        assert_eq!(out.decisions[0].action, CallAction::Run, "page {page}");
        let result = Value::String(JsString::from(format!("lines {page}")));
        session.on_result(&JsString::from(format!("p{page}")), Some(&result), false);
        // Delivered twice: ignored.
        session.on_result(&JsString::from(format!("p{page}")), Some(&result), false);
    }
    // An A/B oscillation delivered twice per call is still a loop.
    let run = |deliveries: usize| {
        let mut session = Session::new(cfg.clone(), SessionOptions::default());
        let mut actions = Vec::new();
        for round in 1..=8 {
            let id = JsString::from(format!("q{round}"));
            let out = respond(&mut session, vec![Call::new(id.clone(), "poll", args("{}"))]);
            actions.push(out.decisions[0].verdict.as_ref().map(|v| v.action));
            let result = Value::String(JsString::from(if round % 2 == 1 { "A" } else { "B" }));
            for _ in 0..deliveries {
                session.on_result(&id, Some(&result), false);
            }
        }
        actions
    };
    assert_eq!(run(1), run(2));
    // A refused call's result is not evidence.
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    ladder_run(&mut session, 3);
    assert!(session.pending_tool(&JsString::from("c3")).is_none());
}

#[test]
fn failures_halt_after_the_round() {
    let cfg = config(r#"{"failures":true}"#);
    let mut session = Session::new(cfg, SessionOptions::default());
    let error = args(r#"{"error":"timeout"}"#);
    for round in 1..=6 {
        let id = JsString::from(format!("d{round}"));
        let out = respond(
            &mut session,
            vec![Call::new(id.clone(), "deploy", args(&format!(r#"{{"v":{round}}}"#)))],
        );
        assert_eq!(out.decisions[0].action, CallAction::Run);
        session.on_result(&id, Some(&error), true);
    }
    assert_eq!(session.halt().map(|v| v.action), Some(Action::Stop));
    assert_eq!(session.halt().unwrap().opt_in_detector, Some("tool-failure"));
}

#[test]
fn lone_calls_open_rounds_until_ended() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let mut actions = Vec::new();
    for round in 1..=3 {
        let first = session.on_call(invoice(&format!("{round}a")));
        let dup = session.on_call(invoice(&format!("{round}b")));
        assert!(dup.duplicate_in_round);
        assert_eq!(session.round(), round);
        session.end_round();
        actions.push(first.action);
    }
    assert_eq!(actions, vec![CallAction::Run, CallAction::Run, CallAction::Refuse]);
    assert_eq!(
        session.decision(&JsString::from("3b")).map(|d| d.action),
        Some(CallAction::Refuse)
    );
}

#[test]
fn would_halt_previews_without_changing_anything() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    ladder_run(&mut session, 5);
    let before = to_json(&session.state());
    assert!(session.would_halt(&[invoice("c6")]));
    assert!(!session.would_halt(&[Call::new("x", "other", args("{}"))]));
    assert_eq!(to_json(&session.state()), before);
}

#[test]
fn capabilities_skip_rungs_with_one_warning() {
    let options = SessionOptions {
        capabilities: Capabilities {
            refuse: false,
            escalate: false,
            ..Capabilities::default()
        },
        ..SessionOptions::default()
    };
    let cfg = config(r#"{"ladder":{"escalate":2},"escalation":{"model":"big"}}"#);
    let mut session = Session::new(cfg, options);
    let warnings = session.take_warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("cannot refuse a tool call") && warnings[0].contains("\"block\" (3)"));
    assert!(warnings[1].contains("\"escalate\" (2)"));
    assert!(session.take_warnings().is_empty(), "said once");
    let actions = ladder_run(&mut session, 5);
    assert_eq!(actions[2], Some(Action::Observe), "block skipped: falls through");
    assert!(!session.next_request().escalate);
}

#[test]
fn state_round_trips_and_continues_the_streak() {
    let cfg = config(r#"{"outcomes":true,"failures":true}"#);
    let mut straight = Session::new(cfg.clone(), SessionOptions::default());
    let mut resumed = Session::new(cfg.clone(), SessionOptions::default());
    for round in 1..=6 {
        let calls = || {
            vec![
                invoice(&format!("c{round}")),
                Call::new(format!("f{round}"), "fetch", args(&format!(r#"{{"u":{round}}}"#))),
            ]
        };
        let a = respond(&mut straight, calls());
        let b = respond(&mut resumed, calls());
        assert_eq!(a.decisions, b.decisions, "round {round}");
        let error = args(r#"{"error":"x"}"#);
        straight.on_result(&JsString::from(format!("f{round}")), Some(&error), true);
        // Persisted with a result outstanding, as JSON text, and resumed.
        let text = resumed.state_json();
        resumed = Session::restore(cfg.clone(), SessionOptions::default(), &parse(&text).unwrap());
        assert!(resumed.take_warnings().is_empty());
        resumed.on_result(&JsString::from(format!("f{round}")), Some(&error), true);
        assert_eq!(straight.state_json(), resumed.state_json(), "round {round}");
    }
    assert_eq!(straight.halt(), resumed.halt());
    assert!(straight.halt().is_some());
}

#[test]
fn the_state_is_the_reference_shape_and_the_reference_resumes_it() {
    let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
    ladder_run(&mut session, 6);
    let state = session.state();
    let object = state.as_object().unwrap();
    let keys: Vec<String> = object.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, vec!["tools", "stopVerdict", SESSION_STATE_KEY]);
    // A reference monitor resumes it (extra keys ignored) to the same detector state.
    let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
    assert!(monitor.restore(&state).is_empty());
    assert_eq!(to_json(&monitor.get_state()), to_json(&session.monitor().get_state()));
    // A reference blob resumes into a session: the streak continues.
    let reference = parse(r#"{"tools":{"get_invoice":{"fingerprint":"x","streak":4}},"pendingSteer":["keep going"],"stopVerdict":{"detector":"tool-fingerprint","action":"stop","streak":6,"fingerprint":"f","toolName":"get_invoice","message":"m"}}"#).unwrap();
    let mut resumed = Session::restore(ResolvedConfig::default(), SessionOptions::default(), &reference);
    assert!(resumed.halt().is_none(), "a fresh turn does not re-arm a halt");
    assert_eq!(
        resumed.take_guidance().map(|g| g.to_string()),
        Some("keep going".to_string())
    );
    resumed.resume_halt();
    assert_eq!(resumed.halt().map(|v| v.streak), Some(6.0));
    resumed.on_user_turn();
    assert!(resumed.halt().is_none());
}

#[test]
fn corrupt_state_fails_open() {
    for blob in [
        r#"null"#,
        r#"[1,2]"#,
        r#"{"tools":7,"session":{"round":-1,"inflight":"x"},"stopVerdict":{"action":"nope"}}"#,
        r#""text""#,
    ] {
        let mut session = Session::restore(
            ResolvedConfig::default(),
            SessionOptions::default(),
            &parse(blob).unwrap(),
        );
        assert_eq!(session.round(), 0);
        assert!(session.halt().is_none());
        let out = respond(&mut session, vec![invoice("c")]);
        assert_eq!(out.decisions[0].action, CallAction::Run);
    }
}

// ---- issue 20 item 6: outcome bookkeeping (each repro of ../shared/repros/round3 has a test here) ----

/// failures_round_lost_on_restore.mjs: the round of the last failure is persisted.
#[test]
fn regression_failure_round_survives_restore_mid_round() {
    let cfg = config(r#"{"failures":true}"#);
    let run = |restore_mid_round: bool| {
        let mut m = DoomLoopMonitor::new(cfg.clone());
        let declared = [args(r#"{"u":1}"#), args(r#"{"u":2}"#)]
            .into_iter()
            .map(|key_material| doom_loop::DeclaredCall {
                tool_name: JsString::from("fetch"),
                key_material,
            })
            .collect::<Vec<_>>();
        m.declare_round(1.0, &declared);
        let tool = JsString::from("fetch");
        let options = doom_loop::RecordOptions::default();
        let a = m.record_tool_call(&tool, &args(r#"{"u":1}"#), 1.0, &options).unwrap();
        let b = m.record_tool_call(&tool, &args(r#"{"u":2}"#), 1.0, &options).unwrap();
        let error = args(r#"{"error":"timeout"}"#);
        m.record_tool_result(&tool, &a.fingerprint, Some(&error), true, 1.0)
            .unwrap();
        if restore_mid_round {
            let blob = parse(&to_json(&m.get_state())).unwrap();
            m = DoomLoopMonitor::new(cfg.clone());
            m.restore(&blob);
        }
        m.record_tool_result(&tool, &b.fingerprint, Some(&error), true, 1.0)
            .unwrap();
        to_json(&m.get_state())
    };
    assert_eq!(run(false), run(true));
    assert!(run(false).contains(r#""failures":{"fetch":1}"#));
}

/// outcomes_duplicate_result_delivery.mjs: a result delivered twice for one call counts once.
#[test]
fn regression_a_result_delivered_twice_counts_once() {
    let cfg = config(r#"{"outcomes":true}"#);
    let run = |deliveries: usize| {
        let mut m = DoomLoopMonitor::new(cfg.clone());
        let tool = JsString::from("poll");
        let mut actions = Vec::new();
        for round in 1..=8 {
            let record = m
                .record_tool_call(&tool, &args("{}"), round as f64, &Default::default())
                .unwrap();
            actions.push(record.verdict.map(|v| v.action));
            let result = Value::String(JsString::from(if round % 2 == 1 { "A" } else { "B" }));
            for _ in 0..deliveries {
                m.record_tool_result(&tool, &record.fingerprint, Some(&result), false, round as f64)
                    .unwrap();
            }
        }
        actions
    };
    assert_eq!(run(1), run(2));
    assert_eq!(run(2)[3], Some(Action::Block), "the A/B oscillation is still a loop");
}

/// replay_duplicate_in_round_outcomes.mjs: the replay records a round's calls before their results,
/// so an in-round duplicate gets its first call's decision.
#[test]
fn regression_replay_records_the_round_before_its_results() {
    let cfg = config(r#"{"outcomes":true}"#);
    let mut session = Session::new(cfg, SessionOptions::default());
    let p = |id: &str| Call::new(id, "p", args(r#"{"x":0}"#));
    let first = respond(&mut session, vec![p("a")]);
    session.on_result(
        &first.decisions[0].id,
        Some(&Value::String(JsString::from("r0"))),
        false,
    );
    let second = respond(&mut session, vec![p("b"), p("c")]);
    assert_eq!(second.decisions[0].verdict, second.decisions[1].verdict);
    assert_eq!(second.decisions[0].streak, second.decisions[1].streak);
    assert_eq!(
        second.decisions[0].verdict.as_ref().map(|v| v.action),
        Some(Action::Observe)
    );
}

// ---- found by the `session` fuzz target (fuzz/fuzz_targets/session.rs) ----

/// A live session resumed from a blob that is not a state (null, an array,
/// a string) starts the run over, as `Session::restore` of it does. It used
/// to keep the detector's streaks — the monitor ignores such a blob, as the
/// reference's `restore` does — while the session's round counter went back
/// to 0: the next round then carried a number the detector had already
/// seen, and a repeated call counted as an in-round duplicate (streak 1, no
/// verdict) instead of a repeat.
#[test]
fn regression_resume_of_an_invalid_state_starts_the_run_over() {
    for blob in ["null", "[]", r#""text""#, "7"] {
        let blob = parse(blob).unwrap();
        let mut live = Session::new(ResolvedConfig::default(), SessionOptions::default());
        respond(&mut live, vec![invoice("a")]);
        live.resume(&blob);
        assert_eq!(live.take_warnings().len(), 1, "the reference's warning, once");
        let mut restored = Session::restore(ResolvedConfig::default(), SessionOptions::default(), &blob);
        assert_eq!(live.state_json(), restored.state_json());
        for round in 1..=3 {
            let id = format!("r{round}");
            let from_live = respond(&mut live, vec![invoice(&id)]);
            let from_restored = respond(&mut restored, vec![invoice(&id)]);
            assert_eq!(
                from_live,
                from_restored,
                "round {round} after resuming {}",
                to_json(&blob)
            );
            assert!(!from_live.decisions[0].duplicate_in_round);
            assert_eq!(from_live.decisions[0].streak, round as f64);
        }
    }
}

/// A pending escalation survives a persist and resume — a run paused between
/// the escalate verdict and its next request (an approval, a serverless step)
/// — so the resumed run's next request escalates, as the guidance queued with
/// it says ("The next turn runs on a stronger model"). It used to be lost:
/// the guidance was persisted, the escalation was not.
#[test]
fn regression_a_pending_escalation_survives_persist_and_resume() {
    let cfg = config(
        r#"{"ladder":{"observe":2,"steer":3,"escalate":4,"block":5,"stop":6},"escalation":{"model":"big","maxEscalations":1}}"#,
    );
    let mut live = Session::new(cfg.clone(), SessionOptions::default());
    let actions = ladder_run(&mut live, 4);
    assert_eq!(actions[3], Some(Action::Escalate));
    let text = live.state_json();
    let mut resumed = Session::restore(cfg, SessionOptions::default(), &parse(&text).unwrap());
    assert!(resumed.take_warnings().is_empty());
    assert_eq!(resumed.state_json(), text);
    let patch = live.next_request();
    assert!(patch.escalate);
    assert_eq!(resumed.next_request(), patch);
    assert_eq!(resumed.state_json(), live.state_json(), "the budget spent in both");
    // Taken once, in both.
    assert!(!resumed.next_request().escalate);
}

/// A call keyed by the host's fingerprint of its arguments
/// ([`CallKey::Fingerprint`], what the npm session sends for heavy
/// arguments instead of the arguments) decides exactly as the same call
/// keyed by the arguments themselves: the same fingerprints, streaks,
/// verdicts and refusals over a loop, in-round duplicates included, and
/// the same state.
#[test]
fn a_host_fingerprint_of_the_arguments_decides_as_the_arguments_do() {
    let tool = JsString::from("get_invoice");
    let material = args(r#"{"invoice_id":"INV-2291","lines":[1,2,{"b":1,"a":"x\n"}]}"#);
    let fingerprint = doom_loop::fingerprint::fingerprint_tool_call(&tool, &material).unwrap();
    let keyed = |id: String| {
        let mut call = Call::new(id, "get_invoice", Value::Null);
        call.key = CallKey::Fingerprint(JsString::from(fingerprint.as_str()));
        call
    };
    let plain = |id: String| Call::new(id, "get_invoice", material.clone());
    let mut by_args = Session::new(ResolvedConfig::default(), SessionOptions::default());
    let mut by_host = Session::new(ResolvedConfig::default(), SessionOptions::default());
    for round in 1..=7 {
        let ids = [format!("c{round}"), format!("d{round}")];
        let a = respond(&mut by_args, ids.iter().cloned().map(plain).collect());
        let b = respond(&mut by_host, ids.iter().cloned().map(keyed).collect());
        assert_eq!(a.decisions, b.decisions, "round {round}");
        assert_eq!(a.halt, b.halt, "round {round}");
        if round < 7 {
            // The 7th response comes after the stop: refused, unrecorded.
            assert_eq!(a.decisions[0].fingerprint, Some(JsString::from(fingerprint.as_str())));
        }
    }
    assert!(by_host.halt().is_some(), "the loop was stopped");
    assert_eq!(to_json(&by_args.state()), to_json(&by_host.state()));
    assert_eq!(by_args.take_warnings(), by_host.take_warnings());
}

/// A host fingerprint that is not 64 lowercase hex digits is not trusted:
/// the call runs unmonitored, with one warning naming the tool.
#[test]
fn a_host_fingerprint_that_is_not_one_leaves_the_call_unmonitored() {
    for bad in [
        "",
        "ABC",
        &"A".repeat(64),
        &"0".repeat(63),
        &"g".repeat(64),
        &"0".repeat(65),
    ] {
        let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
        let mut call = Call::new("c", "t", args(r#"{"a":1}"#));
        call.key = CallKey::Fingerprint(JsString::from(bad));
        let out = respond(&mut session, vec![call]);
        assert!(
            out.decisions[0].exempt && out.decisions[0].fingerprint.is_none(),
            "{bad:?}"
        );
        let warnings = session.take_warnings();
        assert_eq!(warnings.len(), 1, "{bad:?}: {warnings:?}");
        assert!(
            warnings[0].contains("\"t\" call cannot be fingerprinted"),
            "{warnings:?}"
        );
    }
}

/// A fixed-seed xorshift64: the same runs every time.
struct Runs(u64);

impl Runs {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn would_halt_predicts_exactly_what_the_next_round_does() {
    // `would_halt` scores the calls on a scratch copy of their tools'
    // entries and the opt-in detectors' state; the live round is the
    // oracle. Random runs over a few tools and arguments —
    // loops to catch among them — after a wide state of other tools,
    // under the reference's defaults, a short ladder, the recommended
    // option and the other opt-in detectors.
    let options = [
        "true".to_string(),
        r#"{"ladder":{"observe":2,"steer":3,"block":4,"stop":5}}"#.to_string(),
        doom_loop::json::to_json(&doom_loop::config::recommended_doom_loop_option()),
        r#"{"outcomes":true,"novelty":true,"ladder":{"observe":2,"block":3,"stop":4}}"#.to_string(),
        r#"{"cycles":true,"ledger":true,"failures":true,"budget":{"maxSpend":5},"ladder":{"stop":4}}"#.to_string(),
    ];
    let mut runs = Runs(0x9E37_79B9_7F4A_7C15);
    let (mut halts, mut rounds) = (0, 0);
    for option in &options {
        for run in 0..60 {
            let mut session = Session::new(config(option), SessionOptions::default());
            // Past MAX_TOOLS tools, the outcome and novelty evidence
            // starts evicting.
            let wide: Vec<Call> = (0..runs.below(doom_loop::novelty::MAX_TOOLS + 16))
                .map(|k| Call::new(format!("w{k}"), format!("other{k}"), args(&format!(r#"{{"k":{k}}}"#))))
                .collect();
            respond(&mut session, wide);
            for round in 0..12 {
                let calls: Vec<Call> = (0..1 + runs.below(3))
                    .map(|k| {
                        let tool = ["read", "bash", "edit", "other3"][runs.below(4)];
                        let arg = runs.below(2);
                        Call::new(format!("{run}-{round}-{k}"), tool, args(&format!(r#"{{"arg":{arg}}}"#)))
                    })
                    .collect();
                let predicted = session.would_halt(&calls);
                let outcome = respond(&mut session, calls);
                assert_eq!(
                    predicted,
                    outcome.halt.is_some(),
                    "option {option}, run {run}, round {round}"
                );
                // Results, some failing, some the same as before: what the
                // outcome, novelty, ledger and failure detectors read.
                for decision in &outcome.decisions {
                    if runs.below(3) > 0 {
                        // Mostly the same result for the same call.
                        let out = if runs.below(4) > 0 {
                            decision.streak as usize
                        } else {
                            7 + runs.below(2)
                        };
                        let result = args(&format!(r#"{{"out":{out}}}"#));
                        session.on_result(&decision.id, Some(&result), runs.below(4) == 0);
                    }
                }
                rounds += 1;
                halts += usize::from(predicted);
                if predicted {
                    break;
                }
            }
        }
    }
    // The runs reach halts, not only quiet rounds.
    assert!(halts > 20 && rounds > 500, "{halts} halts in {rounds} rounds");
}

#[test]
fn regression_would_halt_sees_the_novelty_evidence_evict_a_calls_own_tool() {
    would_halt_sees_the_evidence_evict_a_calls_own_tool(
        r#"{"novelty":true,"ladder":{"observe":2,"block":3,"stop":4}}"#,
    );
}

#[test]
fn would_halt_sees_the_outcome_evidence_evict_a_calls_own_tool() {
    would_halt_sees_the_evidence_evict_a_calls_own_tool(
        r#"{"outcomes":true,"ladder":{"observe":2,"block":3,"stop":4}}"#,
    );
}

/// MAX_TOOLS tools tracked at most, the looping tool the least recently
/// active: the round's new tools evict its evidence — one new tool when
/// MAX_TOOLS are tracked, two when one fewer are — and the live round
/// scores it afresh. A preview over the calls' tools alone would keep that
/// evidence and predict no halt where the round halts.
fn would_halt_sees_the_evidence_evict_a_calls_own_tool(option: &str) {
    let max = doom_loop::novelty::MAX_TOOLS;
    assert_eq!(max, doom_loop::outcome::MAX_TOOLS);
    for (others, new_tools) in [(max - 1, 1), (max - 2, 2)] {
        let mut session = Session::new(config(option), SessionOptions::default());
        let looping = |id: &str| Call::new(id, "t0", args(r#"{"same":true}"#));
        // Its output moves at every call: the novelty- and outcome-aware
        // streaks keep restarting.
        for (round, output) in ["\"a\"", "\"b\"", "\"c\"", "\"d\""].iter().enumerate() {
            let decision = respond(&mut session, vec![looping(&format!("l{round}"))])
                .decisions
                .remove(0);
            assert!(decision.verdict.is_none_or(|v| v.action != Action::Stop));
            session.on_result(&decision.id, Some(&args(output)), false);
        }
        let wide: Vec<Call> = (1..=others)
            .map(|k| Call::new(format!("o{k}"), format!("o{k}"), args("{}")))
            .collect();
        respond(&mut session, wide);
        let mut next: Vec<Call> = (0..new_tools)
            .map(|k| Call::new(format!("z{k}"), format!("zz-new{k}"), args("{}")))
            .collect();
        next.push(looping("l4"));
        let predicted = session.would_halt(&next);
        let outcome = respond(&mut session, next);
        // Evicted, its evidence restarts: the whole streak counts, and stops.
        assert!(outcome.halt.is_some(), "{option}: {others} others, {new_tools} new");
        assert!(predicted, "{option}: {others} others, {new_tools} new");
    }
}

#[test]
fn regression_resume_forgets_the_declaration_of_a_round_before_it() {
    // A response declares a round of two distinct calls of one tool; the
    // run is resumed from a state whose rounds start over, and a lone call
    // of that tool opens a round of the same number. Found by the `session`
    // fuzz target: the live session scored it against the old declaration
    // (a round set of two), a session restored from the same state did not.
    let tool = |id: &str, value: &str| Call::new(id, "t", args(value));
    let mut live = Session::new(ResolvedConfig::default(), SessionOptions::default());
    respond(&mut live, vec![tool("a", r#""x""#), tool("b", "[1,2]")]);
    let state = parse(r#"{"tools":{}}"#).unwrap();
    live.resume(&state);
    let mut fresh = Session::restore(ResolvedConfig::default(), SessionOptions::default(), &state);
    let lone = tool("c", r#""x""#);
    assert_eq!(live.on_call(lone.clone()).to_json(), fresh.on_call(lone).to_json());
    assert_eq!(to_json(&live.state()), to_json(&fresh.state()));
}

// ------------------------------------------------ evidence keys (16 digits)

/// A run that gives the outcome and novelty evidence every kind of entry:
/// a pager whose pages move, a test run whose failure does not, an
/// oscillating poll, edits with distinct arguments, and many tools.
fn evidence_run(session: &mut Session, rounds: std::ops::Range<u32>) -> Vec<String> {
    let mut log = Vec::new();
    for round in rounds {
        let mut calls = vec![
            Call::new(format!("p{round}"), "read_page", args("{}")),
            Call::new(
                format!("t{round}"),
                "run_tests",
                args(if round % 4 == 3 {
                    r#"{"suite":"all"}"#
                } else {
                    r#"{"suite":"unit"}"#
                }),
            ),
            Call::new(
                format!("e{round}"),
                format!("tool{}", round % 7),
                args(&format!(r#"{{"line":{round}}}"#)),
            ),
        ];
        if round % 3 == 0 {
            calls.push(Call::new(format!("q{round}"), "poll", args(r#"{"job":7}"#)));
        }
        let ids: Vec<JsString> = calls.iter().map(|c| c.id.clone()).collect();
        let outcome = session.on_response(Response {
            text: Some(JsString::from(format!("step {round}"))),
            calls,
        });
        log.push(format!(
            "{:?}",
            outcome
                .decisions
                .iter()
                .map(|d| (d.action, d.verdict.as_ref().map(|v| v.action)))
                .collect::<Vec<_>>()
        ));
        for id in ids {
            let text = match id.to_utf8_lossy().chars().next() {
                Some('p') => format!("page {round}"),
                Some('t') if round < 6 => "1 failed: test_parse".to_string(),
                Some('t') => format!("{} passed", round),
                Some('q') => {
                    if round % 2 == 0 {
                        "queued".to_string()
                    } else {
                        "running".to_string()
                    }
                }
                _ => format!("edited line {round}"),
            };
            session.on_result(&id, Some(&Value::String(JsString::from(text))), false);
        }
    }
    log
}

/// The opt-in evidence keeps 16 of a digest's 64 hex digits
/// (`doom_loop::detectors::EVIDENCE_KEY_DIGITS`). A state persisted before
/// that — `tests/fixtures/recommended-state-64-digit-evidence.json`, written
/// by commit 584aae2 after rounds 0..12 of `evidence_run` under
/// `RECOMMENDED_DOOM_LOOP_OPTION` — resumes as the run it came from: its
/// state reads back as the new engine's own after the same rounds, and the
/// rounds after it decide the same.
#[test]
fn a_state_with_64_digit_evidence_resumes_as_it_was() {
    let recommended = || config(doom_loop::RECOMMENDED_DOOM_LOOP_OPTION);
    let old = parse(include_str!("fixtures/recommended-state-64-digit-evidence.json")).expect("fixture JSON");
    let digits = |state: &str| state.split('"').map(str::len).filter(|&n| n == 64).count();
    assert!(digits(&to_json(&old)) > 50, "the fixture holds full digests");

    let mut live = Session::new(recommended(), SessionOptions::default());
    evidence_run(&mut live, 0..12);
    let state = live.state_json();
    // Only the reference's own part keeps whole fingerprints.
    let beyond = |state: &Value| to_json(state.as_object().and_then(|o| o.get("beyond")).expect("beyond"));
    let (new, before) = (beyond(&live.state()), beyond(&old));
    assert_eq!(digits(&new), 0, "{new}");
    assert!(
        new.len() * 2 < before.len(),
        "{} B against {} B",
        new.len(),
        before.len()
    );

    let mut resumed = Session::restore(recommended(), SessionOptions::default(), &old);
    // The old build listed the outcome evidence's tools first seen first,
    // this one least recently active first: the same evidence.
    assert_eq!(
        outcome_tools_sorted(&resumed.state_json()),
        outcome_tools_sorted(&state)
    );
    assert_eq!(evidence_run(&mut resumed, 12..30), evidence_run(&mut live, 12..30));
    assert_eq!(
        outcome_tools_sorted(&resumed.state_json()),
        outcome_tools_sorted(&live.state_json())
    );
}

/// A state's JSON with the tools of its outcome evidence in name order.
fn outcome_tools_sorted(state: &str) -> String {
    use doom_loop::json::Object;
    let sorted = |object: &Object| {
        let mut entries: Vec<(JsString, Value)> = object.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        entries.sort_by(|a, b| a.0.cmp_utf16(&b.0));
        Value::Object(Object::from_entries(entries))
    };
    let mut state = parse(state)
        .expect("state JSON")
        .as_object()
        .cloned()
        .expect("an object");
    if let Some(mut beyond) = state.get("beyond").and_then(Value::as_object).cloned() {
        if let Some(outcomes) = beyond.get("outcomes").and_then(Value::as_object) {
            let outcomes = sorted(outcomes);
            beyond.insert(JsString::from("outcomes"), outcomes);
        }
        state.insert(JsString::from("beyond"), Value::Object(beyond));
    }
    to_json(&Value::Object(state))
}
