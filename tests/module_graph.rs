//! The core's modules import downward only, at two grains: no module of
//! `src/` reaches, through `crate::` paths, a module that reaches back to
//! it, and no folder (`value/`, `parity/`, `detectors/`, `surface/`,
//! `session/`, a node each, its submodules counting as it) does either.
//! A cycle makes the layering (values below the parity core below the
//! opt-in detectors below the surface, the session engine and the wiring of
//! options to detectors; inside, canonical JSON below fingerprints below
//! the monitor) a fiction, so it fails here rather than in review. The
//! folders' order is asserted too: the port names no detector (they plug
//! into its one seam, `parity/evidence.rs`, from above).
//!
//! Paths resolve as the compiler does: `crate::json` is the root re-export
//! of `value::json`, `crate::value::json` the same module, and a root item
//! (`crate::Value`, `crate::ResolvedConfig`) the module `lib.rs` re-exports
//! it from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Where a module lives: its folder (or itself, for a root file such as
/// `error.rs`) and its name.
#[derive(Clone, Debug)]
struct Place {
    folder: String,
    module: String,
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).expect("readable src dir");
            pending.extend(entries.map(|e| e.expect("dir entry").path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

fn components(relative: &Path) -> Vec<String> {
    relative
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .map(|c| c.trim_end_matches(".rs").to_string())
        .collect()
}

/// The place of a file: `value/json.rs` is module `json` of folder `value`;
/// `parity/text/naive.rs` counts as `text`; `value/mod.rs` is the folder
/// itself; `error.rs` is a root module, its own folder.
fn place_of(relative: &Path) -> Place {
    let parts = components(relative);
    let folder = parts[0].clone();
    let module = match parts.get(1).map(String::as_str) {
        None | Some("mod") => folder.clone(),
        Some(name) => name.to_string(),
    };
    Place { folder, module }
}

/// Code without line comments.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|line| line.split("//").next().unwrap_or(""))
}

/// Every `crate::a::b` path in code, as its segments.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for code in code_lines(text) {
        for (at, _) in code.match_indices("crate::") {
            let segments: Vec<String> = code[at + 7..]
                .split("::")
                .map(|s| {
                    s.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .take_while(|s| !s.is_empty())
                .collect();
            if !segments.is_empty() {
                paths.push(segments);
            }
        }
    }
    paths
}

/// Root items `lib.rs` re-exports (`pub use monitor::{DoomLoopMonitor, …};`)
/// mapped to the module they come from.
fn root_items(lib: &str) -> BTreeMap<String, String> {
    let code: String = code_lines(lib).collect::<Vec<_>>().join(" ");
    let mut items = BTreeMap::new();
    for statement in code.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() && !name.contains("::") {
                items.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    items
}

/// The module and folder graphs of a crate's `src/`.
fn graphs(src: &Path) -> (Graph, Graph) {
    let files: Vec<(Place, String)> = rust_files(src)
        .into_iter()
        .filter(|path| path != &src.join("lib.rs"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable source");
            (place_of(path.strip_prefix(src).expect("under src")), text)
        })
        .collect();
    let by_module: BTreeMap<String, Place> = files.iter().map(|(p, _)| (p.module.clone(), p.clone())).collect();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let items = root_items(&lib);
    let resolve = |segments: &[String]| -> Option<Place> {
        let first = &segments[0];
        if let Some(place) = by_module.get(first) {
            // A folder (`crate::value::json`) names the module inside it.
            if place.folder == place.module {
                if let Some(inner) = segments.get(1).and_then(|s| by_module.get(s)) {
                    if inner.folder == place.folder {
                        return Some(inner.clone());
                    }
                }
            }
            return Some(place.clone());
        }
        items.get(first).and_then(|module| by_module.get(module)).cloned()
    };
    let (mut modules, mut folders) = (Graph::new(), Graph::new());
    for (place, text) in &files {
        modules.entry(place.module.clone()).or_default();
        folders.entry(place.folder.clone()).or_default();
        for path in crate_paths(text) {
            let Some(target) = resolve(&path) else { continue };
            if target.module != place.module {
                modules
                    .entry(place.module.clone())
                    .or_default()
                    .insert(target.module.clone());
            }
            if target.folder != place.folder {
                folders
                    .entry(place.folder.clone())
                    .or_default()
                    .insert(target.folder.clone());
            }
        }
    }
    (modules, folders)
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

fn core_graphs() -> (Graph, Graph) {
    graphs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn modules_import_downward_only() {
    let (modules, _) = core_graphs();
    assert!(modules.len() > 20, "found the modules: {modules:?}");
    if let Some(cycle) = find_cycle(&modules) {
        panic!("module cycle: {}", cycle.join(" -> "));
    }
}

/// The layers, bottom to top; a folder (or root module) imports only
/// folders of lower layers. Every folder must be in one: a new folder
/// takes its place here.
const LAYERS: [&[&str]; 5] = [
    &["error"],
    &["value"],
    &["parity"],
    &["detectors"],
    &["surface", "session", "wiring"],
];

fn layer_of(folder: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&folder))
        .unwrap_or_else(|| panic!("folder {folder} is in no layer of LAYERS"))
}

#[test]
fn folders_import_downward_only() {
    let (_, folders) = core_graphs();
    for folder in LAYERS.iter().flat_map(|layer| layer.iter()) {
        assert!(folders.contains_key(*folder), "folder {folder} seen: {folders:?}");
    }
    if let Some(cycle) = find_cycle(&folders) {
        panic!("folder cycle: {}", cycle.join(" -> "));
    }
    for (folder, targets) in &folders {
        for target in targets {
            assert!(
                layer_of(target) < layer_of(folder),
                "{folder} imports {target}, which is not below it: {folders:?}"
            );
        }
    }
}

#[test]
fn the_port_names_no_detector_and_the_detectors_plug_into_its_seam() {
    let (modules, folders) = core_graphs();
    assert!(!folders["parity"].contains("detectors"), "{:?}", folders["parity"]);
    assert!(folders["detectors"].contains("parity"), "{:?}", folders["detectors"]);
    // The seam: the monitor drives the rules through `evidence`, which the
    // detectors implement; the wiring plugs them in.
    assert!(modules["monitor"].contains("evidence"), "{:?}", modules["monitor"]);
    assert!(modules["rules"].contains("evidence"), "{:?}", modules["rules"]);
    assert!(modules["wiring"].contains("beyond"), "{:?}", modules["wiring"]);
}

#[test]
fn the_resolver_sees_through_root_re_exports() {
    let (modules, folders) = core_graphs();
    // `parity/canonical.rs` writes `crate::json::…`, the re-export of `value::json`.
    assert!(modules["canonical"].contains("json"), "{:?}", modules["canonical"]);
    assert!(folders["parity"].contains("value"), "{:?}", folders["parity"]);
    let items = root_items("pub use monitor::{CallRecord, DoomLoopMonitor};\npub use json::Value;");
    assert_eq!(items.get("DoomLoopMonitor").map(String::as_str), Some("monitor"));
    assert_eq!(items.get("Value").map(String::as_str), Some("json"));
}

#[test]
fn the_checker_sees_a_cycle() {
    let mut graph = Graph::new();
    graph.insert("json".to_string(), BTreeSet::from(["text".to_string()]));
    graph.insert("text".to_string(), BTreeSet::from(["js_string".to_string()]));
    graph.insert("js_string".to_string(), BTreeSet::from(["json".to_string()]));
    let cycle = find_cycle(&graph).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
}
