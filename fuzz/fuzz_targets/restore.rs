//! `DoomLoopMonitor::restore` on arbitrary (lowered) JSON.
//!
//! Invariants:
//! - `restore` never panics and never fails, whatever the blob;
//! - `get_state` after a restore is a fixed point: restoring it into a fresh
//!   monitor and reading the state back gives the same JSON, both from the
//!   value and from its JSON text (how a caller persists it);
//! - all of this under the default configuration (where a `beyond` key is
//!   ignored, as the reference ignores it) and under one with every opt-in
//!   detector on (where `beyond` state is restored and validated);
//! - the monitor stays usable: recording a call for a restored tool, and
//!   a text, afterwards does not panic, the streak is at least 1, and the
//!   state is still a fixed point of restore (below the deliberate
//!   1,000,000 streak clamp, and modulo the shape described in common.rs).
#![no_main]

use doom_loop::beyond::{BeyondConfig, BudgetConfig};
use doom_loop::json::parse_lowered;
use doom_loop::json::{parse, to_json};
use doom_loop::novelty::NoveltyConfig;
use doom_loop::outcome::OutcomeConfig;
use doom_loop::repetition::RepetitionConfig;
use doom_loop::{DoomLoopMonitor, JsString, ResolvedConfig, Value};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{beyond_within_restore_clamp, restore_normal_form, within_restore_clamp};

/// The default configuration (the reference's behaviour: `beyond` state is
/// ignored) and one with every opt-in detector on (it is restored too).
fn configs() -> [ResolvedConfig; 2] {
    let beyond = BeyondConfig {
        cycles: Some(4),
        ledger: true,
        failures: true,
        budget: Some(BudgetConfig {
            max_spend_while_looping: Some(1000.0),
            max_spend: None,
            unit: JsString::from("tokens"),
        }),
        outcomes: Some(OutcomeConfig::default()),
        novelty: Some(NoveltyConfig::default()),
        repetition: Some(RepetitionConfig::default()),
        effects: true,
    };
    [
        ResolvedConfig::default(),
        ResolvedConfig {
            beyond: beyond.into(),
            ..ResolvedConfig::default()
        },
    ]
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(blob) = parse_lowered(text) else {
        return;
    };
    for config in configs() {
        check(&blob, text, config);
    }
});

fn check(blob: &Value, text: &str, config: ResolvedConfig) {
    let mut monitor = DoomLoopMonitor::new(config.clone());
    let warnings = monitor.restore(blob);
    assert_eq!(
        warnings.is_empty(),
        matches!(blob, Value::Object(_)),
        "warning iff not an object"
    );
    let state = monitor.get_state();
    let state_json = to_json(&state);
    if config.beyond.is_off() {
        assert!(
            state.as_object().unwrap().get("beyond").is_none(),
            "beyond state with beyond off"
        );
    }

    let mut fresh = DoomLoopMonitor::new(config.clone());
    assert!(fresh.restore(&state).is_empty());
    assert_eq!(
        to_json(&fresh.get_state()),
        state_json,
        "restore(get_state()) is not a fixed point; blob {text:?}"
    );

    let persisted = parse(&state_json).expect("get_state JSON re-parses");
    let mut resumed = DoomLoopMonitor::new(config.clone());
    assert!(resumed.restore(&persisted).is_empty());
    assert_eq!(
        to_json(&resumed.get_state()),
        state_json,
        "state does not survive JSON; blob {text:?}"
    );

    // Keep going after the restore: a restored tool (if any) and a new one.
    let tools: Vec<JsString> = match state.as_object().and_then(|s| s.get("tools")) {
        Some(Value::Object(t)) => t.iter().take(2).map(|(name, _)| name.clone()).collect(),
        _ => Vec::new(),
    };
    let args = Value::Object(Default::default());
    for (round, tool) in tools.iter().chain([JsString::from("fresh_tool")].iter()).enumerate() {
        for r in [round as f64 + 1.0, round as f64 + 2.0] {
            let record = monitor
                .record_tool_call(tool, &args, r, &Default::default())
                .expect("{} always fingerprints");
            assert!(
                record.streak >= 1.0 && record.streak.is_finite(),
                "streak {}",
                record.streak
            );
            monitor
                .record_tool_result(tool, &record.fingerprint, Some(&args), r == 2.0, r)
                .expect("{} always fingerprints");
        }
    }
    let _ = monitor.record_assistant_text(&JsString::from("stuck stuck stuck stuck"));
    let _ = monitor.record_spend(10.0);
    let _ = monitor.can_escalate();
    let after = monitor.get_state();
    if within_restore_clamp(&after) && beyond_within_restore_clamp(&after) {
        let mut check = DoomLoopMonitor::new(config);
        check.restore(&parse(&to_json(&after)).expect("state re-parses"));
        assert_eq!(
            to_json(&check.get_state()),
            to_json(&restore_normal_form(&after)),
            "state after recording is not a fixed point; blob {text:?}"
        );
    }
}
