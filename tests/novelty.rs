//! Novelty-aware streaks (`novelty`) and in-response repetition
//! (`repetition`): the edit-then-test shapes with separate tools stay quiet
//! when the test output moves, the loops keep their verdicts (`think` or
//! `calculate` between identical retries), a naive oracle agrees with the
//! monitor on random runs, calls without known results behave exactly as
//! the reference's, and the state survives getState → restore, also into a
//! monitor that reads only the reference's keys.

use doom_loop::json::{parse, to_json, Value};
use doom_loop::ladder::Action;
use doom_loop::{
    resolve_doom_loop_option, DeclaredCall, DoomLoopMonitor, JsString, RecordOptions, RECOMMENDED_DOOM_LOOP_OPTION,
};
use proptest::prelude::*;

mod support;
use support::without_beyond;

fn monitor(option: &str) -> DoomLoopMonitor {
    let config = resolve_doom_loop_option(Some(&parse(option).unwrap()))
        .result
        .unwrap()
        .unwrap();
    DoomLoopMonitor::new(config)
}

/// One call of a scripted run: tool, arguments (JSON), result (None: unknown).
type Step = (&'static str, String, Option<String>);

fn step(tool: &'static str, args: &str, result: Option<&str>) -> Step {
    (tool, args.to_string(), result.map(str::to_string))
}

/// One call per round, each known result fed right after its call; each
/// call's action (`"-"` for none).
fn run(m: &mut DoomLoopMonitor, steps: &[Step]) -> Vec<&'static str> {
    steps
        .iter()
        .enumerate()
        .map(|(i, (tool, args, result))| {
            let round = (i + 1) as f64;
            let tool = JsString::from(*tool);
            let record = m
                .record_tool_call(&tool, &parse(args).unwrap(), round, &RecordOptions::default())
                .unwrap();
            let result = result.as_deref().map(|r| Value::String(JsString::from(r)));
            m.record_tool_result(&tool, &record.fingerprint, result.as_ref(), false, round)
                .unwrap();
            record.verdict.map_or("-", |v| v.action.as_str())
        })
        .collect()
}

/// The actions of one tool's calls only.
fn of(steps: &[Step], actions: &[&'static str], tool: &str) -> Vec<&'static str> {
    steps
        .iter()
        .zip(actions)
        .filter(|(s, _)| s.0 == tool)
        .map(|(_, a)| *a)
        .collect()
}

/// An edit (new arguments, new output) before every identical test run.
fn edit_then_test(test_results: &[&str]) -> Vec<Step> {
    test_results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            [
                step("edit", &format!(r#"{{"line":{i}}}"#), Some(&format!("edited line {i}"))),
                step("run_tests", r#"{"path":"tests/"}"#, Some(r)),
            ]
        })
        .collect()
}

const OUTCOMES: &str = r#"{"outcomes":true}"#;
const BOTH: &str = r#"{"outcomes":true,"novelty":true}"#;

#[test]
fn a_test_printing_an_earlier_failure_after_an_edit_is_progress() {
    // The shape outcome-aware streaks alone block: F1, F2, F1 — the third
    // output is among the last two, so it is not "new".
    let steps = edit_then_test(&["F1", "F2", "F1", "F2", "F1", "F2", "ok"]);
    assert_eq!(
        of(&steps, &run(&mut monitor("true"), &steps), "run_tests"),
        ["-", "observe", "block", "block", "block", "stop", "stop"]
    );
    assert_eq!(
        of(&steps, &run(&mut monitor(OUTCOMES), &steps), "run_tests"),
        ["-", "observe", "observe", "block", "block", "block", "stop"]
    );
    let quiet = of(&steps, &run(&mut monitor(BOTH), &steps), "run_tests");
    assert!(quiet.iter().all(|a| *a == "-" || *a == "observe"), "{quiet:?}");
    let quiet = of(
        &steps,
        &run(&mut monitor(RECOMMENDED_DOOM_LOOP_OPTION), &steps),
        "run_tests",
    );
    assert!(quiet.iter().all(|a| *a == "-" || *a == "observe"), "{quiet:?}");
}

#[test]
fn navigation_between_edits_is_progress() {
    // `goto 120` after every edit (another tool): the view changes, sometimes
    // back to one seen before.
    let views = ["G1", "G2", "G1", "G2", "G1", "G3", "G2"];
    let steps: Vec<Step> = views
        .iter()
        .enumerate()
        .flat_map(|(i, v)| {
            [
                step(
                    "str_replace_editor",
                    &format!(r#"{{"insert_line":{i}}}"#),
                    Some(&format!("inserted at {i}")),
                ),
                step("bash", r#"{"command":"goto 120"}"#, Some(v)),
            ]
        })
        .collect();
    let actions = run(&mut monitor(BOTH), &steps);
    assert!(actions.iter().all(|a| *a == "-" || *a == "observe"), "{actions:?}");
}

#[test]
fn the_loops_keep_their_verdicts() {
    // The same call with the same output, whatever new happens around it.
    let think: Vec<Step> = (0..7)
        .flat_map(|i| {
            [
                step("book", r#"{"flight":"HAT023"}"#, Some("error: payment does not add up")),
                step("think", &format!(r#"{{"thought":"retry {i}"}}"#), Some("")),
            ]
        })
        .collect();
    let calculate: Vec<Step> = (0..7)
        .flat_map(|i| {
            [
                step("book", r#"{"flight":"HAT023"}"#, Some("error: total is 374")),
                step(
                    "calculate",
                    &format!(r#"{{"expression":"299 + {i}"}}"#),
                    Some(&format!("{}", 299 + i)),
                ),
            ]
        })
        .collect();
    let same_failure = edit_then_test(&["F1"; 7]);
    for (name, steps, tool) in [
        ("think", think, "book"),
        ("calculate", calculate, "book"),
        ("edits, same failure", same_failure, "run_tests"),
    ] {
        let defaults = of(&steps, &run(&mut monitor("true"), &steps), tool);
        assert_eq!(
            defaults,
            ["-", "observe", "block", "block", "block", "stop", "stop"],
            "{name}"
        );
        // From the third call on (two equal outputs before it) the verdicts
        // are the reference's; the second may be scored 1 after a new result.
        assert_eq!(
            of(&steps, &run(&mut monitor(BOTH), &steps), tool)[2..],
            defaults[2..],
            "{name}: the same blocks and stop"
        );
        let recommended = of(&steps, &run(&mut monitor(RECOMMENDED_DOOM_LOOP_OPTION), &steps), tool);
        assert_eq!(recommended[2..], ["block"; 5], "{name}: stop moved to 12");
    }
}

#[test]
fn new_arguments_alone_are_not_novelty() {
    // A `think` whose output never varies: its first result is nothing to
    // differ from, the others repeat it.
    let steps: Vec<Step> = (0..4)
        .flat_map(|i| {
            [
                step("poll", "{}", Some("pending")),
                step("think", &format!(r#"{{"t":{i}}}"#), Some("")),
            ]
        })
        .collect();
    assert_eq!(
        of(&steps, &run(&mut monitor(r#"{"novelty":true}"#), &steps), "poll"),
        ["-", "observe", "block", "block"]
    );
    // A think that echoes something new each time is a tool whose output
    // varies; only a call whose own output repeated is a loop then.
    let echo: Vec<Step> = (0..4)
        .flat_map(|i| {
            [
                step("poll", "{}", Some("pending")),
                step("think", &format!(r#"{{"t":{i}}}"#), Some(&format!("t{i}"))),
            ]
        })
        .collect();
    assert_eq!(
        of(&echo, &run(&mut monitor(r#"{"novelty":true}"#), &echo), "poll"),
        ["-", "observe", "block", "block"]
    );
}

#[test]
fn the_options_resolve_and_round_trip_through_the_resolved_config() {
    let resolution = resolve_doom_loop_option(Some(&parse(RECOMMENDED_DOOM_LOOP_OPTION).unwrap()));
    assert!(resolution.warnings.is_empty());
    let config = resolution.result.unwrap().unwrap();
    let beyond = doom_loop::beyond::BeyondConfig::of(&config);
    assert!(beyond.novelty.is_some() && beyond.repetition.is_some() && beyond.outcomes.is_some());
    assert!(beyond.cycles.is_none() && !beyond.ledger && !beyond.failures && beyond.budget.is_none());
    let json = config.to_json();
    assert!(json.contains(r#""novelty":{"maskDigits":false}"#), "{json}");
    assert!(
        json.contains(r#""repetition":{"minRepeats":20,"minChars":16}"#),
        "{json}"
    );
    let back = doom_loop::ResolvedConfig::from_value(&parse(&json).unwrap()).unwrap();
    assert_eq!(back, config);
    assert!(monitor(r#"{"novelty":false,"repetition":0}"#).config().beyond.is_off());
}

// ---- in-response repetition ---------------------------------------------------

fn chant(times: usize) -> String {
    "Wait, I am confused.\nIs it `msubsup` or `msubsup`?\n`msubsup` -> m s u b s u p.\n\n".repeat(times)
}

#[test]
fn a_chanting_response_is_observed_and_only_a_run_of_them_stops() {
    // The reference's tail-block rule misses it (the block is too long).
    assert_eq!(monitor("true").record_assistant_text(&JsString::from(chant(30))), None);
    let mut m = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
    let first = m.record_assistant_text(&JsString::from(chant(30))).unwrap();
    assert_eq!(
        (first.action, first.streak, first.opt_in_detector),
        (Action::Observe, 2.0, Some("in-response-repetition"))
    );
    assert_eq!(first.detector, Value::String(JsString::from("text-repetition")));
    assert!(first.message.to_string().contains("30 times"), "{}", first.message);
    // A response that does not chant resets the count.
    assert_eq!(
        m.record_assistant_text(&JsString::from("Now I will run the tests.")),
        None
    );
    let mut last = None;
    for i in 0..11 {
        // Different texts, so the cross-turn text streak stays out of it.
        last = m.record_assistant_text(&JsString::from(format!("{}{i}", chant(25))));
    }
    assert_eq!(last.map(|v| (v.action, v.streak)), Some((Action::Stop, 12.0)));
    // Below the threshold, and the same words inside code fences, do not count.
    let mut m = monitor(r#"{"repetition":true}"#);
    assert_eq!(m.record_assistant_text(&JsString::from(chant(19))), None);
    assert_eq!(
        m.record_assistant_text(&JsString::from(format!("```\n{}```", chant(40)))),
        None
    );
}

#[test]
fn the_reference_tail_rule_still_decides_where_it_fires() {
    let text = JsString::from("retry the call now ".repeat(40));
    let reference = monitor("true").record_assistant_text(&text).unwrap();
    let with = monitor(r#"{"repetition":true}"#).record_assistant_text(&text).unwrap();
    assert_eq!(with.opt_in_detector, None);
    assert_eq!(with.to_json(), reference.to_json());
}

// ---- state -------------------------------------------------------------------

fn shapes() -> Vec<Vec<Step>> {
    vec![
        edit_then_test(&["F1", "F2", "F1", "F2", "F1", "F2", "ok"]),
        edit_then_test(&["F1"; 8]),
        (0..8)
            .flat_map(|i| {
                [
                    step("book", "{}", Some("e")),
                    step("think", &format!(r#"{{"t":{i}}}"#), Some("")),
                ]
            })
            .collect(),
    ]
}

#[test]
fn state_survives_get_state_and_restore_mid_run() {
    for steps in shapes() {
        let whole = run(&mut monitor(RECOMMENDED_DOOM_LOOP_OPTION), &steps);
        for cut in [1, steps.len() / 2, steps.len() - 1] {
            let mut first = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
            let mut actions = run(&mut first, &steps[..cut]);
            assert_eq!(
                first
                    .record_assistant_text(&JsString::from(chant(21)))
                    .map(|v| v.action),
                Some(Action::Observe)
            );
            let blob = parse(&to_json(&first.get_state())).unwrap();
            assert!(to_json(&blob).contains(r#""novelty":{"epoch":"#) && to_json(&blob).contains(r#""repetition":1"#));
            let mut resumed = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
            assert!(resumed.restore(&blob).is_empty());
            assert_eq!(to_json(&resumed.get_state()), to_json(&blob), "restore is exact");
            // The chanting count resumed too: a second chanting response is streak 3.
            let mut probe = resumed.clone();
            assert_eq!(
                probe
                    .record_assistant_text(&JsString::from(chant(22)))
                    .map(|v| v.streak),
                Some(3.0)
            );
            for (i, (tool, args, result)) in steps[cut..].iter().enumerate() {
                let round = (cut + i + 1) as f64;
                let tool = JsString::from(*tool);
                let record = resumed
                    .record_tool_call(&tool, &parse(args).unwrap(), round, &RecordOptions::default())
                    .unwrap();
                let result = result.as_deref().map(|r| Value::String(JsString::from(r)));
                resumed
                    .record_tool_result(&tool, &record.fingerprint, result.as_ref(), false, round)
                    .unwrap();
                actions.push(record.verdict.map_or("-", |v| v.action.as_str()));
            }
            assert_eq!(actions, whole);
        }
    }
}

#[test]
fn a_recommended_blob_restored_where_only_the_reference_keys_are_read_is_harmless() {
    let steps = &shapes()[0];
    let mut recommended = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
    run(&mut recommended, &steps[..6]);
    let blob = recommended.get_state();
    let keys: Vec<String> = blob.as_object().unwrap().iter().map(|(k, _)| k.to_string()).collect();
    assert!(
        keys.iter()
            .all(|k| ["tools", "text", "escalationsUsed", "beyond"].contains(&k.as_str())),
        "{keys:?}"
    );
    let mut reference = monitor("true");
    let mut stripped = monitor("true");
    assert!(reference.restore(&blob).is_empty());
    stripped.restore(&without_beyond(&blob));
    assert_eq!(to_json(&reference.get_state()), to_json(&without_beyond(&blob)));
    assert_eq!(run(&mut reference, &steps[6..]), run(&mut stripped, &steps[6..]));
    // And a reference-shaped blob resumes under RECOMMENDED.
    let mut resumed = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
    assert!(resumed.restore(&without_beyond(&blob)).is_empty());
    assert_eq!(to_json(&resumed.get_state()), to_json(&without_beyond(&blob)));
}

#[test]
fn hostile_novelty_state_is_dropped_not_fatal() {
    let blob = parse(
        r#"{"tools":{},"beyond":{"repetition":-4,"novelty":{"epoch":1e300,"tools":{"__proto__":{"seen":"x"},"t":{"seen":["a",1,"b"],"calls":{"f":{"epoch":-1,"results":[],"base":0,"last":1},"g":{"epoch":2,"results":["a","b","c"],"base":9,"last":3,"round":null}}}}}}}"#,
    )
    .unwrap();
    let mut m = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
    assert!(m.restore(&blob).is_empty());
    let state = to_json(&m.get_state());
    assert!(state.contains(r#""novelty":{"epoch":1000000,"tools":{"t":{"seen":["a","b"],"calls":{"g":{"epoch":2,"results":["b","c"],"base":3,"last":3}}}}}"#), "{state}");
    assert!(!state.contains("__proto__") && !state.contains("repetition"), "{state}");
    run(&mut m, &edit_then_test(&["x", "x", "x"]));
    let again = m.get_state();
    let mut resumed = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
    resumed.restore(&again);
    assert_eq!(to_json(&resumed.get_state()), to_json(&again));
}

#[test]
fn a_result_that_cannot_be_fingerprinted_changes_nothing() {
    let mut m = monitor(BOTH);
    let tool = JsString::from("t");
    let record = m
        .record_tool_call(&tool, &parse("{}").unwrap(), 1.0, &RecordOptions::default())
        .unwrap();
    let before = to_json(&m.get_state());
    assert!(m
        .record_tool_result(&tool, &record.fingerprint, Some(&Value::BigInt), false, 1.0)
        .is_err());
    assert_eq!(to_json(&m.get_state()), before);
}

// ---- properties ----------------------------------------------------------------

const TOOLS: [&str; 3] = ["a", "b", "c"];
const ARGS: [&str; 3] = ["{}", r#"{"k":1}"#, r#"{"k":2}"#];
const RESULTS: [&str; 3] = ["r0", "r1", "r2"];

/// The novelty rule written out naively over the whole history (one call
/// per round, each result fed right after its call).
fn oracle(steps: &[(usize, usize, Option<usize>)]) -> Vec<f64> {
    // Was the result of call k new to its tool (the tool returned something
    // before, never this)?
    let new_to_tool = |k: usize| {
        let (tool, _, result) = steps[k];
        let Some(result) = result else { return false };
        let earlier: Vec<usize> = (0..k)
            .filter(|&j| steps[j].0 == tool)
            .filter_map(|j| steps[j].2)
            .collect();
        !earlier.is_empty() && !earlier.contains(&result)
    };
    // The known results of fingerprint (tool, arg) before call k, oldest first.
    let known_before = |k: usize, tool: usize, arg: usize| -> Vec<usize> {
        (0..k)
            .filter(|&j| steps[j].0 == tool && steps[j].1 == arg)
            .filter_map(|j| steps[j].2)
            .collect()
    };
    (0..steps.len())
        .map(|i| {
            let (tool, arg, _) = steps[i];
            let own: Vec<usize> = (0..=i).filter(|&j| steps[j].0 == tool).collect();
            let mut start = own.len() - 1;
            while start > 0 && steps[own[start - 1]].1 == arg {
                start -= 1;
            }
            // Walk the reference's run; `base` = calls before the current run.
            let mut base = 0usize;
            for p in (start + 1)..own.len() {
                let streak = p - start + 1;
                let (prev, here) = (own[p - 1], own[p]);
                let known = known_before(here, tool, arg);
                let repeating = streak >= 3 && known.len() >= 2 && known[known.len() - 1] == known[known.len() - 2];
                // Novelty since the previous identical call: a new result of
                // any call in between, or of that call itself when its own
                // output moved (it had an earlier known result and differs).
                let own_moved = {
                    let before = known_before(prev, tool, arg);
                    matches!((before.last(), steps[prev].2), (Some(b), Some(r)) if *b != r)
                };
                let novelty = (prev + 1..here).any(new_to_tool) || (own_moved && new_to_tool(prev));
                if repeating {
                    base = base.min(streak - 3);
                } else if novelty {
                    base = streak - 1;
                }
            }
            let streak = own.len() - start;
            (streak - base).max(1) as f64
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_monitor_agrees_with_the_naive_rule(steps in prop::collection::vec((0..TOOLS.len(), 0..ARGS.len(), prop::option::of(0..RESULTS.len())), 1..40)) {
        let mut m = monitor(r#"{"novelty":true,"text":false}"#);
        let mut streaks = Vec::new();
        for (i, &(tool, arg, result)) in steps.iter().enumerate() {
            let round = (i + 1) as f64;
            let tool = JsString::from(TOOLS[tool]);
            let record = m.record_tool_call(&tool, &parse(ARGS[arg]).unwrap(), round, &RecordOptions::default()).unwrap();
            let result = result.map(|r| Value::String(JsString::from(RESULTS[r])));
            m.record_tool_result(&tool, &record.fingerprint, result.as_ref(), false, round).unwrap();
            streaks.push(record.streak);
        }
        prop_assert_eq!(streaks, oracle(&steps));
    }

    #[test]
    fn without_results_every_verdict_is_the_defaults(
        rounds in prop::collection::vec((prop::collection::vec((0..2usize, 0..3usize), 0..4), prop::option::of(0..2usize)), 1..30),
    ) {
        for (with, without) in [(r#"{"novelty":true,"repetition":true}"#, "true"), (RECOMMENDED_DOOM_LOOP_OPTION, r#"{"ladder":{"stop":12}}"#)] {
            let (mut a, mut b) = (monitor(with), monitor(without));
            for (i, (calls, text)) in rounds.iter().enumerate() {
                let round = (i + 1) as f64;
                if let Some(t) = text {
                    let text = JsString::from(["same words", "other words"][*t]);
                    prop_assert_eq!(a.record_assistant_text(&text), b.record_assistant_text(&text));
                }
                let declared: Vec<DeclaredCall> = calls
                    .iter()
                    .map(|&(t, k)| DeclaredCall { tool_name: JsString::from(TOOLS[t]), key_material: parse(ARGS[k]).unwrap() })
                    .collect();
                a.declare_round(round, &declared);
                b.declare_round(round, &declared);
                for call in &declared {
                    let ra = a.record_tool_call(&call.tool_name, &call.key_material, round, &RecordOptions::default()).unwrap();
                    let rb = b.record_tool_call(&call.tool_name, &call.key_material, round, &RecordOptions::default()).unwrap();
                    prop_assert_eq!(ra.to_json(), rb.to_json());
                    prop_assert_eq!(a.record_tool_result(&call.tool_name, &ra.fingerprint, None, false, round).unwrap(), None);
                }
            }
            prop_assert_eq!(to_json(&without_beyond(&a.get_state())), to_json(&without_beyond(&b.get_state())));
        }
    }

    #[test]
    fn chanting_finds_the_most_repeated_sentence(picks in prop::collection::vec(0..4usize, 0..80), min_repeats in 2usize..30) {
        const SENTENCES: [&str; 4] = ["Wait, I am confused here.", "Is it the first or the second?", "Let me check the output again.", "Ok."];
        let text: String = picks.iter().map(|&p| format!("{} ", SENTENCES[p])).collect();
        let config = doom_loop::repetition::RepetitionConfig { min_repeats, min_chars: 16 };
        let counts: Vec<usize> = (0..3).map(|s| picks.iter().filter(|&&p| p == s).count()).collect();
        let best = counts.iter().copied().max().unwrap_or(0);
        let found = doom_loop::repetition::chanting(&text, &config);
        prop_assert_eq!(found.as_ref().map(|c| c.repeats), (best >= min_repeats).then_some(best));
        if let Some(c) = found {
            prop_assert!(SENTENCES[..3].contains(&c.sample.as_str()));
        }
    }
}

/// Regression (repro `outcomes_duplicate_result_delivery`, after novelty
/// joined RECOMMENDED): a result delivered twice for one call — an
/// at-least-once bus, a retried hook — counted twice in the novelty state
/// and turned an A/B oscillation into "progress". One result per call and
/// round, as in the outcome state, also after a restore.
#[test]
fn a_result_delivered_twice_counts_once_in_the_novelty_state() {
    let run = |deliveries: usize, restore_each_round: bool| {
        let mut m = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
        let tool = JsString::from("poll");
        let mut actions = Vec::new();
        for round in 1..=8 {
            let record = m
                .record_tool_call(
                    &tool,
                    &parse("{}").unwrap(),
                    f64::from(round),
                    &RecordOptions::default(),
                )
                .unwrap();
            actions.push(record.verdict.map_or("-", |v| v.action.as_str()));
            let result = Value::String(JsString::from(if round % 2 == 1 { "A" } else { "B" }));
            for _ in 0..deliveries {
                if restore_each_round {
                    let state = m.get_state();
                    m = monitor(RECOMMENDED_DOOM_LOOP_OPTION);
                    m.restore(&state);
                }
                m.record_tool_result(&tool, &record.fingerprint, Some(&result), false, f64::from(round))
                    .unwrap();
            }
        }
        actions
    };
    let once = run(1, false);
    assert_eq!(run(2, false), once);
    assert_eq!(run(3, true), once);
    assert!(once.contains(&"block"), "{once:?}");
}
