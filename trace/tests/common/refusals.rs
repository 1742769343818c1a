//! What the replay tests of effect-aware streaks compare: where a replay
//! refused a call or halted the run (shared by `effects.rs` and
//! `recorded_effects.rs`, which each include this file as a module).

use doom_loop_trace::replay::Timeline;

/// `(round, action)` of every verdict that refuses a call or halts the run.
pub fn refusals(timeline: &Timeline) -> Vec<(usize, &'static str)> {
    timeline
        .rounds
        .iter()
        .flat_map(|r| r.calls.iter().map(move |c| (r.round, c)))
        .filter_map(|(round, c)| c.verdict.as_ref().map(|v| (round, v.action.as_str())))
        .filter(|(_, action)| matches!(*action, "block" | "stop"))
        .collect()
}
