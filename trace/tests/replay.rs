//! The replay engine: the bundled billing run, every accepted transcript
//! shape, and the engine's identity rules.

use doom_loop::json::parse;
use doom_loop::ladder::Action;
use doom_loop_trace::replay::{parse_transcript, replay, Timeline};

fn run(json: &str) -> Timeline {
    replay(&parse_transcript(&parse(json).unwrap()).unwrap()).unwrap()
}

fn actions(timeline: &Timeline) -> Vec<Option<&'static str>> {
    timeline
        .rounds
        .iter()
        .flat_map(|r| r.calls.iter().map(|c| c.verdict.as_ref().map(|v| v.action.as_str())))
        .collect()
}

#[test]
fn billing_agent_is_blocked_at_three_and_stopped_at_six() {
    // The CLI's bundled example (`doomloop replay` without a file).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/examples/billing-agent.json");
    let timeline = run(&std::fs::read_to_string(path).unwrap());
    assert_eq!(
        actions(&timeline),
        vec![
            None,
            Some("observe"),
            Some("block"),
            Some("block"),
            Some("block"),
            Some("stop")
        ]
    );
    assert_eq!(timeline.total_rounds, 8);
    assert_eq!(timeline.stop_verdict.as_ref().unwrap().action, Action::Stop);
    assert!(timeline
        .render()
        .ends_with("stopped: doom_loop at round 6 of 8 (tool-fingerprint streak 6)\n"));
}

#[test]
fn chat_and_responses_lists_replay_like_rounds() {
    let call =
        r#"{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"ls","arguments":"{\"p\":1}"}}]}"#;
    let tool = r#"{"role":"tool","content":"err"}"#;
    let chat = format!("[{}]", vec![format!("{call},{tool}"); 3].join(","));
    assert_eq!(actions(&run(&chat)), vec![None, Some("observe"), Some("block")]);

    let item =
        r#"{"type":"function_call","name":"ls","arguments":"{\"p\":1}"},{"type":"function_call_output","output":"e"}"#;
    let responses = format!("{{\"input\":[{}]}}", [item; 3].join(","));
    assert_eq!(actions(&run(&responses)), vec![None, Some("observe"), Some("block")]);
}

#[test]
fn malformed_arguments_are_identified_by_their_raw_text() {
    let round = r#"{"calls":[{"toolName":"t","args":"{not json"}]}"#;
    let timeline = run(&format!("{{\"rounds\":[{round},{round},{round}]}}"));
    assert!(timeline.rounds.iter().all(|r| r.calls[0].malformed));
    assert_eq!(actions(&timeline)[2], Some("block"));
}

#[test]
fn loop_keys_exempt_and_normalise() {
    let rounds = r#"[{"calls":[{"toolName":"poll","args":{"job":1,"nonce":1}}]},{"calls":[{"toolName":"poll","args":{"job":1,"nonce":2}}]},{"calls":[{"toolName":"poll","args":{"job":1,"nonce":3}}]}]"#;
    let exempt = run(&format!("{{\"loopKeys\":{{\"poll\":false}},\"rounds\":{rounds}}}"));
    assert!(exempt
        .rounds
        .iter()
        .all(|r| r.calls[0].exempt && r.calls[0].verdict.is_none()));
    let by_job = run(&format!("{{\"loopKeys\":{{\"poll\":[\"job\"]}},\"rounds\":{rounds}}}"));
    assert_eq!(actions(&by_job), vec![None, Some("observe"), Some("block")]);
    assert_eq!(
        actions(&run(&format!("{{\"rounds\":{rounds}}}"))),
        vec![None, None, None]
    );
}

#[test]
fn a_fan_out_of_identical_calls_counts_once_per_round() {
    let round = r#"{"calls":[{"toolName":"r","args":{}},{"toolName":"r","args":{}},{"toolName":"r","args":{}}]}"#;
    let timeline = run(&format!("{{\"rounds\":[{round},{round}]}}"));
    let second = &timeline.rounds[1].calls;
    assert_eq!(second.iter().map(|c| c.streak).collect::<Vec<_>>(), vec![2.0, 2.0, 2.0]);
    assert_eq!(
        second.iter().map(|c| c.duplicate_in_round).collect::<Vec<_>>(),
        vec![false, true, true]
    );
}

#[test]
fn a_transcript_without_rounds_is_a_clear_error() {
    let error = parse_transcript(&parse(r#"{"nope":1}"#).unwrap()).unwrap_err();
    assert!(error.message().contains("unrecognised trace shape"), "{error}");
    assert!(error.message().contains("keys nope"), "{error}");
    assert!(error.message().contains("Anthropic Messages"), "{error}");
}

#[test]
fn rounds_carry_each_calls_result_inline_or_by_position() {
    let transcript = parse_transcript(
        &parse(
            r#"{"rounds":[
                {"calls":[{"toolName":"a","args":"{}","result":{"ok":1}},{"toolName":"b","args":{},"error":true}]},
                {"calls":[{"toolName":"a","args":"{}"},{"toolName":"b","args":"{}"}],"results":["x/y",null]},
                {"calls":[{"toolName":"a","args":"{}","result":null}]}
            ]}"#,
        )
        .unwrap(),
    )
    .unwrap();
    let calls: Vec<_> = transcript.rounds.iter().flat_map(|r| &r.calls).collect();
    assert_eq!(calls[0].result, Some(parse(r#"{"ok":1}"#).unwrap()));
    assert!(!calls[0].failed);
    assert_eq!(calls[1].result, None);
    assert!(calls[1].failed);
    assert_eq!(calls[2].result, Some(parse(r#""x/y""#).unwrap()));
    assert_eq!(calls[3].result, None, "null means not recorded");
    assert_eq!(calls[4].result, None);
}

#[test]
fn a_results_field_that_is_not_an_array_is_an_error_naming_the_round() {
    let error = parse_transcript(&parse(r#"{"rounds":[{"calls":[],"results":5}]}"#).unwrap()).unwrap_err();
    assert!(error.to_string().contains("rounds[0]"), "{error}");
}

/// Regression (issue 10): opt-in verdicts now carry a reference `detector`
/// kind; the timeline still names the opt-in detector that stopped the run.
#[test]
fn a_cycle_stop_is_rendered_under_the_opt_in_name() {
    let round = |id: &str| format!(r#"{{"calls":[{{"toolName":"get_invoice","args":{{"invoice_id":"{id}"}}}}]}}"#);
    let rounds: Vec<String> = (0..12)
        .map(|i| round(if i % 2 == 0 { "INV-2291" } else { "inv-2291 " }))
        .collect();
    let timeline = run(&format!(
        r#"{{"doomLoop":{{"cycles":true}},"rounds":[{}]}}"#,
        rounds.join(",")
    ));
    let stop = timeline.stop_verdict.as_ref().unwrap();
    assert_eq!(stop.opt_in_detector, Some("tool-cycle"));
    assert!(
        timeline.render().ends_with("(tool-cycle streak 6)\n"),
        "{}",
        timeline.render()
    );
    assert!(timeline
        .to_json()
        .contains(r#""detector":"tool-fingerprint","optInDetector":"tool-cycle""#));
}
