//! One test per fixed bug, named after it.

use doom_loop::json::{parse, to_json};
use doom_loop::{resolve_doom_loop_option, DoomLoopMonitor};

/// Found by the `monitor` fuzz target: two `record_spend(f64::MAX)` made the
/// budget's sum +Infinity, which JSON writes as `null`, so a resumed run
/// forgot the spend that had stopped the live one.
#[test]
fn budget_spend_overflow_survives_restore() {
    let option = parse(r#"{"budget":{"maxSpend":1e308}}"#).unwrap();
    let config = resolve_doom_loop_option(Some(&option)).result.unwrap().unwrap();
    let mut live = DoomLoopMonitor::new(config.clone());
    live.record_spend(f64::MAX);
    live.record_spend(f64::MAX);
    let state = to_json(&live.get_state());
    assert!(!state.contains("null"), "{state}");
    let mut resumed = DoomLoopMonitor::new(config);
    resumed.restore(&parse(&state).unwrap());
    assert_eq!(to_json(&resumed.get_state()), state);
    assert!(live.record_spend(1.0).is_some());
    assert!(resumed.record_spend(1.0).is_some());
}
