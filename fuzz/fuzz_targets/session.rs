//! The session engine (`doom_loop::session::Session`: what every adapter,
//! hook, replay and evaluation runs) as a state machine: the input is a
//! small program.
//!
//! Layout: a `doomLoop` option (as the `monitor` target builds it), a byte
//! of session options (capabilities the host lacks; a declared `loopKey`
//! for one tool), then ops — a response (text and up to four calls: ids
//! that repeat within and across rounds, malformed arguments, exempt calls,
//! calls keyed by the host's fingerprint of their arguments (or a string that is not one),
//! host-resolved key material, unhashable key material), a lone call, the
//! round controls, a text, a server tool, a result (for a call that ran or
//! an unknown one), a spend, a user turn, a resume of the session's own
//! state or of an odd blob, the halt re-armed, the next request taken.
//!
//! Invariants:
//! - nothing panics;
//! - a response answers one decision per call, in order, with the call's
//!   id, tool and malformed flag; a fingerprint is 64 lowercase hex digits
//!   and an exempt call has none; in a run halted before the response every
//!   call is refused (run, when the host cannot refuse) with the halt text,
//!   unrecorded, in round 0;
//! - `would_halt(calls)`, asked before a response without text, says
//!   whether recording those calls halts the run;
//! - the persisted state is complete: a session restored from
//!   `state_json()` (not halted, below the restore clamps) writes the same
//!   state, scores a lone call in a new round and the next response exactly
//!   as the live session does (decisions, verdicts, halt), and then has the
//!   same state and the same next request (guidance, escalation).
#![no_main]

use doom_loop::fingerprint::fingerprint_tool_call;
use doom_loop::json::{parse, to_json, Object};
use doom_loop::session::{Call, CallAction, CallKey, Capabilities, Response, RoundOutcome, Session, SessionOptions};
use doom_loop::{resolve_doom_loop_option, Action, JsString, ResolvedConfig, Value};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{beyond_within_restore_clamp, restore_normal_form, within_restore_clamp};
#[path = "program.rs"]
mod program;
use program::{args, blob, build_option, s, spend, text, tool, Cursor, Trace};

/// The most pending guidance messages a restored state brings back
/// (`src/session/persist.rs`).
const MAX_RESTORED_STEER: usize = 64;

/// Capabilities from the low four bits (a set bit: the host lacks it), and
/// a `loopKey` declaration for the tool `read` from the rest.
fn session_options(b: u8) -> SessionOptions {
    let capabilities = Capabilities {
        refuse: b & 1 == 0,
        stop: b & 2 == 0,
        steer: b & 4 == 0,
        escalate: b & 8 == 0,
    };
    let declaration = match b >> 4 {
        0..=7 => None,
        8 => Some(Value::Bool(false)),
        9 => Some(Value::Array(vec![s("a")])),
        10 => Some(Value::Array(vec![s("a"), s("b")])),
        11 => Some(Value::Array(vec![])),
        12 => Some(Value::Array(vec![s("absent")])),
        13 => Some(s("a")),
        14 => Some(Value::Array(vec![s("__proto__"), s("constructor")])),
        _ => Some(Value::Null),
    };
    let loop_keys = declaration.map_or_else(Object::new, |value| {
        Object::from_entries(vec![(JsString::from("read"), value)])
    });
    SessionOptions {
        loop_keys,
        capabilities,
        ..SessionOptions::default()
    }
}

/// A call id: a few that repeat within and across rounds, or none.
fn id(c: &mut Cursor) -> JsString {
    match c.byte() % 7 {
        6 => JsString::new(),
        n => JsString::from(format!("call_{n}").as_str()),
    }
}

fn call(c: &mut Cursor) -> Call {
    let b = c.byte();
    let id = id(c);
    let name = tool(c);
    if b & 7 == 7 {
        let raw = String::from_utf8_lossy(c.chunk(16)).into_owned();
        return Call::malformed(id, name, raw.as_str());
    }
    let mut call = Call::new(id, name, args(c));
    call.key = match b >> 5 {
        0 => CallKey::Exempt,
        1 => CallKey::Material(args(c)),
        2 => CallKey::Material(call.args.clone()),
        // The host's fingerprint of the arguments (the npm shim's heavy
        // arguments), or a string that is not one.
        3 => match fingerprint_tool_call(&call.tool_name, &call.args) {
            Ok(fingerprint) if b & 8 == 0 => CallKey::Fingerprint(fingerprint.as_str().into()),
            _ => CallKey::Fingerprint(String::from_utf8_lossy(c.chunk(64)).as_ref().into()),
        },
        _ => CallKey::Declared,
    };
    call
}

fn calls(c: &mut Cursor) -> Vec<Call> {
    (0..c.byte() % 5).map(|_| call(c)).collect()
}

/// The decisions, verdicts and halt of an outcome as JSON, for comparing two sessions.
fn scored(outcome: &RoundOutcome) -> String {
    let decisions: Vec<String> = outcome.decisions.iter().map(|d| d.to_json()).collect();
    let verdicts: Vec<String> = outcome.verdicts.iter().map(|v| v.to_json()).collect();
    format!(
        "round {} decisions {decisions:?} verdicts {verdicts:?} halt {:?}",
        outcome.round,
        outcome.halt.as_ref().map(|v| v.to_json())
    )
}

fn check_decisions(session_halted: bool, refuses: bool, calls: &[Call], outcome: &RoundOutcome, trace: &Trace) {
    assert_eq!(
        outcome.decisions.len(),
        calls.len(),
        "one decision per call{}",
        trace.dump()
    );
    for (call, decision) in calls.iter().zip(&outcome.decisions) {
        assert_eq!(decision.id, call.id);
        assert_eq!(decision.tool_name, call.tool_name);
        assert_eq!(decision.malformed, call.malformed);
        if let Some(fingerprint) = &decision.fingerprint {
            let digits = fingerprint.as_bytes();
            assert!(
                digits.len() == 64 && digits.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)),
                "fingerprint {fingerprint:?}"
            );
            assert!(!decision.exempt, "an exempt call with a fingerprint");
        }
        if session_halted {
            let action = if refuses { CallAction::Refuse } else { CallAction::Run };
            assert_eq!(decision.action, action, "a call of a halted run{}", trace.dump());
            assert!(
                decision.message.is_some() && decision.fingerprint.is_none(),
                "a call of a halted run recorded: {}{}",
                decision.to_json(),
                trace.dump()
            );
        }
    }
    if session_halted {
        assert_eq!(outcome.round, 0, "a halted run's response opened a round");
    }
}

/// The persisted state is complete: restored from its JSON text (what
/// `state_json` writes), it writes itself again.
fn restored(session: &Session, config: &ResolvedConfig, options: &SessionOptions, trace: &Trace) -> Option<Session> {
    let state = session.state();
    if session.halt().is_some() || !within_restore_clamp(&state) || !beyond_within_restore_clamp(&state) {
        return None;
    }
    let reread = parse(&to_json(&state)).expect("the state's JSON parses");
    let mut fresh = Session::restore(config.clone(), options.clone(), &reread);
    let _ = fresh.take_warnings();
    assert_eq!(
        to_json(&restore_normal_form(&fresh.state())),
        to_json(&restore_normal_form(&state)),
        "restore(state_json()) changed the state{}",
        trace.dump()
    );
    Some(fresh)
}

fn describe(calls: &[Call]) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            format!(
                "{}:{}({}{}, {:?})",
                c.id,
                c.tool_name,
                to_json(&c.args),
                if c.malformed { ", malformed" } else { "" },
                c.key
            )
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor { data };
    let option = build_option(&mut c);
    let config = match resolve_doom_loop_option(option.as_ref()).result {
        Ok(Some(config)) => config,
        _ => ResolvedConfig::default(),
    };
    let options = session_options(c.byte());
    let mut session = Session::new(config.clone(), options.clone());
    let refuses = options.capabilities.refuse;
    // DOOM_LOOP_FUZZ_TRACE=1 cargo fuzz run session <input>: the op trace in panic messages.
    let mut trace = Trace::from_env();

    for _ in 0..48 {
        if c.is_empty() {
            break;
        }
        match c.byte() % 14 {
            0..=3 => {
                let with_text = c.byte() % 4 == 0;
                let response_text = with_text.then(|| text(&mut c));
                let calls = calls(&mut c);
                trace.push(|| format!("on_response(text {response_text:?}, {:?})", describe(&calls)));
                let halted = session.halt().is_some();
                let predicted = session.would_halt(&calls);
                if halted {
                    assert!(predicted, "would_halt of a halted run");
                }
                let outcome = session.on_response(Response {
                    text: response_text,
                    calls: calls.clone(),
                });
                if !with_text && !halted {
                    assert_eq!(
                        predicted,
                        outcome.halt.is_some(),
                        "would_halt disagrees with the response{}",
                        trace.dump()
                    );
                }
                // A text `stop` halts before the response's own calls run.
                let halted_by_text = outcome.text_verdict.as_ref().is_some_and(|v| v.action == Action::Stop);
                check_decisions(halted || halted_by_text, refuses, &calls, &outcome, &trace);
            }
            4 => {
                let one = call(&mut c);
                trace.push(|| format!("on_call({:?})", describe(std::slice::from_ref(&one))));
                let decision = session.on_call(one.clone());
                assert_eq!(decision.id, one.id);
                assert_eq!(decision.tool_name, one.tool_name);
            }
            5 => {
                trace.push(|| "begin_round()".into());
                session.begin_round();
            }
            6 => {
                let b = c.byte();
                trace.push(|| format!("{}_round()", if b & 1 == 0 { "seal" } else { "end" }));
                if b & 1 == 0 {
                    session.seal_round();
                } else {
                    session.end_round();
                }
            }
            7 => {
                let t = text(&mut c);
                trace.push(|| format!("on_text({t:?})"));
                if let Some(v) = session.on_text(&t) {
                    assert!(v.streak >= 1.0, "text verdict streak {}", v.streak);
                }
            }
            8 => {
                let name = tool(&mut c);
                let identity = args(&mut c);
                trace.push(|| format!("on_server_tool({name:?}, {})", to_json(&identity)));
                session.on_server_tool(&name, &identity);
            }
            9 => {
                let call_id = id(&mut c);
                let b = c.byte();
                let outcome = (b & 1 == 1).then(|| args(&mut c));
                let failed = b & 2 != 0;
                trace.push(|| {
                    format!(
                        "on_result({call_id}, {:?}, failed={failed})",
                        outcome.as_ref().map(to_json)
                    )
                });
                let pending = session.pending_tool(&call_id).is_some();
                let verdict = session.on_result(&call_id, outcome.as_ref(), failed);
                assert!(
                    pending || verdict.is_none(),
                    "a verdict for a call not awaiting its result"
                );
                assert!(session.pending_tool(&call_id).is_none(), "a result answered twice");
            }
            10 => {
                let amount = spend(&mut c);
                trace.push(|| format!("on_spend({amount})"));
                session.on_spend(amount);
            }
            11 => {
                trace.push(|| "on_user_turn()".into());
                session.on_user_turn();
                assert!(session.halt().is_none());
            }
            12 => {
                let b = c.byte();
                if b & 1 == 0 {
                    // Persist and resume, then score one response on both.
                    trace.push(|| "restore(state_json())".into());
                    if let Some(mut fresh) = restored(&session, &config, &options, &trace) {
                        // A lone call first, sometimes, in a round of its
                        // own (a state persisted mid-round resumes into a new
                        // round: docs/limits.md).
                        if b & 2 != 0 {
                            let one = call(&mut c);
                            trace.push(|| {
                                format!("end_round, on_call on both({:?})", describe(std::slice::from_ref(&one)))
                            });
                            session.end_round();
                            fresh.end_round();
                            let live = session.on_call(one.clone()).to_json();
                            assert_eq!(
                                fresh.on_call(one).to_json(),
                                live,
                                "a resumed session decides a lone call differently{}",
                                trace.dump()
                            );
                        }
                        let calls = calls(&mut c);
                        trace.push(|| format!("on_response on both({:?})", describe(&calls)));
                        let live = session.on_response(Response {
                            text: None,
                            calls: calls.clone(),
                        });
                        let resumed = fresh.on_response(Response { text: None, calls });
                        assert_eq!(
                            scored(&resumed),
                            scored(&live),
                            "a resumed session scores differently{}",
                            trace.dump()
                        );
                        // And goes on as the live one: the same state, the
                        // same next request (below the restore's cap on
                        // pending guidance).
                        if session.pending_guidance().len() <= MAX_RESTORED_STEER {
                            assert_eq!(
                                to_json(&restore_normal_form(&fresh.state())),
                                to_json(&restore_normal_form(&session.state())),
                                "a resumed session's state drifts{}",
                                trace.dump()
                            );
                            assert_eq!(
                                fresh.next_request(),
                                session.next_request(),
                                "a resumed session's next request differs{}",
                                trace.dump()
                            );
                        }
                        session = fresh;
                    }
                } else {
                    let state = blob(&mut c);
                    trace.push(|| format!("resume({})", to_json(&state)));
                    session.resume(&state);
                }
            }
            _ => {
                let b = c.byte();
                trace.push(|| format!("requests({b})"));
                match b % 4 {
                    0 => session.resume_halt(),
                    1 => drop(session.next_request()),
                    2 => drop(session.take_guidance()),
                    _ => drop(session.take_escalation(b & 4 != 0)),
                }
            }
        }
        let _ = session.take_warnings();
    }
});
