//! The evaluation engine: the reference defaults' numbers on the shared
//! trajectories (as the issue and the data set's README report them), the
//! per-run counts on small hand-written runs, and failures that are
//! counted without stopping the evaluation.

use std::path::PathBuf;

use doom_loop::json::{parse, Value};
use doom_loop_trace::eval::{evaluate_run, Class, EvalOption, Evaluation};
use doom_loop_trace::import::import_text;
use doom_loop_trace::replay::parse_transcript;

fn shared_trajectories() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/trajectories");
    assert!(
        path.is_dir(),
        "the shared trajectories are expected at {}",
        path.display()
    );
    path
}

#[test]
fn reference_defaults_on_the_shared_runs_match_the_published_numbers() {
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    assert_eq!(evaluation.add_path(&shared_trajectories()), 961);
    let report = evaluation.report();
    let total = &report.options[0].total;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!((total.runs, total.resolved), (961, 535));
    assert_eq!(
        (total.blocked, total.stopped),
        (74, 29),
        "README: 74 runs reach a block, 29 a stop"
    );
    assert_eq!((total.resolved_blocked, total.resolved_stopped), (13, 3));
    assert_eq!(total.intervened(), 75, "issue: the detector intervenes in 75 runs");
    assert_eq!((total.first.changing, total.first_resolved.changing), (50, 8));
    assert_eq!(
        total.first.unchanged, 24,
        "README: 24 of the first blocks were on unchanged output"
    );
    assert_eq!(total.first.text, 1);
    // README: 26 of the 29 stops by the tool fingerprint, 17 of those on changing output.
    assert_eq!(
        (total.stops.unchanged, total.stops.changing, total.stops.text),
        (9, 17, 3)
    );
    assert_eq!(
        total.caught_unchanged, 30,
        "runs with any block or stop on unchanged output"
    );
    let sources: Vec<&str> = report.options[0].sources.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        sources,
        [
            "coder-gpt4-lite",
            "mini-swe-agent-gemini3pro-verified",
            "tau-bench-gpt4o-airline"
        ]
    );
}

fn outcome(json: &str) -> doom_loop_trace::eval::RunOutcome {
    evaluate_run(&parse_transcript(&parse(json).unwrap()).unwrap()).unwrap()
}

fn rounds(results: &[&str], extra: usize) -> String {
    let mut rounds: Vec<String> = results
        .iter()
        .map(|r| format!(r#"{{"calls":[{{"toolName":"t","args":"{{}}","result":{r}}}]}}"#))
        .collect();
    rounds.extend((0..extra).map(|i| format!(r#"{{"calls":[{{"toolName":"other","args":{{"i":{i}}}}}]}}"#)));
    format!(r#"{{"rounds":[{}]}}"#, rounds.join(","))
}

#[test]
fn the_same_output_six_times_is_an_unchanged_stop_that_saves_the_rest() {
    let run = outcome(&rounds(&["\"same\""; 8], 2));
    assert_eq!(run.calls, 10);
    assert!(run.observed && run.blocked && run.stopped);
    assert_eq!(run.refused, 3, "blocks at 3, 4, 5");
    assert_eq!(
        run.saved, 4,
        "calls after the stop at 6: two more repeats and two other calls"
    );
    let first = run.first.unwrap();
    assert_eq!((first.round, first.class), (3, Class::Unchanged));
}

#[test]
fn a_changing_output_is_classified_changing_and_unknown_results_unknown() {
    let changing = outcome(&rounds(&["\"a\"", "\"b\"", "\"a\""], 0));
    assert_eq!(changing.first.unwrap().class, Class::Changing);
    let unknown = outcome(&rounds(&["null", "\"a\"", "\"a\""], 0));
    assert_eq!(
        unknown.first.unwrap().class,
        Class::Unknown,
        "one of the three results is not known"
    );
    let only_the_last_streak_counts = outcome(&rounds(&["\"a\"", "\"b\"", "\"b\"", "\"b\""], 0));
    assert_eq!(
        only_the_last_streak_counts.first.unwrap().class,
        Class::Changing,
        "the first block is at 3"
    );
}

#[test]
fn a_quiet_run_is_not_counted_as_intervened() {
    let run = outcome(&rounds(&["\"a\""], 3));
    assert!(!run.observed && !run.blocked && !run.stopped);
    assert_eq!((run.calls, run.refused, run.saved), (4, 0, 0));
    assert!(run.first.is_none());
}

#[test]
fn failed_imports_and_bad_options_are_counted_and_do_not_stop_the_evaluation() {
    let text = format!(
        "{}\n{{\"id\":\"broken\",\"rounds\":[{{\"calls\":5}}]}}\n{{not json\n",
        rounds(&["\"x\""; 3], 0).replacen('{', "{\"id\":\"good\",\"resolved\":true,\"source\":\"s\",", 1)
    );
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults(), EvalOption::new("off", Value::Bool(false))]);
    for run in import_text(&text, "runs.jsonl") {
        evaluation.add_imported(run);
    }
    let report = evaluation.report();
    let defaults = &report.options[0].total;
    assert_eq!(
        (
            defaults.runs,
            defaults.failed,
            defaults.blocked,
            defaults.resolved_blocked
        ),
        (1, 2, 1, 1)
    );
    assert_eq!(report.options[1].total.runs, 0);
    assert_eq!(report.options[1].total.failed, 3);
    let errors: Vec<&str> = report.failures.iter().map(|f| f.error.as_str()).collect();
    let has = |prefix: &str| errors.iter().any(|e| e.starts_with(prefix));
    assert!(
        has("runs.jsonl:2 (run broken): rounds[0]: `calls` is not an array"),
        "{errors:?}"
    );
    assert!(has("runs.jsonl:3: not valid JSON"), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("good: ")), "{errors:?}");
    let rendered = report.render();
    assert!(rendered.contains("runs.jsonl:2 (run broken)"), "{rendered}");
    let json = parse(&report.to_json()).unwrap();
    let total = json.as_object().unwrap().get("options").unwrap();
    let Value::Array(options) = total else { panic!() };
    assert_eq!(options.len(), 2);
}
