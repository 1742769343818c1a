//! `eval::Evaluation` over arbitrary input text (one file of runs) under
//! two options. Invariants: never panics; every run read is counted once
//! per option, replayed or failed; the report renders and its JSON parses.
#![no_main]

use doom_loop::json::{parse, Value};
use doom_loop_trace::eval::{EvalOption, Evaluation};
use doom_loop_trace::import::import_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let strict = parse(r#"{"ladder":{"observe":2,"block":2,"stop":3}}"#).unwrap();
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults(), EvalOption::new("strict", strict)]);
    let runs = import_bytes(data, "fuzz");
    let count = runs.len();
    runs.into_iter().for_each(|run| evaluation.add_imported(run));
    let report = evaluation.report();
    for option in &report.options {
        assert_eq!(option.total.runs + option.total.failed, count);
        assert!(option.total.refused + option.total.saved <= option.total.calls);
    }
    let _ = report.render();
    assert!(matches!(parse(&report.to_json()), Ok(Value::Object(_))));
});
