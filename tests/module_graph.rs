//! The core's modules import downward only: no module of `src/` reaches,
//! through `crate::` paths, a module that reaches back to it. A cycle makes
//! the layering (values below canonical JSON below fingerprints below the
//! monitor) a fiction, so it fails here rather than in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `crate::name` references outside comments, per top-level module (a
/// submodule file such as `text/naive.rs` counts as its parent).
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("readable src dir");
            files.extend(entries.map(|e| e.expect("dir entry").path()));
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
    // `lib.rs` only declares and re-exports: it sits above everything.
    graph.remove("lib");
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
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
fn modules_import_downward_only() {
    let graph = edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "found the modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("module cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_checker_sees_a_cycle() {
    let mut graph = BTreeMap::new();
    graph.insert("json".to_string(), BTreeSet::from(["text".to_string()]));
    graph.insert("text".to_string(), BTreeSet::from(["js_string".to_string()]));
    graph.insert("js_string".to_string(), BTreeSet::from(["json".to_string()]));
    let cycle = find_cycle(&graph).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
}
