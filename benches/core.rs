//! Criterion benchmarks for the doom-loop core.
//!
//! Every input is generated here, deterministically: fixed literals plus a
//! fixed-seed xorshift64 for the bulk fixtures. No files are read and
//! nothing random happens at run time.
//!
//! Groups (each sets `Throughput::Bytes`):
//!
//! - `canonicalize_fingerprint/small`, `canonicalize_fingerprint/large`:
//!   a 150 B and a ~1.4 MB tool-call arguments object, measured as
//!   `parse_fingerprint` (JSON text → `Value` → `fingerprint_tool_call`),
//!   `canonicalize` (pre-parsed `Value` → canonical JSON) and `fingerprint`
//!   (pre-parsed `Value` → `fingerprint_tool_call`), plus the tree-free path
//!   the wasm binding takes: `canonicalize_text` (JSON text → canonical JSON)
//!   and `fingerprint_text` (JSON text → fingerprint). Throughput is the size
//!   of the JSON input text for all five.
//! - `baseline_serde_json/small`, `baseline_serde_json/large`: the same three
//!   measurements with `serde_json::Value` and a naive sort-keys-per-object
//!   canonicalizer plus `sha2`, on the same inputs. Before measuring, the
//!   bench checks that the baseline's canonical text is byte-identical to
//!   the crate's for these inputs, so both sides do the same work.
//! - `record_tool_call`: a long-lived `DoomLoopMonitor` fed the small
//!   arguments once per round, round numbers increasing (a doom loop, so
//!   the stop verdict and its message are built on every call); the same with
//!   arguments that change every round (no verdict); and a declared 5-call
//!   fan-out per round (`declare_round` + 5 records). Throughput is the
//!   argument JSON bytes recorded per iteration.
//! - `record_assistant_text`: ~4.8 MB of prose ending in a repeating
//!   sentence, through `DoomLoopMonitor::record_assistant_text` on a fresh
//!   monitor, and through `text::normalize_whitespace` and
//!   `text::detect_text_repetition` alone. Throughput is the text size for
//!   all three (`detect_text_repetition` only reads the last 25,600 UTF-16
//!   code units, so its figure is nominal).
//! - `streak_bookkeeping`: the paths a state blob or a wide round could make
//!   quadratic (issue 12). `restore_1mb`: a ~1.1 MB blob whose one tool has
//!   100,000 `callStreaks` keys, parsed and restored on a fresh monitor;
//!   `round_40k`: one tool called with 40,000 distinct arguments in one
//!   round, then one more round of the same. Each beside `baseline_*`, the
//!   reference's algorithm over std hash maps (serde_json for the blob, the
//!   naive canonicalizer + sha2 for fingerprints), for an in-run ratio.
//! - `session_round`: one call per response through the session engine,
//!   as every adapter runs it (the shim's fingerprint of the arguments
//!   handed over, distinct arguments every response, a fresh session every
//!   64), under the default option and the recommended one. Throughput is
//!   responses.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use doom_loop::canonical::canonicalize_lowered;
use doom_loop::config::recommended_doom_loop_option;
use doom_loop::fingerprint::fingerprint_lowered_tool_call;
use doom_loop::json::{parse, Value};
use doom_loop::text::{detect_text_repetition, normalize_whitespace, RepetitionThresholds};
use doom_loop::{
    canonicalize, fingerprint_tool_call, DeclaredCall, DoomLoopMonitor, JsString, RecordOptions, ResolvedConfig,
};
use sha2::{Digest, Sha256};

#[path = "support/session_round.rs"]
mod session_round;

const TOOL: &str = "run_shell_command";

/// The 150-byte arguments object of a typical shell tool call.
const SMALL_ARGS: &str = r#"{"command":"grep -rn TODO src/","cwd":"/home/user/project","timeout_ms":30000,"env":{"LANG":"C","TERM":"dumb"},"flags":["-i","--color=never"],"dry_run":false}"#;

/// Fixed-seed xorshift64 (Marsaglia): the only source of variety.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "widget", "gadget", "invoice", "report", "café", "naïve",
    "Größe", "東京", "данные", "مرحبا", "Ωmega", "🚀launch", "señal", "ünïcödé", "path/to/file",
];

/// A ~1.4 MB `{"items":[...]}` object of 6,000 records: integers, floats
/// (decimal and exponent forms), booleans, nulls, nested arrays and objects,
/// escapes and non-ASCII text (BMP and astral). Keys are written unsorted so
/// canonicalization has sorting to do. Numbers stay where JS and ryu print
/// them alike (|x| in [1e-5, 1e16), or exponent forms below 1e-6), so the naive
/// serde_json baseline produces the same canonical text.
fn large_args() -> String {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut out = String::with_capacity(1_500_000);
    out.push_str(r#"{"version":3,"items":["#);
    for id in 0..6000u64 {
        if id > 0 {
            out.push(',');
        }
        let price = rng.below(10_000_000) as f64 / 100.0;
        let delta = -(rng.below(990_000) as f64 + 10_000.0) / 1e9;
        let score = (rng.below(90) + 10) as f64 * 1e-9;
        let weight = rng.below(1000) as f64 / 8.0;
        write!(
            out,
            r#"{{"name":"{w1}-{id:06}","id":{id},"tags":["{t1}",{{"weight":{weight},"label":"{w4}"}}],"price":{price},"delta":{delta},"active":{active},"meta":{{"score":{score:e},"note":"{w5}\n\"{w6}\"\t\\","parent":{parent},"dims":[{d1},{d2}]}}}}"#,
            w1 = rng.pick(WORDS),
            t1 = rng.pick(WORDS),
            w4 = rng.pick(WORDS),
            active = rng.below(2) == 0,
            w5 = rng.pick(WORDS),
            w6 = rng.pick(WORDS),
            parent = if id % 7 == 0 { "null".to_string() } else { (id / 7).to_string() },
            d1 = rng.below(500),
            d2 = rng.below(500),
        )
        .unwrap();
    }
    out.push_str(r#"],"cursor":null,"kind":"inventory"}"#);
    out
}

/// ~4.8 MB of prose: words separated mostly by single spaces, with double
/// spaces, newlines, paragraph breaks, tabs, CRLF and no-break spaces mixed
/// in, some non-ASCII words, ending in a sentence repeated 12 times so the
/// within-response repetition detector fires.
fn long_text() -> String {
    const TARGET: usize = 4_800_000;
    #[rustfmt::skip]
    const PROSE: &[&str] = &[
        "the", "agent", "called", "tool", "again", "and", "received", "same", "result", "so",
        "it", "decided", "to", "inspect", "file", "before", "editing", "configuration", "we",
        "should", "check", "whether", "tests", "pass", "now", "output", "looks", "correct",
        "but", "error", "remains", "café", "naïve", "東京", "Größe", "🚀", "résumé", "данные",
    ];
    const REPEATED: &str = "I will run the same command again to check the result.";
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let mut out = String::with_capacity(TARGET + 1024);
    while out.len() < TARGET - 12 * (REPEATED.len() + 1) {
        out.push_str(rng.pick(PROSE));
        let sep = match rng.below(100) {
            0..=84 => " ",
            85..=89 => "  ",
            90..=93 => "\n",
            94..=95 => "\n\n",
            96 => "\t",
            97 => "\r\n",
            98 => " \u{00A0}",
            _ => ". ",
        };
        out.push_str(sep);
    }
    for _ in 0..12 {
        out.push_str(REPEATED);
        out.push(' ');
    }
    out
}

// --- serde_json baseline -------------------------------------------------

/// A naive canonicalizer: keys sorted per object (UTF-8 byte order, which
/// agrees with the UTF-16 order for these inputs), scalars written by
/// serde_json.
fn naive_canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value as J;
    match value {
        J::Null | J::Bool(_) | J::Number(_) | J::String(_) => serde_json::to_writer(&mut *out, value).unwrap(),
        J::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                naive_canonical(item, out);
            }
            out.push(b']');
        }
        J::Object(map) => {
            let mut entries: Vec<(&String, &serde_json::Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).unwrap();
                out.push(b':');
                naive_canonical(item, out);
            }
            out.push(b'}');
        }
    }
}

fn baseline_canonicalize(value: &serde_json::Value) -> Vec<u8> {
    let mut out = Vec::new();
    naive_canonical(value, &mut out);
    out
}

fn baseline_fingerprint(tool: &str, value: &serde_json::Value) -> String {
    let mut text = Vec::with_capacity(tool.len() + 64);
    text.extend_from_slice(tool.as_bytes());
    text.push(b'\n');
    naive_canonical(value, &mut text);
    let digest = Sha256::digest(&text);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        write!(hex, "{byte:02x}").unwrap();
    }
    hex
}

// --- fixtures --------------------------------------------------------------

struct JsonInput {
    label: &'static str,
    text: String,
    value: Value,
    serde_value: serde_json::Value,
}

impl JsonInput {
    fn new(label: &'static str, text: String) -> Self {
        let value = parse(&text).expect("fixture parses");
        let serde_value: serde_json::Value = serde_json::from_str(&text).expect("fixture parses");
        // The baseline must do the same job: identical canonical text and
        // fingerprint for this input.
        let ours = canonicalize(&value).expect("fixture canonicalizes");
        let theirs = String::from_utf8(baseline_canonicalize(&serde_value)).unwrap();
        if ours != theirs {
            let at = ours
                .bytes()
                .zip(theirs.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(theirs.len()));
            let from = at.saturating_sub(60);
            panic!(
                "{label}: baseline canonical text differs at byte {at}:\n ours:   {:?}\n theirs: {:?}",
                &ours.get(from..(at + 60).min(ours.len())),
                &theirs.get(from..(at + 60).min(theirs.len())),
            );
        }
        let tool = JsString::from(TOOL);
        assert_eq!(
            fingerprint_tool_call(&tool, &value).unwrap(),
            baseline_fingerprint(TOOL, &serde_value)
        );
        JsonInput {
            label,
            text,
            value,
            serde_value,
        }
    }
}

fn configure_for(input_len: usize, group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group.throughput(Throughput::Bytes(input_len as u64));
    group.warm_up_time(Duration::from_secs(1));
    if input_len > 100_000 {
        group.measurement_time(Duration::from_secs(3));
        group.sample_size(20);
    } else {
        group.measurement_time(Duration::from_secs(2));
        group.sample_size(50);
    }
}

// --- groups ----------------------------------------------------------------

fn bench_canonicalize_fingerprint(c: &mut Criterion) {
    let tool = JsString::from(TOOL);
    for input in [
        JsonInput::new("small", SMALL_ARGS.to_string()),
        JsonInput::new("large", large_args()),
    ] {
        let mut group = c.benchmark_group(format!("canonicalize_fingerprint/{}", input.label));
        configure_for(input.text.len(), &mut group);
        group.bench_function("parse_fingerprint", |b| {
            b.iter(|| {
                let value = parse(black_box(&input.text)).unwrap();
                fingerprint_tool_call(&tool, &value).unwrap()
            })
        });
        group.bench_function("canonicalize", |b| {
            b.iter(|| canonicalize(black_box(&input.value)).unwrap())
        });
        group.bench_function("canonicalize_text", |b| {
            b.iter(|| canonicalize_lowered(black_box(&input.text)).unwrap())
        });
        group.bench_function("fingerprint_text", |b| {
            b.iter(|| fingerprint_lowered_tool_call(&tool, black_box(&input.text)).unwrap())
        });
        group.bench_function("fingerprint", |b| {
            b.iter(|| fingerprint_tool_call(&tool, black_box(&input.value)).unwrap())
        });
        group.finish();

        let mut group = c.benchmark_group(format!("baseline_serde_json/{}", input.label));
        configure_for(input.text.len(), &mut group);
        group.bench_function("parse_fingerprint", |b| {
            b.iter(|| {
                let value: serde_json::Value = serde_json::from_str(black_box(&input.text)).unwrap();
                baseline_fingerprint(TOOL, &value)
            })
        });
        group.bench_function("canonicalize", |b| {
            b.iter(|| baseline_canonicalize(black_box(&input.serde_value)))
        });
        group.bench_function("fingerprint", |b| {
            b.iter(|| baseline_fingerprint(TOOL, black_box(&input.serde_value)))
        });
        group.finish();
    }
}

/// Issue 18's native row: the crate's fingerprint of a `serde_json::Value`
/// (no text in between) beside what a Rust user would write instead,
/// `serde_jcs::to_string` + `sha2`. Needs `--features serde_json`.
#[cfg(feature = "serde_json")]
fn bench_serde_json_value(c: &mut Criterion) {
    for input in [
        JsonInput::new("small", SMALL_ARGS.to_string()),
        JsonInput::new("large", large_args()),
    ] {
        assert_eq!(
            doom_loop::interop::fingerprint_json_tool_call(TOOL, &input.serde_value).unwrap(),
            serde_jcs_fingerprint(TOOL, &input.serde_value),
            "the crate and serde_jcs disagree on {}",
            input.label
        );
        let mut group = c.benchmark_group(format!("serde_json_value/{}", input.label));
        configure_for(input.text.len(), &mut group);
        group.bench_function("doom_loop", |b| {
            b.iter(|| doom_loop::interop::fingerprint_json_tool_call(TOOL, black_box(&input.serde_value)).unwrap())
        });
        group.bench_function("serde_jcs_sha2", |b| {
            b.iter(|| serde_jcs_fingerprint(TOOL, black_box(&input.serde_value)))
        });
        group.finish();
    }
}

#[cfg(feature = "serde_json")]
fn serde_jcs_fingerprint(tool: &str, value: &serde_json::Value) -> String {
    let canonical = serde_jcs::to_string(value).unwrap();
    let digest = Sha256::digest(format!("{tool}\n{canonical}").as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        write!(hex, "{byte:02x}").unwrap();
    }
    hex
}

fn bench_record_tool_call(c: &mut Criterion) {
    let tool = JsString::from(TOOL);
    let args = parse(SMALL_ARGS).unwrap();
    let options = RecordOptions::default();
    let mut group = c.benchmark_group("record_tool_call");
    configure_for(SMALL_ARGS.len(), &mut group);

    // The same call every round: the streak climbs past `stop`, so each call
    // also builds a verdict and its message.
    let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
    let mut round = 0.0;
    group.bench_function("same_args_each_round", |b| {
        b.iter(|| {
            round += 1.0;
            monitor
                .record_tool_call(&tool, black_box(&args), round, &options)
                .unwrap()
        })
    });

    // Arguments that change every round (1,024 pre-parsed variants of the
    // same size): streak 1, no verdict.
    let variants: Vec<Value> = (0..1024)
        .map(|i| parse(&SMALL_ARGS.replace("30000", &format!("{:05}", 30000 + i))).unwrap())
        .collect();
    let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
    let mut round = 0u64;
    group.bench_function("changing_args_each_round", |b| {
        b.iter(|| {
            round += 1;
            let args = &variants[(round % 1024) as usize];
            monitor
                .record_tool_call(&tool, black_box(args), round as f64, &options)
                .unwrap()
        })
    });

    // A declared fan-out of 5 calls to one tool, the same set every round,
    // then the 5 records.
    let fan_texts: Vec<String> = (0..5).map(|i| SMALL_ARGS.replace("src/", &format!("sr{i}/"))).collect();
    let fan_bytes: usize = fan_texts.iter().map(String::len).sum();
    let fan_out: Vec<DeclaredCall> = fan_texts
        .iter()
        .map(|text| DeclaredCall {
            tool_name: tool.clone(),
            key_material: parse(text).unwrap(),
        })
        .collect();
    group.throughput(Throughput::Bytes(fan_bytes as u64));
    let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
    let mut round = 0.0;
    group.bench_function("declare_round_fanout5_then_5_records", |b| {
        b.iter(|| {
            round += 1.0;
            let warnings = monitor.declare_round(round, black_box(&fan_out));
            debug_assert!(warnings.is_empty());
            for call in &fan_out {
                black_box(
                    monitor
                        .record_tool_call(&call.tool_name, &call.key_material, round, &options)
                        .unwrap(),
                );
            }
        })
    });
    group.finish();
}

fn bench_record_assistant_text(c: &mut Criterion) {
    let text = JsString::from(long_text());
    let normalized = normalize_whitespace(&text);
    let thresholds = RepetitionThresholds::default();
    let hit = detect_text_repetition(&normalized, &thresholds).expect("the tail repeats");
    assert_eq!((hit.repeats, hit.period_tokens), (12, 11));
    let template = DoomLoopMonitor::new(ResolvedConfig::default());
    assert!(template.clone().record_assistant_text(&text).is_some());

    let mut group = c.benchmark_group("record_assistant_text");
    configure_for(text.as_bytes().len(), &mut group);
    group.bench_function("monitor_fresh", |b| {
        b.iter_batched_ref(
            || template.clone(),
            |monitor| monitor.record_assistant_text(black_box(&text)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("normalize_whitespace_only", |b| {
        b.iter(|| normalize_whitespace(black_box(&text)))
    });
    group.bench_function("detect_text_repetition_only", |b| {
        b.iter(|| detect_text_repetition(black_box(&normalized), &thresholds))
    });
    group.finish();
}

fn fixture_sizes() {
    eprintln!(
        "fixtures: small args {} B, large args {} B, text {} B",
        SMALL_ARGS.len(),
        large_args().len(),
        long_text().len()
    );
}

// --- streak bookkeeping at scale (issue 12) --------------------------------

fn restore_blob() -> String {
    let mut text = String::from(r#"{"tools":{"t":{"fingerprint":"f0","streak":2,"callStreaks":{"#);
    for i in 0..100_000 {
        if i > 0 {
            text.push(',');
        }
        write!(text, r#""f{i}":2"#).unwrap();
    }
    text.push_str("}}}}");
    text
}

/// The reference's `restore`, over std maps: entries validated, counts
/// floored, insertion order kept by a Vec beside the index.
fn baseline_restore(text: &str) -> usize {
    let blob: serde_json::Value = serde_json::from_str(text).unwrap();
    let mut tools: std::collections::HashMap<String, (f64, Vec<(String, f64)>)> = Default::default();
    for (name, entry) in blob["tools"].as_object().unwrap() {
        let mut counts = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (call, n) in entry["callStreaks"].as_object().unwrap() {
            let n = n.as_f64().unwrap();
            if n.is_finite() && n >= 1.0 && seen.insert(call.clone()) {
                counts.push((call.clone(), n.floor()));
            }
        }
        tools.insert(
            name.clone(),
            (entry["streak"].as_f64().unwrap().floor().clamp(1.0, 1e6), counts),
        );
    }
    tools.len()
}

/// The reference's per-record bookkeeping over std maps: a tool map, a set
/// per round, per-call counts, sets compared member by member.
#[derive(Default)]
struct BaselineMonitor {
    tools: std::collections::HashMap<String, BaselineEntry>,
}

#[derive(Default)]
struct BaselineEntry {
    round: u32,
    set: Vec<String>,
    streak: f64,
    prior_set: Vec<String>,
    prior_streak: f64,
    seen: std::collections::HashSet<String>,
    calls: std::collections::HashMap<String, f64>,
    prior_calls: std::collections::HashMap<String, f64>,
}

impl BaselineMonitor {
    fn record(&mut self, tool: &str, args: &serde_json::Value, round: u32) -> f64 {
        let fp = baseline_fingerprint(tool, args);
        let entry = self.tools.entry(tool.to_string()).or_default();
        if entry.round != round {
            entry.prior_set = std::mem::take(&mut entry.set);
            entry.prior_streak = entry.streak;
            entry.prior_calls = std::mem::take(&mut entry.calls);
            entry.seen.clear();
            entry.round = round;
        }
        entry.seen.insert(fp.clone());
        let set = vec![fp.clone()];
        let streak = if entry.prior_set == set {
            entry.prior_streak + 1.0
        } else {
            1.0
        };
        let call = entry.prior_calls.get(&fp).copied().unwrap_or(0.0) + 1.0;
        entry.calls.insert(fp, call);
        entry.set = set;
        entry.streak = streak;
        streak.max(call)
    }
}

fn bench_streak_bookkeeping(c: &mut Criterion) {
    let blob = restore_blob();
    let mut group = c.benchmark_group("streak_bookkeeping");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(blob.len() as u64));
    group.bench_function("restore_1mb", |b| {
        b.iter(|| {
            let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
            black_box(monitor.restore(&parse(black_box(&blob)).unwrap()));
            monitor
        })
    });
    group.bench_function("baseline_restore_1mb", |b| {
        b.iter(|| baseline_restore(black_box(&blob)))
    });
    const N: usize = 40_000;
    let args: Vec<Value> = (0..N).map(|i| parse(&format!(r#"{{"i":{i}}}"#)).unwrap()).collect();
    let serde_args: Vec<serde_json::Value> = (0..N).map(|i| serde_json::json!({ "i": i })).collect();
    let tool = JsString::from("t");
    group.throughput(Throughput::Elements(2 * N as u64));
    group.bench_function("round_40k", |b| {
        b.iter(|| {
            let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
            for round in 1..=2 {
                for a in &args {
                    black_box(
                        monitor
                            .record_tool_call(&tool, a, round as f64, &RecordOptions::default())
                            .unwrap(),
                    );
                }
            }
            monitor
        })
    });
    group.bench_function("baseline_round_40k", |b| {
        b.iter(|| {
            let mut monitor = BaselineMonitor::default();
            for round in 1..=2 {
                for a in &serde_args {
                    black_box(monitor.record("t", a, round));
                }
            }
        })
    });
    group.finish();
}

/// One call per response through the session engine, as every adapter
/// runs it (benches/support/session_round.rs), under the default option
/// and the recommended one.
fn bench_session_round(c: &mut Criterion) {
    let mut group = c.benchmark_group("session_round");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(2));
    for (label, option) in [
        ("one_call_default", Value::Bool(true)),
        ("one_call_recommended", recommended_doom_loop_option()),
    ] {
        let mut run = session_round::OneCallRun::new(&option).unwrap();
        group.bench_function(label, |b| b.iter(|| run.respond()));
    }
    group.finish();
}

fn bench_all(c: &mut Criterion) {
    fixture_sizes();
    bench_canonicalize_fingerprint(c);
    #[cfg(feature = "serde_json")]
    bench_serde_json_value(c);
    bench_record_tool_call(c);
    bench_record_assistant_text(c);
    bench_streak_bookkeeping(c);
    bench_session_round(c);
}

criterion_group!(benches, bench_all);
criterion_main!(benches);
