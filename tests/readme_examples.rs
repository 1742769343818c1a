//! Every Rust example the README shows is compiled and run: each `rust`
//! block of `README.md` (and of the README section drafted in
//! `docs/readme/rust.md`) must appear, verbatim, among the blocks of
//! `docs/rust-examples*.md`, which `src/lib.rs` includes as doc tests.
//! Lines rustdoc hides (`# ...`) are scaffolding and not compared.

use std::path::Path;

/// The `rust` code blocks of a Markdown text, hidden lines removed.
fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in markdown.lines() {
        let fence = line.trim_start();
        match &mut current {
            None if fence.starts_with("```rust") => current = Some(Vec::new()),
            Some(_) if fence.starts_with("```") => {
                blocks.push(current.take().unwrap_or_default().join("\n"));
            }
            Some(lines) => {
                let hidden = line.trim_start() == "#" || line.trim_start().starts_with("# ");
                if !hidden {
                    lines.push(line);
                }
            }
            None => {}
        }
    }
    blocks
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn every_readme_rust_block_is_a_doc_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tested: Vec<String> = ["docs/rust-examples.md", "docs/rust-examples-serde_json.md"]
        .iter()
        .map(|name| read(&root.join(name)).unwrap_or_else(|| panic!("{name} is shipped with the crate")))
        .flat_map(|text| rust_blocks(&text))
        .collect();
    let mut checked = 0;
    for name in ["README.md", "docs/readme/rust.md"] {
        let Some(text) = read(&root.join(name)) else {
            eprintln!("SKIPPED: {name} is absent (not part of the packaged crate)");
            continue;
        };
        for block in rust_blocks(&text) {
            assert!(tested.contains(&block), "{name}: this block is not in docs/rust-examples*.md:\n{block}");
            checked += 1;
        }
    }
    assert!(checked > 0, "no README Rust block found");
}

#[test]
fn hidden_lines_and_other_languages_are_not_compared() {
    let markdown = "```js\nlet a;\n```\n```rust\n# fn main() {\nlet x = 1;\n# }\n```\n";
    assert_eq!(rust_blocks(markdown), vec!["let x = 1;".to_string()]);
}
