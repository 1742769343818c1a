//! Evaluates the paths given (default: the shared trajectories) under the
//! reference's defaults and prints the table, with the time it took.
//! `cargo run --release -p doom-loop-trace --example evaluate [PATH...] [--json]`

use std::path::Path;
use std::time::Instant;

use doom_loop_trace::eval::{EvalOption, Evaluation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let mut paths: Vec<&str> = args.iter().filter(|a| *a != "--json").map(String::as_str).collect();
    if paths.is_empty() {
        paths.push("../shared/trajectories");
    }
    let started = Instant::now();
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    for path in paths {
        evaluation.add_path(Path::new(path));
    }
    let report = evaluation.report();
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render());
    }
    eprintln!("evaluated in {:.2?}", started.elapsed());
}
