//! The gateway's decision on whole requests of each API: the reference's
//! ladder (observe at 2, block at 3, stop at 6 under `true`) applied to the
//! conversation a request carries, a new user message lifting the halt,
//! parallel identical calls counted once, and every request it cannot read
//! forwarded unchanged.

use doom_loop::json::{parse, Value};
use doom_loop_gateway::{decide, route, Action, Api, Decision, GatewayOptions};

const TEXT: &str = "invoice INV-2291 could not be found";

fn reference() -> GatewayOptions {
    GatewayOptions {
        option: Value::Bool(true),
        ..GatewayOptions::default()
    }
}

/// A chat request after `rounds` identical failing calls (each answered).
fn chat(rounds: usize, trailing_user: bool) -> String {
    let mut messages = vec![
        r#"{"role":"system","content":"You are a billing agent."}"#.to_string(),
        r#"{"role":"user","content":"Refund INV-2291"}"#.to_string(),
    ];
    for i in 0..rounds {
        messages.push(format!(
            r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{i}","type":"function","function":{{"name":"get_invoice","arguments":"{{\"invoice_id\":\"INV-2291\"}}"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"tool","tool_call_id":"call_{i}","content":"{TEXT}"}}"#
        ));
    }
    if trailing_user {
        messages.push(r#"{"role":"user","content":"try again"}"#.to_string());
    }
    format!(r#"{{"model":"gpt-test","seed":7,"messages":[{}]}}"#, messages.join(","))
}

fn anthropic(rounds: usize, stream: bool) -> String {
    let mut messages = vec![r#"{"role":"user","content":"Refund INV-2291"}"#.to_string()];
    for i in 0..rounds {
        messages.push(format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"Checking."}},{{"type":"tool_use","id":"toolu_{i}","name":"get_invoice","input":{{"invoice_id":"INV-2291"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"{TEXT}","is_error":true}},{{"type":"text","text":"<system-reminder>x</system-reminder>"}}]}}"#
        ));
    }
    format!(
        r#"{{"model":"claude-test","max_tokens":1024,"stream":{stream},"system":"Be brief.","messages":[{}]}}"#,
        messages.join(",")
    )
}

fn responses(rounds: usize, stream: bool) -> String {
    let mut items = vec![
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Refund INV-2291"}]}"#.to_string(),
    ];
    for i in 0..rounds {
        items.push(format!(
            r#"{{"type":"function_call","call_id":"fc_{i}","name":"get_invoice","arguments":"{{\"invoice_id\":\"INV-2291\"}}"}}"#
        ));
        items.push(format!(
            r#"{{"type":"function_call_output","call_id":"fc_{i}","output":"{TEXT}"}}"#
        ));
    }
    format!(
        r#"{{"model":"gpt-test","stream":{stream},"instructions":"Be brief.","input":[{}]}}"#,
        items.join(",")
    )
}

fn header<'a>(decision: &'a Decision, name: &str) -> Option<&'a str> {
    decision
        .headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn body(decision: &Decision) -> Value {
    match &decision.action {
        Action::Rewrite(text) => parse(text).expect("a rewritten body is JSON"),
        other => panic!("expected a rewrite, got {other:?}"),
    }
}

/// The rung each request of a growing loop gets, for `make(rounds)`.
fn ladder(api: Api, make: impl Fn(usize) -> String) -> Vec<String> {
    (1..=7)
        .map(|rounds| {
            let decision = decide(api, make(rounds).as_bytes(), &reference());
            match &decision.action {
                Action::Forward => header(&decision, "x-doomloop-verdict").unwrap_or("forward").to_string(),
                Action::Rewrite(_) => format!("rewrite({})", header(&decision, "x-doomloop-refused").unwrap_or("0")),
                Action::Answer(_) => "answer".to_string(),
            }
        })
        .collect()
}

#[test]
fn a_repeated_failing_call_is_observed_then_refused_then_answered_with_the_stop_in_every_api() {
    let expected = [
        "forward",
        "observe",
        "rewrite(1)",
        "rewrite(2)",
        "rewrite(3)",
        "answer",
        "answer",
    ];
    assert_eq!(ladder(Api::ChatCompletions, |n| chat(n, false)), expected);
    assert_eq!(ladder(Api::AnthropicMessages, |n| anthropic(n, false)), expected);
    assert_eq!(ladder(Api::Responses, |n| responses(n, false)), expected);
}

#[test]
fn a_refused_calls_result_is_replaced_by_the_verdict_text_and_nothing_else_changes() {
    let decision = decide(Api::ChatCompletions, chat(3, false).as_bytes(), &reference());
    let rewritten = body(&decision);
    let original = parse(&chat(3, false)).unwrap();
    let messages = |v: &Value| match v.as_object().and_then(|o| o.get("messages")) {
        Some(Value::Array(m)) => m.clone(),
        _ => panic!("no messages"),
    };
    let (new, old) = (messages(&rewritten), messages(&original));
    assert_eq!(new.len(), old.len());
    let changed: Vec<usize> = (0..new.len()).filter(|&i| new[i] != old[i]).collect();
    assert_eq!(changed, vec![7], "only the third call's result");
    let content = new[7]
        .as_object()
        .and_then(|o| o.get("content"))
        .and_then(Value::as_js_string)
        .unwrap()
        .to_string();
    assert!(
        content.contains("Repeating the call will not change the result"),
        "{content}"
    );
    assert_eq!(
        rewritten.as_object().unwrap().get("seed"),
        original.as_object().unwrap().get("seed")
    );

    let decision = decide(Api::AnthropicMessages, anthropic(3, false).as_bytes(), &reference());
    let text = match &decision.action {
        Action::Rewrite(text) => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text.matches(TEXT).count(), 2, "two results kept, the third replaced");
}

#[test]
fn the_stop_answer_is_a_final_message_in_the_clients_format_json_or_events() {
    for (api, body) in [
        (Api::ChatCompletions, chat(6, false)),
        (Api::AnthropicMessages, anthropic(6, false)),
        (Api::Responses, responses(6, false)),
    ] {
        let decision = decide(api, body.as_bytes(), &reference());
        let Action::Answer(answer) = &decision.action else {
            panic!("{api:?}: {decision:?}")
        };
        assert_eq!(answer.content_type, "application/json");
        let value = parse(&answer.body).expect("the answer is JSON");
        assert!(
            answer.body.contains("This run was stopped by doom-loop detection."),
            "{}",
            answer.body
        );
        assert!(
            !answer.body.contains("tool_calls\":[{") && !answer.body.contains("tool_use"),
            "no calls"
        );
        assert!(value.as_object().is_some());
        assert_eq!(header(&decision, "x-doomloop-verdict"), Some("stop"));
        // The same request, the same answer.
        assert_eq!(decide(api, body.as_bytes(), &reference()), decision);
    }
    for (api, body) in [
        (Api::AnthropicMessages, anthropic(6, true)),
        (Api::Responses, responses(6, true)),
    ] {
        let Action::Answer(answer) = decide(api, body.as_bytes(), &reference()).action else {
            panic!()
        };
        assert_eq!(answer.content_type, "text/event-stream");
        for data in answer.body.lines().filter_map(|l| l.strip_prefix("data: ")) {
            assert!(parse(data).is_ok(), "{data}");
        }
    }
    let streamed = chat(6, false).replacen(r#""seed":7"#, r#""seed":7,"stream":true"#, 1);
    let Action::Answer(answer) = decide(Api::ChatCompletions, streamed.as_bytes(), &reference()).action else {
        panic!()
    };
    assert!(answer.body.ends_with("data: [DONE]\n\n"));
}

#[test]
fn a_new_user_message_lifts_the_halt() {
    let decision = decide(Api::ChatCompletions, chat(6, true).as_bytes(), &reference());
    assert!(!matches!(decision.action, Action::Answer(_)), "{decision:?}");
}

#[test]
fn parallel_identical_calls_of_one_response_count_once() {
    let mut messages = vec![r#"{"role":"user","content":"go"}"#.to_string()];
    for round in 0..2 {
        let calls: Vec<String> = (0..3)
            .map(|j| {
                format!(r#"{{"id":"c{round}{j}","type":"function","function":{{"name":"ls","arguments":"{{}}"}}}}"#)
            })
            .collect();
        messages.push(format!(r#"{{"role":"assistant","tool_calls":[{}]}}"#, calls.join(",")));
        for j in 0..3 {
            messages.push(format!(
                r#"{{"role":"tool","tool_call_id":"c{round}{j}","content":"a b"}}"#
            ));
        }
    }
    let body = format!(r#"{{"messages":[{}]}}"#, messages.join(","));
    let decision = decide(Api::ChatCompletions, body.as_bytes(), &reference());
    // Two rounds of the same call: observed, not refused.
    assert_eq!(decision.action, Action::Forward);
    assert_eq!(header(&decision, "x-doomloop-verdict"), Some("observe"));
}

#[test]
fn a_request_the_gateway_cannot_read_is_forwarded_unchanged_with_one_log_line() {
    for body in [
        &b"\xff\xfe"[..],
        b"not json",
        b"[]",
        b"{}",
        br#"{"messages":3}"#,
        br#"{"input":[],"previous_response_id":"resp_1"}"#,
    ] {
        for api in [Api::ChatCompletions, Api::AnthropicMessages, Api::Responses] {
            let decision = decide(api, body, &reference());
            assert_eq!(decision.action, Action::Forward, "{api:?} {body:?}");
            if body != b"{}" || api != Api::Responses {
                assert_eq!(decision.log.len(), 1, "{api:?} {body:?}: {:?}", decision.log);
            }
        }
    }
    let off = GatewayOptions {
        option: Value::Bool(false),
        ..GatewayOptions::default()
    };
    assert_eq!(
        decide(Api::ChatCompletions, chat(6, false).as_bytes(), &off).action,
        Action::Forward
    );
}

#[test]
fn routes_are_the_paths_the_sdks_post_to() {
    assert_eq!(route("POST", "/v1/chat/completions"), Some(Api::ChatCompletions));
    assert_eq!(
        route("post", "/api/v1/chat/completions?x=1"),
        Some(Api::ChatCompletions)
    );
    assert_eq!(route("POST", "/v1/responses"), Some(Api::Responses));
    assert_eq!(route("POST", "/v1/messages"), Some(Api::AnthropicMessages));
    assert_eq!(route("POST", "/v1/messages/count_tokens"), None);
    assert_eq!(route("GET", "/v1/models"), None);
    assert_eq!(route("GET", "/v1/chat/completions"), None);
}

#[test]
fn the_default_option_is_the_recommended_one_and_lets_an_edit_and_retest_session_run() {
    // Different outputs each time (progress): never refused under the default.
    let mut messages = vec![r#"{"role":"user","content":"fix it"}"#.to_string()];
    for i in 0..8 {
        messages.push(format!(
            r#"{{"role":"assistant","tool_calls":[{{"id":"p{i}","type":"function","function":{{"name":"read_page","arguments":"{{\"page\":1}}"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"tool","tool_call_id":"p{i}","content":"rows {i}"}}"#
        ));
    }
    let body = format!(r#"{{"messages":[{}]}}"#, messages.join(","));
    let decision = decide(Api::ChatCompletions, body.as_bytes(), &GatewayOptions::default());
    assert!(!matches!(decision.action, Action::Answer(_)), "{decision:?}");
    assert!(header(&decision, "x-doomloop-refused").is_none(), "{decision:?}");
}
