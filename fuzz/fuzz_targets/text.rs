//! The text detectors on arbitrary UTF-16 (lone surrogates included).
//!
//! Input layout: 4 selector bytes pick the thresholds (NaN, ±0, negative,
//! fractional, huge, ±Infinity among them), 1 byte picks a split point, the
//! rest is the text as little-endian u16 code units.
//!
//! Invariants:
//! - `JsString::from_code_units` keeps the code units (`code_units`,
//!   `utf16_len`, `slice_utf16`, `tail_utf16`, `cmp_utf16`, and the JSON
//!   string writer/reader all agree with plain code-unit arithmetic);
//! - `normalize_whitespace` equals `text.replace(/\s+/g, ' ').trim()`
//!   computed naively on code units, and is idempotent;
//! - `detect_text_repetition` equals a naive transcription of the
//!   reference's `detectTextRepetition` (for texts short enough for the
//!   quadratic naive version), and its result is self-consistent;
//! - `record_assistant_text` never panics, with the default thresholds and
//!   with the fuzzed ones; a second identical non-blank text always gives a
//!   verdict at the default ladder (cross-turn streak 2 reaches observe).
#![no_main]

use doom_loop::config::TextConfig;
use doom_loop::json::{parse, to_json};
use doom_loop::text::naive::{detect as naive_detect, normalize as naive_normalize};
use doom_loop::text::{detect_text_repetition, normalize_whitespace, RepetitionThresholds};
use doom_loop::{DoomLoopMonitor, JsString, ResolvedConfig, Value};
use libfuzzer_sys::fuzz_target;

const PALETTE: [f64; 24] = [
    f64::NAN,
    0.0,
    -0.0,
    -1.0,
    -0.5,
    0.5,
    1.0,
    1.5,
    2.0,
    2.9,
    3.0,
    4.0,
    5.0,
    12.0,
    16.0,
    20.0,
    400.0,
    1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -3.0,
    -1e300,
    0.01,
    f64::MAX,
];

fn pick(b: u8, default: f64) -> f64 {
    // Half the time the reference's default, so the interesting texts are
    // still examined with sane thresholds.
    if b & 1 == 0 {
        default
    } else {
        PALETTE[usize::from(b >> 1) % PALETTE.len()]
    }
}

/// Above this many code units the naive detector (quadratic) is skipped.
const NAIVE_LIMIT: usize = 4096;

fn units(s: &JsString) -> Vec<u16> {
    s.code_units().collect()
}

fn text_monitor(t: &RepetitionThresholds) -> DoomLoopMonitor {
    DoomLoopMonitor::new(ResolvedConfig {
        text: TextConfig {
            enabled: Value::Bool(true),
            max_period_tokens: Value::Number(t.max_period_tokens),
            min_repeats: Value::Number(t.min_repeats),
            min_covered_tokens: Value::Number(t.min_covered_tokens),
            max_window_tokens: Value::Number(t.max_window_tokens),
        },
        ..ResolvedConfig::default()
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let defaults = RepetitionThresholds::default();
    let t = RepetitionThresholds {
        max_period_tokens: pick(data[0], defaults.max_period_tokens),
        min_repeats: pick(data[1], defaults.min_repeats),
        min_covered_tokens: pick(data[2], defaults.min_covered_tokens),
        max_window_tokens: pick(data[3], defaults.max_window_tokens),
    };
    let split = usize::from(data[4]);
    let raw: Vec<u16> = data[5..]
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    let text = JsString::from_code_units(&raw);

    // ---- JsString: UTF-16 semantics over WTF-8 storage ----
    assert_eq!(units(&text), raw, "code units do not round-trip");
    assert_eq!(text.utf16_len(), raw.len());
    let cut = split.min(raw.len());
    let (head, tail) = raw.split_at(cut);
    let (h, tl) = (JsString::from_code_units(head), JsString::from_code_units(tail));
    assert_eq!(
        h.cmp_utf16(&tl),
        head.cmp(tail),
        "cmp_utf16 on {head:04X?} vs {tail:04X?}"
    );
    assert_eq!(
        units(&text.slice_utf16(cut, cut + 7)),
        raw[cut..(cut + 7).min(raw.len())].to_vec()
    );
    assert_eq!(units(&text.tail_utf16(split)), raw[raw.len() - cut..].to_vec());
    let mut joined = h.clone();
    joined.push_js(&tl);
    assert_eq!(joined, text, "push_js does not rejoin a split pair");
    let json = to_json(&Value::String(text.clone()));
    assert_eq!(
        parse(&json).ok().as_ref().and_then(Value::as_js_string),
        Some(&text),
        "JSON string round trip"
    );

    // ---- normalisation ----
    let normalized = normalize_whitespace(&text);
    assert_eq!(
        units(&normalized),
        naive_normalize(&raw),
        "normalize_whitespace on {raw:04X?}"
    );
    assert_eq!(
        normalize_whitespace(&normalized),
        normalized,
        "normalize_whitespace not idempotent"
    );

    // ---- detection ----
    for thresholds in [t, defaults] {
        let got = detect_text_repetition(&text, &thresholds);
        if let Some(hit) = &got {
            assert!(hit.repeats >= 1 && hit.period_tokens >= 1);
            assert_eq!(hit.covered_tokens, hit.repeats * hit.period_tokens);
            // The sample is whole tokens joined by single spaces.
            assert_eq!(normalize_whitespace(&hit.sample), hit.sample);
        }
        if raw.len() <= NAIVE_LIMIT {
            let got = got.map(|r| (r.repeats, r.period_tokens, r.covered_tokens, units(&r.sample)));
            assert_eq!(
                got,
                naive_detect(&raw, &thresholds),
                "detect on {raw:04X?} with {thresholds:?}"
            );
        }
    }

    // ---- the monitor's text path ----
    for mut monitor in [DoomLoopMonitor::new(ResolvedConfig::default()), text_monitor(&t)] {
        let first = monitor.record_assistant_text(&text);
        let second = monitor.record_assistant_text(&text);
        if normalized.is_empty() {
            assert!(first.is_none() && second.is_none());
            assert_eq!(to_json(&monitor.get_state()), r#"{"tools":{}}"#);
        } else {
            let v = second.expect("second identical text reaches the observe rung");
            assert!(v.streak >= 2.0, "verdict streak {}", v.streak);
            let state = monitor.get_state();
            let streak = state
                .as_object()
                .and_then(|s| s.get("text"))
                .and_then(|t| t.as_object())
                .and_then(|t| t.get("streak"))
                .and_then(Value::as_f64);
            assert_eq!(streak, Some(2.0));
        }
        monitor.reset_text_streak();
        assert_eq!(to_json(&monitor.get_state()), r#"{"tools":{}}"#);
    }
});
