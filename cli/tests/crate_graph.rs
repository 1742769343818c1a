//! The workspace's crates import one way: each may depend only on crates
//! below it, so a concept cannot reach back up (the importers never see a
//! hook, the guard never sees the command line). The order, lowest first:
//!
//! - `doom-loop`: the detector every agent embeds;
//! - `doom-loop-trace`: reading logs and measuring them (importers, replay,
//!   eval, conformance) and the I/O host;
//! - `doom-loop-guard` (the coding-agent hooks) and `doom-loop-gateway`
//!   (the LLM proxy's engine), side by side, neither importing the other;
//! - `doom-loop-cli`: the `doomloop` command;
//! - the bindings (`doom-loop-wasm`, `doom-loop-python`), on top.
//!
//! Cargo itself rejects a circle of normal dependencies, not a
//! dev-dependency reaching up, nor a crate growing an edge across the
//! order; this test reads every manifest's dependency tables (normal, dev,
//! build, per target) for both. A new crate must be given its place here.
//! (Module order inside a crate: `tests/module_graph.rs` for the core,
//! `trace/tests/module_graph.rs` for the trace crate.)

use std::collections::BTreeMap;
use std::path::Path;

/// Each crate's manifest (relative to the workspace root) and its rank.
const CRATES: [(&str, &str, u8); 7] = [
    ("doom-loop", "Cargo.toml", 0),
    ("doom-loop-trace", "trace/Cargo.toml", 1),
    ("doom-loop-guard", "guard/Cargo.toml", 2),
    ("doom-loop-gateway", "gateway/Cargo.toml", 2),
    ("doom-loop-cli", "cli/Cargo.toml", 3),
    ("doom-loop-wasm", "wasm/Cargo.toml", 4),
    ("doom-loop-python", "python/Cargo.toml", 4),
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The workspace crates a manifest depends on, of any kind: the keys of
/// every `[…dependencies]` table that name one of [`CRATES`].
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.trim_end_matches(']').ends_with("dependencies");
            continue;
        }
        let Some((key, _)) = line.split_once('=') else { continue };
        let key = key.trim();
        if in_dependencies && CRATES.iter().any(|(name, _, _)| *name == key) {
            found.push(key.to_string());
        }
    }
    found
}

fn graph() -> BTreeMap<&'static str, Vec<String>> {
    CRATES
        .iter()
        .map(|(name, manifest, _)| {
            let text = std::fs::read_to_string(root().join(manifest)).expect("readable manifest");
            assert!(text.contains(&format!("name = \"{name}\"")), "{manifest} is not {name}");
            (*name, workspace_dependencies(&text))
        })
        .collect()
}

fn rank(name: &str) -> u8 {
    CRATES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|c| c.2)
        .expect("a known crate")
}

#[test]
fn crates_depend_only_on_crates_below_them() {
    for (name, dependencies) in graph() {
        for dependency in dependencies {
            assert!(
                rank(&dependency) < rank(name),
                "{name} depends on {dependency}, which is not below it: {CRATES:?}"
            );
        }
    }
}

#[test]
fn the_checker_sees_the_known_edges() {
    let graph = graph();
    for (from, to) in [
        ("doom-loop-trace", "doom-loop"),
        ("doom-loop-guard", "doom-loop-trace"),
        ("doom-loop-gateway", "doom-loop-trace"),
        ("doom-loop-cli", "doom-loop-guard"),
        ("doom-loop-cli", "doom-loop-trace"),
        ("doom-loop-wasm", "doom-loop-cli"),
    ] {
        assert!(
            graph[from].iter().any(|d| d == to),
            "{from} -> {to} not seen: {graph:?}"
        );
    }
    assert_eq!(
        workspace_dependencies("[package]\nname = \"x\"\n[dev-dependencies]\ndoom-loop-cli = { path = \"../cli\" }\n"),
        ["doom-loop-cli"],
        "a dev-dependency counts"
    );
}

#[test]
fn every_workspace_member_has_its_place() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("root manifest");
    let members = manifest
        .lines()
        .find_map(|line| line.strip_prefix("members = "))
        .expect("a members line");
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        let member = member.trim().trim_matches('"');
        let path = if member == "." {
            "Cargo.toml".to_string()
        } else {
            format!("{member}/Cargo.toml")
        };
        assert!(
            CRATES.iter().any(|(_, manifest, _)| *manifest == path),
            "workspace member {member} has no rank in this test"
        );
    }
}
