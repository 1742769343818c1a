//! The monitor as a state machine: the input is a small program.
//!
//! Layout: a few bytes build a `doomLoop` option (ladder, escalation and
//! text sections from palettes of odd values), resolved with
//! `resolve_doom_loop_option` (anything that is off or a TypeError falls
//! back to the defaults); the rest is a sequence of ops, each an op byte
//! plus operands: declare_round / record_tool_call (a few tool names, small
//! key materials including unhashable ones, odd round numbers, both record
//! options) / record_assistant_text / reset_text_streak / escalation /
//! next round / restore(get_state) in place / restore of a small blob /
//! get_state / record_tool_result / record_spend. The option may also turn
//! on the opt-in detectors beyond the reference (`outcomes`, `cycles`, `ledger`,
//! `failures`, `budget`).
//!
//! Invariants:
//! - nothing panics;
//! - the resolved configuration's JSON survives `from_value`;
//! - a record's streak is finite and >= 1, its verdict is exactly what the
//!   ladder says for that streak, and a record that fails (unhashable key
//!   material) leaves the state unchanged;
//! - after every op, restoring `get_state()` into a fresh monitor and
//!   reading the state back yields the same JSON (modulo the one known
//!   non-normal shape the reference writes, see `restore_normal_form`, and
//!   the deliberate streak clamp at 1,000,000).
#![no_main]

use std::sync::OnceLock;

use doom_loop::json::parse_lowered;
use doom_loop::json::{parse, to_json, Object};
use doom_loop::ladder::{resolve_ladder_action, LadderOptions};
use doom_loop::{
    resolve_doom_loop_option, DeclaredCall, DoomLoopMonitor, JsString, RecordOptions, ResolvedConfig, Value,
};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{beyond_within_restore_clamp, restore_normal_form, within_restore_clamp};

struct Cursor<'a> {
    data: &'a [u8],
}

impl Cursor<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A length-prefixed chunk of at most `max` bytes.
    fn chunk(&mut self, max: usize) -> &[u8] {
        let len = usize::from(self.byte()) % (max + 1);
        let len = len.min(self.data.len());
        let (chunk, rest) = self.data.split_at(len);
        self.data = rest;
        chunk
    }
}

fn num(n: f64) -> Value {
    Value::Number(n)
}

fn s(text: &str) -> Value {
    Value::String(JsString::from(text))
}

fn obj(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(Object::from_entries(
        entries.into_iter().map(|(k, v)| (JsString::from(k), v)).collect(),
    ))
}

/// Rung / threshold values: sane, odd and hostile.
fn odd_value(b: u8) -> Option<Value> {
    Some(match b % 20 {
        0 => return None,
        1 => Value::Bool(false),
        2 => Value::Bool(true),
        3 => Value::Null,
        4 => num(1.0),
        5 => num(2.0),
        6 => num(2.7),
        7 => num(3.0),
        8 => num(4.0),
        9 => num(6.0),
        10 => num(0.0),
        11 => num(-1.0),
        12 => num(0.5),
        13 => num(f64::NAN),
        14 => num(f64::INFINITY),
        15 => num(1e6),
        16 => s("3"),
        17 => Value::Array(vec![num(2.0)]),
        18 => Value::Undefined,
        _ => num(16.0),
    })
}

fn build_option(c: &mut Cursor) -> Option<Value> {
    match c.byte() % 8 {
        0 => None,
        1 => Some(Value::Bool(true)),
        2 => Some(Value::Bool(false)),
        3 => Some(Value::Null),
        4 => Some(obj(vec![])),
        _ => {
            let sections = c.byte();
            let mut entries = Vec::new();
            if sections & 1 != 0 {
                let mut ladder = Vec::new();
                for name in ["observe", "steer", "escalate", "block", "stop"] {
                    if let Some(v) = odd_value(c.byte()) {
                        ladder.push((name, v));
                    }
                }
                entries.push(("ladder", if sections & 8 != 0 { Value::Null } else { obj(ladder) }));
            }
            if sections & 2 != 0 {
                let cap = odd_value(c.byte());
                let escalation = match c.byte() % 8 {
                    0 => Value::Null,
                    1 => obj(vec![]),
                    2 => obj(vec![("model", s("m"))]),
                    3 => obj(vec![("advisor", Value::Bool(true))]),
                    4 => obj(vec![("advisor", Value::Bool(false))]),
                    5 => obj(vec![("advisor", obj(vec![("model", s("x"))])), ("model", s(""))]),
                    _ => {
                        let mut e = vec![("model", s("m"))];
                        if let Some(cap) = cap {
                            e.push(("maxEscalations", cap));
                        }
                        obj(e)
                    }
                };
                entries.push(("escalation", escalation));
            }
            if sections & 4 != 0 {
                let text = match c.byte() % 6 {
                    0 => Value::Bool(true),
                    1 => Value::Bool(false),
                    2 => Value::Null,
                    3 => obj(vec![("enabled", Value::Bool(false))]),
                    _ => {
                        let mut t = Vec::new();
                        for name in [
                            "enabled",
                            "maxPeriodTokens",
                            "minRepeats",
                            "minCoveredTokens",
                            "maxWindowTokens",
                        ] {
                            if let Some(v) = odd_value(c.byte()) {
                                t.push((name, v));
                            }
                        }
                        obj(t)
                    }
                };
                entries.push(("text", text));
            }
            if sections & 16 != 0 {
                // Opt-in detectors beyond the reference (src/detectors/beyond.rs).
                let which = c.byte();
                let flag = |b: u8| match b % 5 {
                    0 => Value::Bool(true),
                    1 => Value::Bool(false),
                    2 => Value::Null,
                    3 => obj(vec![]),
                    _ => num(1.0),
                };
                if which & 1 != 0 {
                    let b = c.byte();
                    let cycles = if b & 1 == 0 {
                        flag(b >> 1)
                    } else {
                        match odd_value(b >> 1) {
                            Some(v) => obj(vec![("maxPeriod", v)]),
                            None => obj(vec![]),
                        }
                    };
                    entries.push(("cycles", cycles));
                }
                if which & 2 != 0 {
                    entries.push(("ledger", flag(c.byte())));
                }
                if which & 4 != 0 {
                    entries.push(("failures", flag(c.byte())));
                }
                if which & 8 != 0 {
                    let mut budget = Vec::new();
                    if let Some(v) = odd_value(c.byte()) {
                        budget.push(("maxSpendWhileLooping", v));
                    }
                    if let Some(v) = odd_value(c.byte()) {
                        budget.push(("maxSpend", v));
                    }
                    if which & 16 != 0 {
                        budget.push(("unit", s("usd")));
                    }
                    entries.push(("budget", obj(budget)));
                }
                if which & 32 != 0 {
                    // Outcome-aware streaks (src/detectors/outcome.rs): a flag, or
                    // `{recent, maskDigits}` with odd values too.
                    let b = c.byte();
                    let outcomes = if b & 1 == 0 {
                        flag(b >> 1)
                    } else {
                        let mut o = Vec::new();
                        if let Some(v) = odd_value(c.byte()) {
                            o.push(("recent", v));
                        }
                        o.push(("maskDigits", flag(c.byte())));
                        obj(o)
                    };
                    entries.push(("outcomes", outcomes));
                }
            }
            Some(obj(entries))
        }
    }
}

fn spend(c: &mut Cursor) -> f64 {
    match c.byte() % 10 {
        0 => 0.0,
        1 => 1.0,
        2 => 0.5,
        3 => 100.0,
        4 => 1e6,
        5 => -5.0,
        6 => f64::NAN,
        7 => f64::INFINITY,
        8 => 1e300,
        _ => f64::MAX,
    }
}

fn tool(c: &mut Cursor) -> JsString {
    match c.byte() % 8 {
        0 => JsString::from("read"),
        1 => JsString::from("search"),
        2 => JsString::from("__proto__"),
        3 => JsString::from("0"),
        4 => JsString::from("10"),
        5 => JsString::new(),
        6 => JsString::from_code_units(&[0xD800]),
        _ => JsString::from("web_search_call"),
    }
}

const ARGS: [&str; 15] = [
    "{}",
    r#"{"a":1}"#,
    r#"{"a":1.0}"#,
    r#"{"b":2,"a":1}"#,
    r#"{"a":1,"b":2}"#,
    "[1,2]",
    r#""x""#,
    "null",
    "-0",
    r#"{"q":"\ud800","__proto__":{"n":[true]}}"#,
    "NaN",
    "[1,hole,3]",
    r#"{"z":bigint}"#,
    "[undefined,circular]",
    "deep", // replaced by 65 levels of nesting (TooDeep)
];

fn args_palette() -> &'static Vec<Value> {
    static PALETTE: OnceLock<Vec<Value>> = OnceLock::new();
    PALETTE.get_or_init(|| {
        ARGS.iter()
            .map(|a| {
                if *a == "deep" {
                    parse(&format!("{}{}", "[".repeat(65), "]".repeat(65))).unwrap()
                } else {
                    parse_lowered(a).unwrap()
                }
            })
            .collect()
    })
}

fn args(c: &mut Cursor) -> Value {
    let b = c.byte();
    let palette = args_palette();
    match usize::from(b) % (palette.len() + 1) {
        i if i < palette.len() => palette[i].clone(),
        _ => std::str::from_utf8(c.chunk(24))
            .ok()
            .and_then(|t| parse_lowered(t).ok())
            .unwrap_or(Value::Null),
    }
}

fn round(c: &mut Cursor, current: f64) -> f64 {
    match c.byte() % 12 {
        0..=5 => current,
        6 => current + 1.0,
        7 => current - 1.0,
        8 => f64::NAN,
        9 => 0.5,
        10 => -0.0,
        _ => f64::INFINITY,
    }
}

fn record_options(c: &mut Cursor) -> RecordOptions {
    match c.byte() % 4 {
        0 | 1 => RecordOptions::default(),
        2 => RecordOptions::server_tool(),
        _ => RecordOptions {
            allow_block: true,
            detector: Value::Number(5.0),
        },
    }
}

fn text(c: &mut Cursor) -> JsString {
    match c.byte() % 6 {
        0 => JsString::from("I am stuck. I am stuck. I am stuck. I am stuck. I am stuck."),
        1 => JsString::from("ok"),
        2 => JsString::from(" \u{FEFF}\t"),
        3 => JsString::from("a b a b a b a b a b a b a b a b"),
        4 => {
            let n = usize::from(c.byte() % 32);
            JsString::from("x ".repeat(n))
        }
        _ => {
            let chunk = c.chunk(48);
            let raw: Vec<u16> = chunk
                .chunks_exact(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .collect();
            JsString::from_code_units(&raw)
        }
    }
}

fn blob(c: &mut Cursor) -> Value {
    match c.byte() % 6 {
        0 => Value::Array(vec![]),
        1 => obj(vec![]),
        2 => obj(vec![
            (
                "tools",
                obj(vec![(
                    "read",
                    obj(vec![
                        ("fingerprint", s("x")),
                        ("streak", num(5.0)),
                        ("roundFingerprints", Value::Array(vec![s("b"), s("a"), s("b")])),
                        ("callStreaks", obj(vec![("a", num(2.0)), ("zz", num(0.5))])),
                    ]),
                )]),
            ),
            ("text", obj(vec![("fingerprint", s("t")), ("streak", num(-2.5))])),
            ("escalationsUsed", num(1.7)),
        ]),
        3 => obj(vec![(
            "tools",
            Value::Array(vec![obj(vec![("fingerprint", s("f")), ("streak", num(1e9))])]),
        )]),
        5 => obj(vec![
            ("tools", obj(vec![])),
            (
                "beyond",
                obj(vec![
                    (
                        "cycles",
                        obj(vec![(
                            "read",
                            obj(vec![
                                ("history", Value::Array(["a", "b", "a", "b", "a"].map(s).to_vec())),
                                ("runs", Value::Array(vec![num(3.0), num(-1.0), num(2e6)])),
                            ]),
                        )]),
                    ),
                    (
                        "ledger",
                        obj(vec![(
                            "read",
                            obj(vec![
                                ("outcome", s("o")),
                                ("input", s("x")),
                                ("streak", num(2.5)),
                                ("inputsVaried", num(1.0)),
                            ]),
                        )]),
                    ),
                    ("failures", obj(vec![("read", num(4.0)), ("search", num(0.0))])),
                    ("spent", num(10.0)),
                    ("spentWhileLooping", num(20.0)),
                ]),
            ),
        ]),
        _ => std::str::from_utf8(c.chunk(64))
            .ok()
            .and_then(|t| parse_lowered(t).ok())
            .unwrap_or(Value::Null),
    }
}

fn check_state_fixed_point(monitor: &DoomLoopMonitor, config: &ResolvedConfig, trace: &Trace) {
    let state = monitor.get_state();
    if !within_restore_clamp(&state) || !beyond_within_restore_clamp(&state) {
        return;
    }
    let json = to_json(&restore_normal_form(&state));
    let mut fresh = DoomLoopMonitor::new(config.clone());
    assert!(fresh.restore(&state).is_empty());
    let again = to_json(&fresh.get_state());
    assert_eq!(
        again,
        json,
        "restore(get_state()) changed the state after ops:\n{}",
        trace.lines.join("\n")
    );
}

struct Trace {
    on: bool,
    lines: Vec<String>,
}

impl Trace {
    fn push(&mut self, line: impl FnOnce() -> String) {
        if self.on {
            self.lines.push(line());
        }
    }
}

fn tracing() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("DOOM_LOOP_FUZZ_TRACE").is_some())
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor { data };
    let option = build_option(&mut c);
    let resolution = resolve_doom_loop_option(option.as_ref());
    let config = match resolution.result {
        Ok(Some(config)) => {
            let json = config.to_json();
            let reread =
                ResolvedConfig::from_value(&parse(&json).expect("config JSON parses")).expect("config JSON reads back");
            assert_eq!(reread.to_json(), json, "config JSON does not survive from_value");
            config
        }
        _ => ResolvedConfig::default(),
    };
    let mut monitor = DoomLoopMonitor::new(config.clone());
    let mut current = 1.0f64;
    let mut last_fingerprint = JsString::new();
    // The op trace in panic messages costs time, so it is only kept when
    // reproducing: DOOM_LOOP_FUZZ_TRACE=1 cargo fuzz run monitor <input>.
    let mut trace = Trace {
        on: tracing(),
        lines: Vec::new(),
    };

    for _ in 0..64 {
        if c.is_empty() {
            break;
        }
        match c.byte() % 12 {
            0 => {
                let r = round(&mut c, current);
                let n = c.byte() % 5;
                let calls: Vec<DeclaredCall> = (0..n)
                    .map(|_| DeclaredCall {
                        tool_name: tool(&mut c),
                        key_material: args(&mut c),
                    })
                    .collect();
                trace.push(|| {
                    format!(
                        "declare_round({r}, {:?})",
                        calls
                            .iter()
                            .map(|d| (d.tool_name.to_string(), to_json(&d.key_material)))
                            .collect::<Vec<_>>()
                    )
                });
                let warnings = monitor.declare_round(r, &calls);
                let unhashable = calls
                    .iter()
                    .filter(|d| doom_loop::canonicalize(&d.key_material).is_err())
                    .count();
                assert_eq!(warnings.len(), unhashable);
            }
            1 | 2 => {
                let name = tool(&mut c);
                let key = args(&mut c);
                let r = round(&mut c, current);
                let options = record_options(&mut c);
                trace.push(|| {
                    format!(
                        "record_tool_call({name:?}, {}, {r}, allow_block={})",
                        to_json(&key),
                        options.allow_block
                    )
                });
                let before = doom_loop::canonicalize(&key)
                    .is_err()
                    .then(|| to_json(&monitor.get_state()));
                let allow_escalate = monitor.can_escalate();
                match monitor.record_tool_call(&name, &key, r, &options) {
                    Ok(record) => {
                        assert!(
                            record.streak >= 1.0 && record.streak.is_finite(),
                            "streak {}",
                            record.streak
                        );
                        assert_eq!(record.fingerprint.as_bytes().len(), 64);
                        let expected = resolve_ladder_action(
                            &config.ladder,
                            record.streak,
                            LadderOptions {
                                allow_block: options.allow_block,
                                allow_escalate,
                            },
                        );
                        last_fingerprint = record.fingerprint.clone();
                        let cycle = record
                            .verdict
                            .as_ref()
                            .is_some_and(|v| v.opt_in_detector == Some(doom_loop::beyond::TOOL_CYCLE));
                        if cycle {
                            // The opt-in cycle verdict only wins when stronger.
                            let v = record.verdict.as_ref().unwrap();
                            assert!(config.beyond.cycles.is_some());
                            assert_eq!(v.detector, options.detector);
                            assert!(
                                expected.is_none_or(|e| v.action > e),
                                "cycle verdict {:?} over {expected:?}",
                                v.action
                            );
                        } else {
                            assert_eq!(record.verdict.as_ref().map(|v| v.action), expected);
                            if let Some(v) = &record.verdict {
                                assert_eq!(v.streak, record.streak);
                                assert_eq!(v.fingerprint, record.fingerprint);
                                assert_eq!(v.detector, options.detector);
                            }
                        }
                    }
                    Err(_) => {
                        assert_eq!(
                            Some(to_json(&monitor.get_state())),
                            before,
                            "failed record changed the state"
                        );
                    }
                }
            }
            3 => {
                let t = text(&mut c);
                trace.push(|| format!("record_assistant_text({t:?})"));
                if let Some(v) = monitor.record_assistant_text(&t) {
                    assert!(v.streak >= 1.0, "text verdict streak {}", v.streak);
                }
            }
            4 => {
                trace.push(|| "reset_text_streak()".into());
                monitor.reset_text_streak();
            }
            5 => {
                trace.push(|| "consume_escalation()".into());
                if c.byte() & 1 == 0 || monitor.can_escalate() {
                    monitor.consume_escalation();
                }
            }
            6 => {
                current += 1.0;
                trace.push(|| format!("next round -> {current}"));
            }
            7 => {
                trace.push(|| "restore(get_state()) in place".into());
                let state = monitor.get_state();
                assert!(monitor.restore(&state).is_empty());
            }
            8 => {
                let b = blob(&mut c);
                trace.push(|| format!("restore({})", to_json(&b)));
                let warnings = monitor.restore(&b);
                assert_eq!(warnings.is_empty(), matches!(b, Value::Object(_)));
            }
            9 => {
                trace.push(|| "get_state()".into());
                let _ = monitor.get_state();
            }
            10 => {
                let name = tool(&mut c);
                let input = match c.byte() % 3 {
                    0 => last_fingerprint.clone(),
                    1 => JsString::from("x"),
                    _ => JsString::new(),
                };
                let b = c.byte();
                let outcome = (b & 1 == 1).then(|| args(&mut c));
                let failed = b & 2 != 0;
                let r = round(&mut c, current);
                trace.push(|| {
                    format!(
                        "record_tool_result({name:?}, {input:?}, {:?}, failed={failed}, {r})",
                        outcome.as_ref().map(to_json)
                    )
                });
                let hashable = outcome.as_ref().is_none_or(|o| doom_loop::canonicalize(o).is_ok());
                let before = (!hashable).then(|| to_json(&monitor.get_state()));
                match monitor.record_tool_result(&name, &input, outcome.as_ref(), failed, r) {
                    Ok(verdict) => {
                        if config.beyond.is_off() {
                            assert!(verdict.is_none(), "a beyond verdict with beyond off");
                        }
                        if let Some(v) = verdict {
                            assert!(
                                v.streak >= 1.0 && v.streak.is_finite(),
                                "result verdict streak {}",
                                v.streak
                            );
                        }
                    }
                    Err(_) => {
                        // Only the ledger and outcome-aware streaks fingerprint the outcome.
                        assert!(
                            config.beyond.ledger || config.beyond.outcomes.is_some(),
                            "record_tool_result failed with neither the ledger nor outcomes on"
                        );
                        assert_eq!(
                            Some(to_json(&monitor.get_state())),
                            before,
                            "failed result changed the state"
                        );
                    }
                }
            }
            _ => {
                let amount = spend(&mut c);
                trace.push(|| format!("record_spend({amount})"));
                let verdict = monitor.record_spend(amount);
                if config.beyond.budget.is_none() {
                    assert!(verdict.is_none());
                }
            }
        }
        check_state_fixed_point(&monitor, &config, &trace);
    }
});
