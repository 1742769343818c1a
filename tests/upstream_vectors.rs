//! The reference's own cross-port vector file (`vectors/upstream-vectors.json`,
//! shipped in the crate) checked with the public API alone, so the packaged
//! crate proves its canonical JSON and fingerprints by itself. The full
//! conformance runner (every corpus kind, the prose-named rejected inputs,
//! deep equality) lives in `doom-loop-trace` (`doom_loop_trace::conformance`,
//! `doomloop conformance`), a crate above this one.

use doom_loop::json::{parse, Value};
use doom_loop::{canonicalize, fingerprint_key_material, fingerprint_tool_call};

fn string<'a>(vector: &'a Value, key: &str) -> &'a doom_loop::JsString {
    vector
        .as_object()
        .and_then(|o| o.get(key))
        .and_then(Value::as_js_string)
        .unwrap_or_else(|| panic!("vector without string `{key}`"))
}

#[test]
fn upstream_fingerprint_vectors_match() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/upstream-vectors.json");
    let text = std::fs::read_to_string(&path).expect("the crate ships vectors/upstream-vectors.json");
    let doc = parse(&text).expect("JSON");
    let mut checked = 0;
    for (key, with_tool) in [("toolCallVectors", true), ("keyMaterialVectors", false)] {
        let Some(Value::Array(vectors)) = doc.as_object().and_then(|o| o.get(key)) else {
            panic!("no `{key}`");
        };
        for vector in vectors {
            let material = vector
                .as_object()
                .and_then(|o| o.get("keyMaterial"))
                .expect("keyMaterial");
            assert_eq!(
                canonicalize(material).expect("canonical").as_str(),
                string(vector, "jcs").to_string()
            );
            let fingerprint = if with_tool {
                fingerprint_tool_call(string(vector, "toolName"), material)
            } else {
                fingerprint_key_material(material)
            };
            assert_eq!(
                fingerprint.expect("fingerprint"),
                string(vector, "fingerprint").to_string()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12, "the ten tool-call and two key-material vectors");
}
