//! `make bench`: the paths issue 20 found quadratic, each at 1k, 10k and
//! 100k items with its time and the ratio against 1k (linear work: ~10 and
//! ~100; quadratic: ~100 and ~10,000). No criterion: each size is timed
//! once, the best of three for the 1k and 10k rows.
//!
//! - `sources`: a JSON Lines file of N runs, each naming its own source,
//!   evaluated (`Evaluation::add_bytes`): the sources are keyed.
//! - `outcome tools`: a monitor under RECOMMENDED_DOOM_LOOP_OPTION given N
//!   distinct tools, one call and its result each: the outcome state is
//!   keyed by tool.
//! - `result matching`: one OpenAI-chat turn of N parallel calls and their
//!   N tool messages, imported (matched by id) — and the same results
//!   without ids (matched by tool name, in order).
//!
//! Run: `cargo bench -p doom-loop-trace --bench linear`.

use std::time::Instant;

use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
use doom_loop::json::{parse, Value};
use doom_loop::monitor::RecordOptions;
use doom_loop::{DoomLoopMonitor, JsString};
use doom_loop_trace::eval::{EvalOption, Evaluation};
use doom_loop_trace::import::import_single;

fn sources(n: usize) {
    let text: String = (0..n)
        .map(|i| format!("{{\"source\":\"s{i}\",\"rounds\":[]}}\n"))
        .collect();
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    evaluation.add_bytes(text.as_bytes(), "many.jsonl");
    assert_eq!(evaluation.report().options[0].sources.len(), n);
}

fn outcome_tools(n: usize) {
    let config = resolve_doom_loop_option(Some(&recommended_doom_loop_option()))
        .result
        .unwrap()
        .unwrap();
    let mut monitor = DoomLoopMonitor::new(config);
    let args = parse(r#"{"a":1}"#).unwrap();
    let out = Value::String(JsString::from("out"));
    for i in 0..n {
        let tool = JsString::from(format!("tool{i}"));
        let record = monitor
            .record_tool_call(&tool, &args, 1.0, &RecordOptions::default())
            .unwrap();
        monitor
            .record_tool_result(&tool, &record.fingerprint, Some(&out), false, 1.0)
            .unwrap();
    }
}

fn result_matching(n: usize, by_id: bool) {
    let calls: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":"c{i}","type":"function","function":{{"name":"t","arguments":"{{\"i\":{i}}}"}}}}"#))
        .collect();
    let results: String = (0..n)
        .map(|i| {
            if by_id {
                format!(r#",{{"role":"tool","tool_call_id":"c{i}","content":"r"}}"#)
            } else {
                r#",{"role":"tool","content":"r"}"#.to_string()
            }
        })
        .collect();
    let text = format!(
        r#"{{"messages":[{{"role":"assistant","tool_calls":[{}]}}{results}]}}"#,
        calls.join(",")
    );
    let transcript = import_single(text.as_bytes(), "calls.json").unwrap();
    assert_eq!(transcript.rounds[0].calls.len(), n);
}

fn time(f: &dyn Fn(usize), n: usize) -> f64 {
    let tries = if n >= 100_000 { 1 } else { 3 };
    (0..tries)
        .map(|_| {
            let start = Instant::now();
            f(n);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks rows.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let rows: [(&str, &dyn Fn(usize)); 4] = [
        ("sources", &sources),
        ("outcome tools", &outcome_tools),
        ("result matching (by id)", &|n| result_matching(n, true)),
        ("result matching (in order)", &|n| result_matching(n, false)),
    ];
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "linear (issue 20)", "1k", "10k", "100k", "10k/1k", "100k/1k"
    );
    for (name, f) in rows {
        if filter.as_deref().is_some_and(|w| !name.contains(w)) {
            continue;
        }
        let [a, b, c] = [1_000, 10_000, 100_000].map(|n| time(f, n));
        println!(
            "{name:<28} {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>11.1}x {:>11.1}x",
            a * 1e3,
            b * 1e3,
            c * 1e3,
            b / a,
            c / a
        );
    }
}
