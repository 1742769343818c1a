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

/// Issue 12 (`restore_dos.mjs`): per-call streaks were a linear-scan list, so
/// restoring a blob with 100k `callStreaks` keys was quadratic (30.8 s).
/// Keyed now; the persisted order must stay the blob's insertion order.
#[test]
fn restore_dos_call_streaks_keyed_in_insertion_order() {
    let keys: Vec<String> = (0..100_000).map(|i| format!("f{}", (i * 7919) % 100_000)).collect();
    let counts: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!(r#""{k}":{}"#, 2 + i % 3))
        .collect();
    let blob = format!(
        r#"{{"tools":{{"t":{{"fingerprint":"f0","streak":2,"callStreaks":{{{}}}}}}}}}"#,
        counts.join(",")
    );
    let mut monitor = DoomLoopMonitor::new(doom_loop::ResolvedConfig::default());
    assert!(monitor.restore(&parse(&blob).unwrap()).is_empty());
    assert_eq!(to_json(&monitor.get_state()), blob);
}

/// Issue 12 (`quadratic.mjs`): the round's seen set, the declared sets and
/// the round-set comparison were linear per call. Keyed and cached now;
/// the streaks, duplicates, verdicts and persisted state of a sequence of
/// declared rounds that grow, repeat and get a non-member must stay the
/// reference's (recorded from it).
#[test]
fn quadratic_declared_rounds_keep_reference_streaks() {
    use doom_loop::{DeclaredCall, JsString, RecordOptions};
    let tool = JsString::from("t");
    let material = |k: &str| parse(&format!(r#"{{"k":"{k}"}}"#)).unwrap();
    let mut monitor = DoomLoopMonitor::new(doom_loop::ResolvedConfig::default());
    let script: [(f64, &[&str], &[&str]); 5] = [
        (1.0, &["a", "b"], &["a", "b"]),
        (2.0, &["a", "b"], &["b", "a", "a"]),
        (3.0, &["a", "b", "c"], &["a", "c"]),
        (4.0, &["a", "b", "c"], &["c", "b", "a"]),
        (5.0, &["a", "b", "c"], &["d"]),
    ];
    let mut out = Vec::new();
    for (round, declared, recorded) in script {
        let calls: Vec<DeclaredCall> = declared
            .iter()
            .map(|k| DeclaredCall {
                tool_name: tool.clone(),
                key_material: material(k),
            })
            .collect();
        assert!(monitor.declare_round(round, &calls).is_empty());
        for k in recorded {
            let r = monitor
                .record_tool_call(&tool, &material(k), round, &RecordOptions::default())
                .unwrap();
            let action = r
                .verdict
                .map(|v| &v.action.as_str()[..1])
                .unwrap_or_default()
                .to_string();
            out.push(format!(
                "{round}{k}:{}{}{action}",
                r.streak,
                if r.duplicate_in_round { "d" } else { "" }
            ));
        }
    }
    assert_eq!(
        out.join(" "),
        "1a:1 1b:1 2b:2o 2a:2o 2a:2do 3a:3b 3c:1 4c:2o 4b:2o 4a:4b 5d:1"
    );
    assert_eq!(
        to_json(&monitor.get_state()),
        r#"{"tools":{"t":{"fingerprint":"cc6b1b082011b6446f7137fe185380c202ff4f64c0a57d6e83b3c56775f4a95c","streak":3,"roundFingerprints":["49f49368e752145ad5fe95c9c4f2dbbcdb433b7e193e278cae90b2781c37bca6","cc6b1b082011b6446f7137fe185380c202ff4f64c0a57d6e83b3c56775f4a95c","ef6603958b9fdbebd48e0b5d20937bd26b53b832b7a79aa799f5d808e3e2d779"],"callStreaks":{"12155fd208f7aefd8b2ec770a4caaacda633ad58b9d4c7c87c4fa9c9e4899a1a":1}}}}"#
    );
}
