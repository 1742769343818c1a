//! The trace crate's modules import downward only: no module of
//! `trace/src/` (a folder such as `import/` is one node, its submodules
//! counting as it) reaches, through `crate::` paths, a module that reaches
//! back to it. The transcript types sit below both the importers and the
//! replay, so the two cannot form a circle. (The core crate's
//! `tests/module_graph.rs` checks the same for `src/`, at module and folder
//! grain; `cli/tests/crate_graph.rs` the order of the crates: nothing here
//! imports the guard or the command, which stand on this crate.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// `crate::name` references outside comments, per top-level module of
/// `src/` (`lib.rs` and the binaries, which sit above everything, left out).
fn edges(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("readable src dir");
            pending.extend(entries.map(|e| e.expect("dir entry").path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(src).expect("under src");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|c| c.trim_end_matches(".rs").to_string())
            .expect("module name");
        if module == "lib" || module == "bin" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        let targets = graph.entry(module.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    targets.insert(name);
                }
            }
        }
    }
    graph
}

fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(node: &str, graph: &Graph, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn trace_modules_import_downward_only() {
    let graph = edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for module in ["import", "replay", "transcript", "eval", "conformance", "host", "html"] {
        assert!(graph.contains_key(module), "module {module} seen: {graph:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("module cycle: {}", cycle.join(" -> "));
    }
    // The transcript types are the floor the importers and the replay share.
    for above in ["import", "replay", "eval", "html", "conformance"] {
        assert!(
            !graph["transcript"].contains(above),
            "transcript imports {:?}",
            graph["transcript"]
        );
    }
    assert!(
        !graph["import"].contains("replay"),
        "the importers reach the replay: {:?}",
        graph["import"]
    );
    // The host (the command's I/O) is a floor too: the walk here, and the
    // guard and the command above, stand on it; it on nothing of this crate.
    assert!(graph["host"].is_empty(), "host imports {:?}", graph["host"]);
}

#[test]
fn the_checker_sees_a_cycle() {
    let mut graph = Graph::new();
    graph.insert("import".to_string(), BTreeSet::from(["replay".to_string()]));
    graph.insert("replay".to_string(), BTreeSet::from(["import".to_string()]));
    let cycle = find_cycle(&graph).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 3);
}
