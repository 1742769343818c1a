//! Where evaluation time goes: gunzip, parse + import, replay.
use std::time::Instant;
use doom_loop_trace::import::{decode, import_text, trace_files};
use doom_loop_trace::eval::evaluate_run;
fn main() {
    let files = trace_files(std::path::Path::new("../shared/trajectories")).unwrap();
    let (mut gz, mut imp, mut rep, mut notext) = (0.0, 0.0, 0.0, 0.0);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let t = Instant::now();
        let text = decode(&bytes).unwrap();
        gz += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let runs = import_text(&text, "x");
        imp += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut ts: Vec<_> = runs.into_iter().map(|r| r.transcript.unwrap()).collect();
        for tr in &ts { let _ = evaluate_run(tr); }
        rep += t.elapsed().as_secs_f64();
        for tr in &mut ts { for r in &mut tr.rounds { r.text = None; } }
        let t = Instant::now();
        for tr in &ts { let _ = evaluate_run(tr); }
        notext += t.elapsed().as_secs_f64();
    }
    println!("gunzip {gz:.3}s import {imp:.3}s replay {rep:.3}s (without text {notext:.3}s)");
}
