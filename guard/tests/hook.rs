//! `doomloop hook`'s decisions, event by event, through the pure
//! [`step`] (the processes, files and locks are tested in
//! tests/hooks/state.test.mjs, the real agents in tests/hooks/*.test.mjs).

use doom_loop::json::{parse, Value};
use doom_loop_guard::install::edit;
use doom_loop_guard::{default_option, read_event, step, Agent};

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
    // As installed: UserPromptSubmit beside PostToolBatch (the first round
    // ends before the first PostToolBatch arrives).
    session.send(r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"go"}"#);
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

fn event<'a>(settings: &'a Value, name: &str) -> &'a Vec<Value> {
    let hooks = settings.as_object().unwrap().get("hooks").unwrap().as_object().unwrap();
    let Some(Value::Array(entries)) = hooks.get(name) else {
        panic!("{name}")
    };
    entries
}

#[test]
fn install_merges_without_losing_the_users_hooks() {
    let existing = r#"{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"audit"}]}]}}"#;
    let once = edit(Agent::ClaudeCode, Some(existing), "doomloop hook claude-code").unwrap();
    let twice = edit(Agent::ClaudeCode, Some(&once), "/opt/doomloop hook claude-code").unwrap();
    let twice = parse(&twice).unwrap();
    let pre = event(&twice, "PreToolUse");
    assert_eq!(pre.len(), 2);
    assert!(doom_loop::json::to_json(&pre[0]).contains("audit"));
    assert!(doom_loop::json::to_json(&pre[1]).contains("/opt/doomloop hook claude-code"));
    assert!(edit(Agent::ClaudeCode, Some("[1]"), "x").is_err());
    assert!(edit(Agent::ClaudeCode, Some(r#"{"hooks":[]}"#), "x").is_err());
    assert!(edit(Agent::ClaudeCode, Some(r#"{"hooks":{"PreToolUse":{}}}"#), "x").is_err());
}

#[test]
fn install_edits_only_its_own_entries_and_keeps_every_other_byte() {
    let existing = "{\n    // the user's comment\n    \"feedbackSurveyId\": 12345678901234567890,\n    \"maxSize\": 1e400,\n    \"dup\": 1, \"dup\": 2,\n    \"hooks\": {\n        \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"say done\" } ] } ],\n    },\n    \"z\": [1,2,3]\n}\n";
    let out = edit(Agent::ClaudeCode, Some(existing), "doomloop hook claude-code").unwrap();
    for kept in [
        "{\n    // the user's comment\n    \"feedbackSurveyId\": 12345678901234567890,\n    \"maxSize\": 1e400,\n    \"dup\": 1, \"dup\": 2,\n    \"hooks\": {\n        \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"say done\" } ] } ],",
        "\n    \"z\": [1,2,3]\n}\n",
    ] {
        assert!(out.contains(kept), "lost {kept:?} in\n{out}");
    }
    assert!(out.ends_with("\"z\": [1,2,3]\n}\n"), "{out}");
    // Idempotent, byte for byte; and a byte-order mark stays.
    assert_eq!(
        edit(Agent::ClaudeCode, Some(&out), "doomloop hook claude-code").unwrap(),
        out
    );
    let bom = edit(Agent::GeminiCli, Some("\u{feff}{\"a\": 1}"), "doomloop hook gemini-cli").unwrap();
    // (A one-line object that gains a member is laid out over lines.)
    assert!(bom.starts_with("\u{feff}{") && bom.contains("\"a\": 1,"), "{bom}");
    // Not JSONC, or `hooks` twice: refused.
    for bad in [
        "{'a': 1}",
        "{a: 1}",
        "{\"a\": 0x10}",
        "{ not json",
        r#"{"hooks":{},"hooks":{}}"#,
    ] {
        assert!(edit(Agent::Codex, Some(bad), "x").is_err(), "{bad}");
    }
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
    let once = edit(Agent::ClaudeCode, None, command).unwrap();
    let twice = edit(Agent::ClaudeCode, Some(&once), command).unwrap();
    assert_eq!(once, twice);
    assert_eq!(event(&parse(&twice).unwrap(), "PreToolUse").len(), 1);
}

/// A Copilot CLI event in its PascalCase ("VS Code compatible") format, as
/// 1.0.102 sends it to a hook the installer registered: the calls of the
/// `response`-th model response bear its time.
fn copilot_pre(response: usize, tool: &str, input: &str) -> String {
    format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"cp","timestamp":"2026-12-06T14:19:{:02}.934Z","cwd":"/w","tool_name":"{tool}","tool_input":{input}}}"#,
        response % 60
    )
}

fn copilot_post(tool: &str, input: &str, output: &str) -> String {
    format!(
        r#"{{"hook_event_name":"PostToolUse","session_id":"cp","timestamp":"2026-12-06T14:19:58.998Z","cwd":"/w","tool_name":"{tool}","tool_input":{input},"tool_result":{{"result_type":"success","text_result_for_llm":"{output}"}}}}"#
    )
}

/// `permissionRequest` comes in camelCase whatever the configured name.
fn copilot_permission(tool: &str) -> String {
    format!(
        r#"{{"hookName":"permissionRequest","sessionId":"cp","timestamp":1796566798963,"cwd":"/w","toolName":"{tool}","toolInput":{{"command":"sh fail.sh"}},"permissionSuggestions":[]}}"#
    )
}

const COPILOT_PROMPT: &str = r#"{"hook_event_name":"UserPromptSubmit","session_id":"cp","timestamp":"2026-12-06T14:19:58.851Z","cwd":"/w","prompt":"go on"}"#;

fn copilot_denial(answer: &str) -> Option<String> {
    let value = parse(answer.trim()).ok()?;
    let object = value.as_object()?;
    (object.get("permissionDecision")?.as_js_string()? == "deny").then(|| {
        object
            .get("permissionDecisionReason")?
            .as_js_string()
            .map(|r| r.to_string())
    })?
}

/// One shell call the way Copilot runs it: `PreToolUse`, then (if allowed)
/// `permissionRequest`, then (if that allowed too) `PostToolUse` with the
/// shell's output, whose last line names a new shell every time.
fn copilot_shell_call(session: &mut Session, n: usize) -> (String, Option<String>) {
    let input = format!(r#"{{"command":"sh fail.sh","description":"run it, attempt {n}"}}"#);
    let pre = session.send(&copilot_pre(n, "Bash", &input));
    if !pre.is_empty() {
        return (pre, None);
    }
    let permission = session.send(&copilot_permission("bash"));
    if permission.is_empty() {
        let output = format!("cat: missing.txt: No such file or directory\\n<shellId: {n} completed with exit code 1>");
        assert_eq!(session.send(&copilot_post("Bash", &input, &output)), "");
    }
    (pre, Some(permission))
}

/// Copilot has no event that ends a session from `PreToolUse`; its
/// `permissionRequest` answer `interrupt: true` does. Under the reference
/// ladder the third identical failing call is denied and the sixth reaches
/// its permission request, which ends the session.
#[test]
fn copilot_refuses_the_third_identical_call_and_ends_the_session_at_the_sixths_permission_request() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    let answers: Vec<_> = (1..=6).map(|n| copilot_shell_call(&mut session, n)).collect();
    for (pre, permission) in &answers[..2] {
        assert_eq!((pre.as_str(), permission.as_deref()), ("", Some("")));
    }
    for (n, (pre, permission)) in answers[2..5].iter().enumerate() {
        let reason = copilot_denial(pre).unwrap_or_else(|| panic!("{pre}"));
        assert!(
            reason.contains(&format!("invoked in {} consecutive rounds", n + 3)),
            "{reason}"
        );
        assert_eq!(*permission, None, "a denied call asks no permission");
    }
    let (pre, permission) = &answers[5];
    assert_eq!(pre, "", "the stop goes to the permission request");
    let stop = parse(permission.as_deref().unwrap().trim()).unwrap();
    let stop = stop.as_object().unwrap();
    assert_eq!(stop.get("behavior").unwrap().as_js_string().unwrap(), "deny");
    assert_eq!(stop.get("interrupt"), Some(&Value::Bool(true)));
    assert!(stop
        .get("message")
        .unwrap()
        .as_js_string()
        .unwrap()
        .to_string()
        .contains("invoked in 6 consecutive rounds"));
    // A new prompt lifts the stop.
    assert_eq!(session.send(COPILOT_PROMPT), "");
    assert_eq!(
        session.send(&copilot_pre(7, "Bash", r#"{"command":"ls","description":"d"}"#)),
        ""
    );
    assert_eq!(session.send(&copilot_permission("bash")), "");
}

/// A tool Copilot asks no permission for (its file viewer) cannot end the
/// session: a stop denies the call before it runs.
#[test]
fn copilot_a_stopped_call_of_a_tool_without_permission_request_is_denied() {
    let mut session = Session::with_option(
        Agent::Copilot,
        r#"{"ladder":{"observe":false,"steer":false,"block":false,"stop":2}}"#,
    );
    let input = r#"{"path":"/w/notes.txt"}"#;
    assert_eq!(session.send(&copilot_pre(1, "Read", input)), "");
    session.send(&copilot_post("Read", input, "the notes"));
    let answer = session.send(&copilot_pre(2, "Read", input));
    let reason = copilot_denial(&answer).unwrap_or_else(|| panic!("{answer}"));
    assert!(reason.contains("invoked in 2 consecutive rounds"), "{reason}");
    // Every later call is denied with the stop verdict too.
    assert!(copilot_denial(&session.send(&copilot_pre(3, "Read", r#"{"path":"/w/other"}"#))).is_some());
}

/// The `<shellId: N …>` line Copilot's shell appends differs at every call;
/// the outcome-aware default option must still see the same failure.
#[test]
fn copilot_shell_ids_do_not_make_a_repeated_failure_look_new() {
    let mut session = Session::new(Agent::Copilot);
    let answers: Vec<_> = (1..=3).map(|n| copilot_shell_call(&mut session, n).0).collect();
    assert_eq!(&answers[..2], ["", ""]);
    assert!(copilot_denial(&answers[2]).is_some(), "{}", answers[2]);
}

/// Copilot names no round: the calls stamped with one time are one
/// response's, and count once.
#[test]
fn copilot_calls_of_one_response_count_as_one_round() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    let input = r#"{"command":"cat x","description":"d"}"#;
    let post = |session: &mut Session| session.send(&copilot_post("Bash", input, "no such file"));
    // Round 1: two calls start, then both return.
    assert_eq!(session.send(&copilot_pre(1, "Bash", input)), "");
    assert_eq!(session.send(&copilot_pre(1, "Bash", input)), "");
    post(&mut session);
    post(&mut session);
    // Round 2.
    assert_eq!(session.send(&copilot_pre(2, "Bash", input)), "");
    post(&mut session);
    // Round 3: refused (three rounds, not four calls).
    let third = session.send(&copilot_pre(3, "Bash", input));
    let reason = copilot_denial(&third).unwrap_or_else(|| panic!("{third}"));
    assert!(reason.contains("invoked in 3 consecutive rounds"), "{reason}");
}

/// A payload without a `timestamp`: calls that start while another of the
/// round is still running are of one response (Copilot starts a response's
/// calls before any of them returns).
#[test]
fn copilot_without_timestamps_calls_running_together_count_as_one_round() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    let input = r#"{"command":"cat x","description":"d"}"#;
    let pre = copilot_pre(0, "Bash", input).replace(r#""timestamp":"2026-12-06T14:19:00.934Z","#, "");
    assert!(!pre.contains("timestamp"));
    let post = |session: &mut Session| session.send(&copilot_post("Bash", input, "no such file"));
    assert_eq!(session.send(&pre), "");
    assert_eq!(session.send(&pre), "");
    post(&mut session);
    post(&mut session);
    assert_eq!(session.send(&pre), "");
    post(&mut session);
    let third = session.send(&pre);
    let reason = copilot_denial(&third).unwrap_or_else(|| panic!("{third}"));
    assert!(reason.contains("invoked in 3 consecutive rounds"), "{reason}");
}

/// Copilot stamps every `PreToolUse` of one response with the same time;
/// a call refused at once is still of its response's round, so two
/// identical calls of the third response are both refused as the third.
#[test]
fn copilot_calls_of_one_response_count_once_also_when_the_first_is_refused() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    let input = r#"{"command":"cat x","description":"d"}"#;
    for response in 1..=2 {
        assert_eq!(session.send(&copilot_pre(response, "Bash", input)), "");
        session.send(&copilot_post("Bash", input, "no such file"));
    }
    for _ in 0..2 {
        let answer = session.send(&copilot_pre(3, "Bash", input));
        let reason = copilot_denial(&answer).unwrap_or_else(|| panic!("{answer}"));
        assert!(reason.contains("invoked in 3 consecutive rounds"), "{reason}");
    }
}

/// A call whose result never reaches the hook (a hook file without
/// `PostToolUseFailure`, a tool that failed) does not keep later responses
/// in its round: each response's calls bear their own time.
#[test]
fn copilot_a_call_without_a_result_does_not_swallow_the_next_responses() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    assert_eq!(session.send(&copilot_pre(1, "Read", r#"{"path":"/w/missing"}"#)), "");
    let input = r#"{"command":"cat x","description":"d"}"#;
    let answers: Vec<String> = (2..=4)
        .map(|response| {
            let answer = session.send(&copilot_pre(response, "Bash", input));
            session.send(&copilot_post("Bash", input, "no such file"));
            answer
        })
        .collect();
    assert_eq!(&answers[..2], ["", ""]);
    assert!(copilot_denial(&answers[2]).is_some(), "{}", answers[2]);
}

/// A hook set up by hand from Copilot's docs, with camelCase event names,
/// gets payloads without an event name (and `toolArgs`, `toolResult`):
/// they are told apart by their fields and decided the same way.
#[test]
fn copilot_camel_case_payloads_are_read_like_the_pascal_case_ones() {
    let mut session = Session::with_option(Agent::Copilot, "true");
    let pre = r#"{"sessionId":"cc","timestamp":1796566798934,"cwd":"/w","toolName":"bash","toolArgs":{"command":"cat x","description":"d"}}"#;
    // Some versions send the arguments as a JSON string.
    let pre_string = r#"{"sessionId":"cc","timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"cat x\",\"description\":\"e\"}"}"#;
    let post = r#"{"sessionId":"cc","timestamp":1796566798998,"cwd":"/w","toolName":"bash","toolArgs":{"command":"cat x","description":"d"},"toolResult":{"resultType":"success","textResultForLlm":"no such file\n<shellId: 4 completed with exit code 1>"}}"#;
    let failure = r#"{"sessionId":"cc","timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"cat x\",\"description\":\"e\"}","error":"boom"}"#;
    let names: Vec<String> = [
        pre,
        post,
        failure,
        r#"{"sessionId":"cc","timestamp":1,"cwd":"/w","prompt":"hi"}"#,
    ]
    .iter()
    .map(|e| read_event(Agent::Copilot, e.as_bytes()).unwrap().name)
    .collect();
    assert_eq!(
        names,
        ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"]
    );
    assert_eq!(session.send(pre), "");
    session.send(post);
    assert_eq!(session.send(pre_string), "");
    session.send(failure);
    assert!(copilot_denial(&session.send(&pre.replace("1796566798934", "1796566799031"))).is_some());
}

#[test]
fn copilot_steer_guidance_is_appended_to_the_tool_result() {
    let mut session = Session::with_option(
        Agent::Copilot,
        r#"{"ladder":{"observe":false,"steer":2,"block":false,"stop":false}}"#,
    );
    let input = r#"{"command":"ls","description":"d"}"#;
    session.send(&copilot_pre(1, "Bash", input));
    assert_eq!(session.send(&copilot_post("Bash", input, "a")), "");
    session.send(&copilot_pre(2, "Bash", input));
    let answer = session.send(&copilot_post("Bash", input, "a"));
    let value = parse(answer.trim()).unwrap();
    let context = value.as_object().unwrap().get("additionalContext").unwrap();
    assert!(context
        .as_js_string()
        .unwrap()
        .to_string()
        .contains("Doom loop suspected"));
}

#[test]
fn copilot_install_writes_its_own_hooks_file_and_keeps_other_entries() {
    let existing = r#"{"version":1,"note":"mine","hooks":{"PreToolUse":[{"type":"command","bash":"audit.sh","timeoutSec":5}],"Stop":[{"type":"command","bash":"notify.sh"}]}}"#;
    let once = edit(Agent::Copilot, Some(existing), "doomloop hook copilot").unwrap();
    let twice = parse(&edit(Agent::Copilot, Some(&once), "/opt/bin/doomloop hook copilot").unwrap()).unwrap();
    let file = twice.as_object().unwrap();
    assert_eq!(file.get("version"), Some(&Value::Number(1.0)));
    assert_eq!(file.get("note").unwrap().as_js_string().unwrap(), "mine");
    let hooks = file.get("hooks").unwrap().as_object().unwrap();
    for event in [
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "UserPromptSubmit",
    ] {
        let Some(Value::Array(entries)) = hooks.get(event) else {
            panic!("{event}")
        };
        let ours: Vec<_> = entries
            .iter()
            .filter(|e| doom_loop::json::to_json(e).contains("hook copilot"))
            .collect();
        assert_eq!(ours.len(), 1, "{event}");
        assert_eq!(
            doom_loop::json::to_json(ours[0]),
            r#"{"type":"command","bash":"/opt/bin/doomloop hook copilot"}"#
        );
    }
    let Some(Value::Array(pre)) = hooks.get("PreToolUse") else {
        panic!()
    };
    assert!(doom_loop::json::to_json(&pre[0]).contains("audit.sh"));
    assert!(hooks.get("Stop").is_some());
    assert!(edit(Agent::Copilot, Some(r#"{"hooks":{"PreToolUse":{}}}"#), "x").is_err());
    // A new file says its format first.
    let new = edit(Agent::Copilot, Some(r#"{"hooks":{}}"#), "x").unwrap();
    assert!(new.starts_with("{\n  \"version\": 1,"), "{new}");
}

/// The state is bounded in total, not only per tool: a session calling
/// many tools (MCP servers) keeps the opt-in evidence of the
/// `MAX_TOOLS` most recently active ones; the reference's own part keeps
/// one small entry per tool, as the reference does.
#[test]
fn a_session_over_many_tools_keeps_the_evidence_of_its_latest_tools_only() {
    let mut session = Session::new(Agent::ClaudeCode);
    for round in 0..12 {
        let ids: Vec<String> = (0..10).map(|k| format!("r{round}k{k}")).collect();
        let mut results = Vec::new();
        for (k, id) in ids.iter().enumerate() {
            // A new tool at every call: 120 in all.
            let tool = format!("mcp__server__tool_{}", round * 10 + k);
            session.send(&format!(
                r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{{"query":"q{round}"}},"tool_use_id":"{id}"}}"#
            ));
            results.push(format!(
                r#"{{"tool_use_id":"{id}","tool_response":"page {round} of {tool}"}}"#
            ));
        }
        session.send(&format!(
            r#"{{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{}]}}"#,
            results.join(",")
        ));
    }
    let text = session.state.clone().unwrap();
    let state = parse(&text).unwrap();
    let base = state
        .as_object()
        .and_then(|o| o.get("base"))
        .and_then(Value::as_object)
        .unwrap();
    let count = |value: Option<&Value>| value.and_then(Value::as_object).map_or(0, |o| o.iter().count());
    let beyond = base.get("beyond").and_then(Value::as_object).unwrap();
    // The last round's calls are kept apart until the next round folds them in.
    assert_eq!(count(base.get("tools")), 110, "the reference's part: every tool");
    assert_eq!(count(beyond.get("outcomes")), doom_loop::detectors::MAX_TOOLS);
    let novelty = beyond.get("novelty").and_then(Value::as_object).unwrap();
    assert_eq!(count(novelty.get("tools")), doom_loop::detectors::MAX_TOOLS);
    // The most recent tools', not the first ones'.
    let outcomes = beyond.get("outcomes").and_then(Value::as_object).unwrap();
    assert!(outcomes.get("mcp__server__tool_109").is_some() && outcomes.get("mcp__server__tool_0").is_none());
    assert!(text.len() < 32 * 1024, "{} bytes", text.len());
}

/// `n` objects nested in one another around a string.
fn nested(n: usize) -> String {
    format!("{}\"x\"{}", "{\"a\":".repeat(n), "}".repeat(n))
}

/// An event the hook accepts (nested up to the parser's 512 levels) is one
/// whose state it can read back: a call's input and output are stored 4
/// levels deeper, so what nests past that is stored as its JSON text, and
/// a deep call beside a loop never starts the session's detection over.
#[test]
fn a_call_nested_as_deep_as_the_hook_accepts_is_stored_and_read_back() {
    let option = default_option();
    // Claude Code: the input up to 511 levels (the event's 512), the
    // result of PostToolBatch up to 509 (it sits 3 levels down).
    for (input_depth, output_depth) in [(0, 0), (509, 0), (511, 509), (400, 509)] {
        let mut state: Option<String> = None;
        let mut refused = Vec::new();
        let mut send = |event: String| {
            let incoming = read_event(Agent::ClaudeCode, event.as_bytes()).unwrap();
            let step = step(Agent::ClaudeCode, &incoming, state.as_deref(), &option).unwrap();
            assert!(
                !step
                    .warnings
                    .iter()
                    .any(|w| w.contains("starting this session's detection over")),
                "{input_depth}/{output_depth}: {:?}",
                step.warnings
            );
            parse(&step.state).expect("the state reads back");
            state = Some(step.state);
            step.stdout
        };
        for r in 1..=4 {
            if !send(pre(&format!("m{r}"), "make", "build")).is_empty() {
                refused.push(r);
            }
            let mut results = vec![format!(
                r#"{{"tool_use_id":"m{r}","tool_response":"make: *** [all] Error 1"}}"#
            )];
            if input_depth > 0 {
                send(format!(
                    r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__x__y","tool_use_id":"d{r}","tool_input":{}}}"#,
                    nested(input_depth)
                ));
                let output = if output_depth > 0 {
                    nested(output_depth)
                } else {
                    "\"ok\"".into()
                };
                results.push(format!(r#"{{"tool_use_id":"d{r}","tool_response":{output}}}"#));
            }
            send(format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{}]}}"#,
                results.join(",")
            ));
        }
        assert_eq!(refused, [3, 4], "{input_depth}/{output_depth}");
    }
    // Codex: PostToolUse's result up to 511 levels.
    let mut state: Option<String> = None;
    for event in [
        codex("PreToolUse", "c1", "ls", None),
        format!(
            r#"{{"session_id":"c","turn_id":"t","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"ls"}},"tool_use_id":"c1","tool_response":{}}}"#,
            nested(511)
        ),
        codex("PreModelRequest", "", "", None),
    ] {
        let incoming = read_event(Agent::Codex, event.as_bytes()).unwrap();
        let step = step(Agent::Codex, &incoming, state.as_deref(), &option).unwrap();
        assert!(
            !step.warnings.iter().any(|w| w.contains("starting this session")),
            "{:?}",
            step.warnings
        );
        state = Some(step.state);
    }
}

fn system_message(answer: &str) -> Option<String> {
    let value = parse(answer.trim()).ok()?;
    Some(value.as_object()?.get("systemMessage")?.as_js_string()?.to_string())
}

/// Settings written by hand from Claude Code's docs: `PreToolUse` and
/// `PostToolUse` only. A failing command fires `PostToolUseFailure`, not
/// registered, so the hook sees nothing but the calls.
#[test]
fn without_the_round_end_event_each_call_is_a_round_and_an_identical_failing_command_is_refused_and_stopped() {
    for option in [
        "true",
        "{\"outcomes\":true,\"novelty\":true,\"repetition\":true,\"ladder\":{\"stop\":6}}",
    ] {
        let mut session = Session::with_option(Agent::ClaudeCode, option);
        let answers: Vec<String> = (1..=6)
            .map(|i| session.send(&pre(&format!("t{i}"), "cat missing.txt", "show it")))
            .collect();
        assert_eq!(answers[0], "", "{option}");
        // Told once, at the second call (Claude Code's PostToolBatch would have come by then).
        let notices: Vec<Option<String>> = answers.iter().map(|a| system_message(a)).collect();
        assert!(
            notices[1]
                .as_deref()
                .is_some_and(|m| m.contains("PostToolBatch") && m.contains("doomloop hook install claude-code")),
            "{option}: {notices:?}"
        );
        assert!(
            notices.iter().enumerate().all(|(i, n)| (i == 1) == n.is_some()),
            "{option}: {notices:?}"
        );
        assert!(!answers[1].contains("permissionDecision"), "{option}: {}", answers[1]);
        for answer in &answers[2..5] {
            assert_eq!(decision(answer).as_deref(), Some("deny"), "{option}: {answer}");
        }
        assert!(answers[5].contains("\"continue\":false"), "{option}: {}", answers[5]);
    }
}

#[test]
fn the_first_post_tool_batch_ends_inference_and_a_user_turn_after_calls_without_one_proves_it_missing() {
    // Installed (UserPromptSubmit, PostToolBatch): nothing inferred, nothing said.
    let mut session = Session::with_option(Agent::ClaudeCode, "true");
    session.send(r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"go"}"#);
    for i in 1..=2 {
        let id = format!("t{i}");
        assert_eq!(session.send(&pre(&id, "cat x", "d")), "");
        session.send(&batch(&[&id], "no such file"));
    }
    assert!(!session.state.as_deref().unwrap().contains("\"roundEndMissing\":true"));

    // UserPromptSubmit without PostToolBatch: one round until the next
    // prompt shows none came; then told, and each call is a round.
    let mut session = Session::with_option(Agent::ClaudeCode, "true");
    let prompt = r#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    session.send(prompt);
    for i in 1..=3 {
        assert_eq!(
            session.send(&pre(&format!("a{i}"), "cat x", "d")),
            "",
            "one round: counts once"
        );
    }
    assert!(system_message(&session.send(prompt)).is_some_and(|m| m.contains("PostToolBatch")));
    let answers: Vec<String> = (1..=3)
        .map(|i| session.send(&pre(&format!("b{i}"), "cat x", "d")))
        .collect();
    // The streak goes on from the first turn's round: 2, 3, 4.
    assert_eq!(answers[0], "");
    assert_eq!(decision(&answers[1]).as_deref(), Some("deny"));
    assert!(
        answers.iter().all(|a| system_message(a).is_none()),
        "told once: {answers:?}"
    );
}

#[test]
fn gemini_cli_without_before_model_is_told_on_stderr_at_the_first_call_and_refuses_the_third() {
    let before = r#"{"session_id":"g","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"cat x"}}"#;
    let after = r#"{"session_id":"g","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"cat x"},"tool_response":{"llmContent":"no such file","error":"exit 1"}}"#;
    let option = parse("true").unwrap();
    let mut state: Option<String> = None;
    let mut send = |event: &str| {
        let incoming = read_event(Agent::GeminiCli, event.as_bytes()).unwrap();
        let step = step(Agent::GeminiCli, &incoming, state.as_deref(), &option).unwrap();
        state = Some(step.state);
        (step.stdout, step.warnings)
    };
    let mut told = Vec::new();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let (answer, warnings) = send(before);
        answers.push(answer);
        told.extend(warnings);
        told.extend(send(after).1);
    }
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains("BeforeModel") && told[0].contains("doomloop hook install gemini-cli"),
        "{told:?}"
    );
    assert_eq!(&answers[..2], ["", ""]);
    assert!(answers[2].starts_with(r#"{"decision":"deny""#), "{}", answers[2]);
}

/// A Claude Code `PreToolUse` of any tool.
fn pre_tool(id: &str, tool: &str, input: &str) -> String {
    format!(
        r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}"}}"#
    )
}

/// A Claude Code `PostToolBatch` of one call.
fn batch_of(id: &str, tool: &str, output: &str) -> String {
    format!(
        r#"{{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{{"tool_name":"{tool}","tool_input":{{}},"tool_use_id":"{id}","tool_response":"{output}"}}]}}"#
    )
}

/// Runs the test, then for each edit: the edit, the test again (failing
/// the same way until the last run); returns every answer.
fn edit_and_retest(session: &mut Session, edits: &[(&str, &str)]) -> Vec<String> {
    let test = r#"{"command":"pytest tests/test_x.py","description":"Run the tests"}"#;
    let fail = "FAILED test_x - AssertionError: 1 != 2";
    let mut answers = vec![session.send(&pre_tool("t0", "Bash", test))];
    session.send(&batch_of("t0", "Bash", fail));
    for (i, (from, to)) in edits.iter().enumerate() {
        let input = format!(r#"{{"file_path":"/repo/x.py","old_string":"{from}","new_string":"{to}"}}"#);
        answers.push(session.send(&pre_tool(&format!("e{i}"), "Edit", &input)));
        session.send(&batch_of(
            &format!("e{i}"),
            "Edit",
            "The file /repo/x.py has been updated.",
        ));
        answers.push(session.send(&pre_tool(&format!("t{}", i + 1), "Bash", test)));
        let output = if i + 1 == edits.len() { "1 passed" } else { fail };
        session.send(&batch_of(&format!("t{}", i + 1), "Bash", output));
    }
    answers
}

#[test]
fn claude_code_edits_between_identical_failing_test_runs_are_progress_by_default() {
    let mut session = Session::new(Agent::ClaudeCode);
    let answers = edit_and_retest(&mut session, &[("a", "b"), ("b", "c"), ("c", "d")]);
    assert!(answers.iter().all(String::is_empty), "{answers:?}");
}

#[test]
fn claude_code_the_same_edit_re_applied_is_still_refused_by_default() {
    let mut session = Session::new(Agent::ClaudeCode);
    let answers = edit_and_retest(&mut session, &[("a", "b"), ("a", "b"), ("a", "b")]);
    // Answers: test, edit, test, edit, test, edit (its third application).
    assert_eq!(decision(&answers[5]).as_deref(), Some("deny"), "{answers:?}");
}

#[test]
fn the_hooks_declare_each_agents_edit_tools_as_writes_and_no_shell_tool() {
    use doom_loop_guard::default_loop_effects;
    let names = |agent| {
        let effects = default_loop_effects(agent);
        effects
            .iter()
            .map(|(tool, effect)| {
                assert_eq!(effect.as_js_string().map(|e| e.to_string()).as_deref(), Some("write"));
                tool.to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(names(Agent::ClaudeCode), ["Edit", "Write", "MultiEdit", "NotebookEdit"]);
    assert_eq!(names(Agent::GeminiCli), ["replace", "write_file"]);
    assert_eq!(names(Agent::Codex), ["apply_patch"]);
    assert_eq!(names(Agent::Copilot), ["Edit", "Write", "edit", "create"]);
}
