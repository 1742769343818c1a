//! `doomloop hook`'s decisions, event by event, through the pure
//! [`step`] (the processes, files and locks are tested in
//! tests/hooks/state.test.mjs, the real agents in tests/hooks/*.test.mjs).

use doom_loop::json::{parse, Value};
use doom_loop_trace::hook::install::{merge, pretty};
use doom_loop_trace::hook::{default_option, read_event, step, Agent};

struct Session {
    agent: Agent,
    state: Option<String>,
    option: Value,
}

impl Session {
    fn new(agent: Agent) -> Self {
        Session {
            agent,
            state: None,
            option: default_option(),
        }
    }

    fn with_option(agent: Agent, option: &str) -> Self {
        Session {
            agent,
            state: None,
            option: parse(option).unwrap(),
        }
    }

    /// Sends one event; returns the answer (empty: allow).
    fn send(&mut self, event: &str) -> String {
        let incoming = read_event(self.agent, event.as_bytes()).unwrap();
        let step = step(self.agent, &incoming, self.state.as_deref(), &self.option).unwrap();
        assert!(step.warnings.is_empty(), "{:?}", step.warnings);
        self.state = Some(step.state);
        step.stdout
    }
}

fn pre(id: &str, command: &str, description: &str) -> String {
    format!(
        r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"{command}","description":"{description}"}},"tool_use_id":"{id}"}}"#
    )
}

fn batch(ids: &[&str], output: &str) -> String {
    let calls: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(r#"{{"tool_name":"Bash","tool_input":{{}},"tool_use_id":"{id}","tool_response":"{output}"}}"#)
        })
        .collect();
    format!(
        r#"{{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{}]}}"#,
        calls.join(",")
    )
}

fn decision(answer: &str) -> Option<String> {
    let value = parse(answer.trim()).ok()?;
    let specific = value.as_object()?.get("hookSpecificOutput")?.as_object()?;
    Some(specific.get("permissionDecision")?.as_js_string()?.to_string())
}

/// Under the reference ladder (`--option true`); the default's stop rung
/// (RECOMMENDED's 12) is the next test's.
#[test]
fn claude_code_refuses_the_third_identical_call_and_halts_at_the_sixth() {
    let mut session = Session::with_option(Agent::ClaudeCode, "true");
    let mut answers = Vec::new();
    for i in 1..=6 {
        let id = format!("t{i}");
        answers.push(session.send(&pre(&id, "cat missing.txt", "show it")));
        if i < 6 {
            session.send(&batch(
                &[&id],
                "Exit code 1\\ncat: missing.txt: No such file or directory",
            ));
        }
    }
    assert_eq!(answers[0], "");
    assert_eq!(answers[1], "");
    for answer in &answers[2..5] {
        assert_eq!(decision(answer).as_deref(), Some("deny"), "{answer}");
    }
    let halt = parse(answers[5].trim()).unwrap();
    assert_eq!(halt.as_object().unwrap().get("continue"), Some(&Value::Bool(false)));
    // Halted: the next call is refused too, until the user's next prompt.
    assert!(session.send(&pre("t7", "ls", "list")).contains("\"continue\":false"));
    session.send(r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"try again"}"#);
    assert_eq!(session.send(&pre("t8", "ls", "list")), "");
}

#[test]
fn by_default_a_loop_on_unchanged_output_is_refused_at_the_third_call_and_halted_at_recommendeds_stop() {
    let option = default_option();
    let config = doom_loop::resolve_doom_loop_option(Some(&option))
        .result
        .unwrap()
        .unwrap();
    let stop = match config.ladder.stop {
        doom_loop::ladder::Threshold::At(n) => n as usize,
        doom_loop::ladder::Threshold::Off => panic!("RECOMMENDED has a stop rung"),
    };
    let mut session = Session::new(Agent::ClaudeCode);
    let mut answers = Vec::new();
    for i in 1..=stop {
        let id = format!("t{i}");
        answers.push(session.send(&pre(&id, "cat missing.txt", "show it")));
        session.send(&batch(
            &[&id],
            "Exit code 1\\ncat: missing.txt: No such file or directory",
        ));
    }
    assert_eq!(&answers[..2], ["", ""]);
    for answer in &answers[2..stop - 1] {
        assert_eq!(decision(answer).as_deref(), Some("deny"), "{answer}");
    }
    assert!(
        answers[stop - 1].contains("\"continue\":false"),
        "{}",
        answers[stop - 1]
    );
}

#[test]
fn a_reworded_description_is_the_same_shell_command() {
    let mut session = Session::new(Agent::ClaudeCode);
    let mut last = String::new();
    for i in 1..=3 {
        let id = format!("t{i}");
        last = session.send(&pre(&id, "npm test", &format!("run the tests, attempt {i}")));
        session.send(&batch(&[&id], "1 failing"));
    }
    assert_eq!(decision(&last).as_deref(), Some("deny"));
}

#[test]
fn parallel_identical_calls_of_one_message_count_once() {
    let mut session = Session::new(Agent::ClaudeCode);
    assert_eq!(session.send(&pre("a", "cat x", "d")), "");
    assert_eq!(session.send(&pre("b", "cat x", "d")), "");
    session.send(&batch(&["a", "b"], "no such file"));
    assert_eq!(session.send(&pre("c", "cat x", "d")), "");
    session.send(&batch(&["c"], "no such file"));
    assert_eq!(
        decision(&session.send(&pre("d", "cat x", "d"))).as_deref(),
        Some("deny")
    );
}

#[test]
fn a_changing_result_is_progress_under_the_default_option_and_a_loop_under_the_reference_defaults() {
    for (option, refused) in [(None, false), (Some("true"), true)] {
        let mut session = match option {
            None => Session::new(Agent::ClaudeCode),
            Some(o) => Session::with_option(Agent::ClaudeCode, o),
        };
        let mut any = false;
        for i in 1..=8 {
            let id = format!("t{i}");
            any |= decision(&session.send(&pre(&id, "sh next-page.sh", "page"))).is_some();
            session.send(&batch(&[&id], &format!("page {i}")));
        }
        assert_eq!(any, refused, "option {option:?}");
    }
}

#[test]
fn steer_guidance_goes_with_post_tool_batch_once() {
    let mut session = Session::with_option(
        Agent::ClaudeCode,
        r#"{"ladder":{"observe":false,"steer":2,"block":false,"stop":false}}"#,
    );
    session.send(&pre("t1", "ls", "d"));
    assert_eq!(session.send(&batch(&["t1"], "a")), "");
    session.send(&pre("t2", "ls", "d"));
    let answer = session.send(&batch(&["t2"], "a"));
    let value = parse(answer.trim()).unwrap();
    let specific = value
        .as_object()
        .unwrap()
        .get("hookSpecificOutput")
        .unwrap()
        .as_object()
        .unwrap();
    assert_eq!(
        specific.get("hookEventName").unwrap().as_js_string().unwrap(),
        "PostToolBatch"
    );
    assert!(specific
        .get("additionalContext")
        .unwrap()
        .as_js_string()
        .unwrap()
        .to_string()
        .contains("Doom loop suspected"));
}

#[test]
fn gemini_cli_rounds_end_at_before_model() {
    let mut session = Session::new(Agent::GeminiCli);
    let before = r#"{"session_id":"g","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"cat x"}}"#;
    let after = r#"{"session_id":"g","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"cat x"},"tool_response":{"llmContent":"Output: no such file\nExit Code: 1\nProcess Group PGID: 41","returnDisplay":"no such file"}}"#;
    let model = r#"{"session_id":"g","hook_event_name":"BeforeModel","llm_request":{"model":"m","messages":[]}}"#;
    let mut answers = Vec::new();
    // Round 1: two parallel identical calls; rounds 2 and 3: one each.
    session.send(model);
    for calls in [2, 1, 1] {
        for _ in 0..calls {
            answers.push(session.send(before));
        }
        for _ in 0..calls {
            session.send(&after.replace("41", &answers.len().to_string()));
        }
        session.send(model);
    }
    assert_eq!(&answers[..3], &["", "", ""]);
    assert!(
        answers[3].starts_with(r#"{"decision":"deny","reason":"Doom loop suspected"#),
        "{}",
        answers[3]
    );
}

fn codex(event: &str, id: &str, command: &str, output: Option<&str>) -> String {
    let response = output.map_or(String::new(), |o| format!(r#","tool_response":"{o}""#));
    format!(
        r#"{{"session_id":"c","turn_id":"t","hook_event_name":"{event}","model":"m","tool_name":"Bash","tool_input":{{"command":"{command}"}},"tool_use_id":"{id}"{response}}}"#
    )
}

const CODEX_MODEL: &str = r#"{"session_id":"c","turn_id":"t","hook_event_name":"PreModelRequest","model":"m"}"#;

/// Codex 0.169: a round ends at `PreModelRequest`; a refusal is a
/// `PreToolUse` deny; a halt never answers `continue: false` at
/// `PreToolUse` (Codex rejects it there and would run the call), only at
/// `PostToolUse`; `PreModelRequest` gets no answer.
#[test]
fn codex_rounds_end_at_pre_model_request_and_a_halt_is_a_deny_at_pre_tool_use() {
    let mut session = Session::with_option(Agent::Codex, "true");
    let mut answers = Vec::new();
    assert_eq!(session.send(CODEX_MODEL), "");
    // Round 1: two parallel identical calls (both start before either returns); then one a round.
    for (n, calls) in [2, 1, 1, 1, 1, 1, 1].into_iter().enumerate() {
        let ids: Vec<String> = (0..calls).map(|i| format!("call_{n}_{i}")).collect();
        for id in &ids {
            answers.push(session.send(&codex("PreToolUse", id, "cat x", None)));
        }
        for id in &ids {
            if decision(answers.last().unwrap()).is_none() {
                assert_eq!(
                    session.send(&codex(
                        "PostToolUse",
                        id,
                        "cat x",
                        Some("cat: x: No such file or directory\\n")
                    )),
                    ""
                );
            }
        }
        assert_eq!(session.send(CODEX_MODEL), "", "PreModelRequest is never answered");
    }
    assert_eq!(&answers[..3], &["", "", ""]);
    for answer in &answers[3..] {
        assert_eq!(decision(answer).as_deref(), Some("deny"), "{answer}");
        assert!(!answer.contains("continue"), "{answer}");
    }
    // Rounds 3..5 are refused (block), round 6 reaches the stop: a deny with the verdict, shown to the user too.
    assert!(!answers[5].contains("systemMessage"), "{}", answers[5]);
    assert!(
        answers[6].contains(r#""systemMessage":"Doom loop suspected"#),
        "{}",
        answers[6]
    );
    assert!(answers[7].contains("invoked in 6 consecutive rounds"), "{}", answers[7]);
    // A user prompt lifts the halt.
    assert_eq!(
        session.send(r#"{"session_id":"c","turn_id":"u","hook_event_name":"UserPromptSubmit","prompt":"go on"}"#),
        ""
    );
    assert_eq!(session.send(CODEX_MODEL), "");
    assert_eq!(decision(&session.send(&codex("PreToolUse", "later", "ls", None))), None);
}

#[test]
fn codex_halt_after_a_result_replaces_it_with_the_stop_verdict() {
    // Stop at the second call, refuse nothing before: the second call's
    // PreToolUse halts; a parallel call that already ran gets the verdict
    // in place of its result at PostToolUse.
    let mut session = Session::with_option(
        Agent::Codex,
        r#"{"ladder":{"observe":false,"steer":false,"block":false,"stop":2}}"#,
    );
    session.send(CODEX_MODEL);
    assert_eq!(session.send(&codex("PreToolUse", "a", "cat x", None)), "");
    session.send(&codex("PostToolUse", "a", "cat x", Some("no such file")));
    session.send(CODEX_MODEL);
    assert_eq!(session.send(&codex("PreToolUse", "b", "ls", None)), "");
    let halted = session.send(&codex("PreToolUse", "c", "cat x", None));
    assert_eq!(decision(&halted).as_deref(), Some("deny"), "{halted}");
    let after = session.send(&codex("PostToolUse", "b", "ls", Some("x")));
    assert!(
        after.starts_with(r#"{"continue":false,"stopReason":"Doom loop suspected"#),
        "{after}"
    );
}

#[test]
fn install_merges_without_losing_the_users_hooks() {
    let existing = r#"{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"audit"}]}]}}"#;
    let once = merge(Agent::ClaudeCode, Some(existing), "doomloop hook claude-code").unwrap();
    let twice = merge(
        Agent::ClaudeCode,
        Some(&pretty(&once)),
        "/opt/doomloop hook claude-code",
    )
    .unwrap();
    let hooks = twice.as_object().unwrap().get("hooks").unwrap().as_object().unwrap();
    let Some(Value::Array(pre)) = hooks.get("PreToolUse") else {
        panic!()
    };
    assert_eq!(pre.len(), 2);
    assert!(doom_loop::json::to_json(&pre[0]).contains("audit"));
    assert!(doom_loop::json::to_json(&pre[1]).contains("/opt/doomloop hook claude-code"));
    assert!(merge(Agent::ClaudeCode, Some("[1]"), "x").is_err());
    assert!(merge(Agent::ClaudeCode, Some(r#"{"hooks":[]}"#), "x").is_err());
}

#[test]
fn a_config_warning_is_printed_once_per_session() {
    let option = parse(r#"{"ladder":{"observe":2,"steer":2}}"#).unwrap();
    let mut state: Option<String> = None;
    let mut counts = Vec::new();
    for i in 1..=3 {
        let incoming = read_event(Agent::ClaudeCode, pre(&format!("t{i}"), "ls", "d").as_bytes()).unwrap();
        let step = step(Agent::ClaudeCode, &incoming, state.as_deref(), &option).unwrap();
        counts.push(step.warnings.len());
        state = Some(step.state);
    }
    assert_eq!(counts, [1, 0, 0]);
}

/// Regression: `node …/pkg/cli.mjs hook install` writes a command without
/// the word `doomloop`; installing it twice added a second hook per event.
#[test]
fn reinstalling_a_command_without_the_word_doomloop_replaces_it() {
    let command = "node /work/pkg/cli.mjs hook claude-code";
    let once = merge(Agent::ClaudeCode, None, command).unwrap();
    let twice = merge(Agent::ClaudeCode, Some(&pretty(&once)), command).unwrap();
    assert_eq!(pretty(&once), pretty(&twice));
    let hooks = twice.as_object().unwrap().get("hooks").unwrap().as_object().unwrap();
    let Some(Value::Array(pre)) = hooks.get("PreToolUse") else {
        panic!()
    };
    assert_eq!(pre.len(), 1);
}
