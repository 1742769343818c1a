//! Helpers shared by the core's integration tests (`mod support;` in each).

use doom_loop::json::Value;

/// A monitor state without the opt-in detectors' `beyond` key: the part a
/// monitor that reads only the reference's keys restores and persists.
pub fn without_beyond(state: &Value) -> Value {
    let Value::Object(o) = state else {
        unreachable!("states are objects")
    };
    Value::Object(
        o.iter()
            .filter(|(k, _)| *k != "beyond")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}
