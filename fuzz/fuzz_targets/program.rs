//! The program-shaped input of the `monitor` and `session` targets
//! (included with `#[path]`; not a target itself): a cursor over the fuzzer's
//! bytes and the palettes both draw from — a `doomLoop` option built from
//! odd values, tool names, key materials (unhashable ones too), texts,
//! spends and persisted-state blobs.
#![allow(dead_code)]

use std::sync::OnceLock;

use doom_loop::json::{parse, parse_lowered, Object};
use doom_loop::{JsString, Value};

pub struct Cursor<'a> {
    pub data: &'a [u8],
}

impl Cursor<'_> {
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A length-prefixed chunk of at most `max` bytes.
    pub fn chunk(&mut self, max: usize) -> &[u8] {
        let len = usize::from(self.byte()) % (max + 1);
        let len = len.min(self.data.len());
        let (chunk, rest) = self.data.split_at(len);
        self.data = rest;
        chunk
    }
}

pub fn num(n: f64) -> Value {
    Value::Number(n)
}

pub fn s(text: &str) -> Value {
    Value::String(JsString::from(text))
}

pub fn obj(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(Object::from_entries(
        entries.into_iter().map(|(k, v)| (JsString::from(k), v)).collect(),
    ))
}

/// Rung / threshold values: sane, odd and hostile.
pub fn odd_value(b: u8) -> Option<Value> {
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

pub fn build_option(c: &mut Cursor) -> Option<Value> {
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

pub fn spend(c: &mut Cursor) -> f64 {
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

pub fn tool(c: &mut Cursor) -> JsString {
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

pub const ARGS: [&str; 15] = [
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

pub fn args_palette() -> &'static Vec<Value> {
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

pub fn args(c: &mut Cursor) -> Value {
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

pub fn text(c: &mut Cursor) -> JsString {
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

pub fn blob(c: &mut Cursor) -> Value {
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

/// The ops a program ran, for panic messages. Kept only when reproducing
/// (`DOOM_LOOP_FUZZ_TRACE=1 cargo fuzz run <target> <input>`): building it
/// costs time on every input.
pub struct Trace {
    on: bool,
    lines: Vec<String>,
}

impl Trace {
    /// On when `DOOM_LOOP_FUZZ_TRACE` is set.
    pub fn from_env() -> Trace {
        static ON: OnceLock<bool> = OnceLock::new();
        let on = *ON.get_or_init(|| std::env::var_os("DOOM_LOOP_FUZZ_TRACE").is_some());
        Trace { on, lines: Vec::new() }
    }

    pub fn push(&mut self, line: impl FnOnce() -> String) {
        if self.on {
            self.lines.push(line());
        }
    }

    /// " after:" and the ops, one per line (nothing when off).
    pub fn dump(&self) -> String {
        if self.on {
            format!(" after:\n{}", self.lines.join("\n"))
        } else {
            String::new()
        }
    }
}
