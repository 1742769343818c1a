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

use doom_loop::json::{parse, to_json};
use doom_loop::ladder::{resolve_ladder_action, LadderOptions};
use doom_loop::{
    resolve_doom_loop_option, DeclaredCall, DoomLoopMonitor, JsString, RecordOptions, ResolvedConfig, Value,
};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{beyond_within_restore_clamp, restore_normal_form, within_restore_clamp};
#[path = "program.rs"]
mod program;
use program::{args, blob, build_option, spend, text, tool, Cursor, Trace};

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
            detector: Value::Number(5.0),
            ..RecordOptions::default()
        },
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
    assert_eq!(again, json, "restore(get_state()) changed the state{}", trace.dump());
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
    let mut trace = Trace::from_env();

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
                            assert!(doom_loop::beyond::BeyondConfig::of(&config).cycles.is_some());
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
                            doom_loop::beyond::BeyondConfig::of(&config).ledger
                                || doom_loop::beyond::BeyondConfig::of(&config).outcomes.is_some(),
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
                if doom_loop::beyond::BeyondConfig::of(&config).budget.is_none() {
                    assert!(verdict.is_none());
                }
            }
        }
        check_state_fixed_point(&monitor, &config, &trace);
    }
});
