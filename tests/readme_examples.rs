//! Every Rust example the docs show is compiled and run: each Markdown page
//! of `README.md` and `docs/` that holds a ```` ```rust ```` block must be
//! included as doc tests by `src/lib.rs` (or, for the trace crate's API,
//! `trace/src/lib.rs`) with `#[doc = include_str!("…")]`, and every block of
//! such a page must carry an info string (a bare fence would be compiled as
//! Rust by rustdoc, and is not checked as anything by the docs checker).

use std::path::{Path, PathBuf};

/// The info strings of the fenced code blocks of a Markdown text, with the
/// 1-based line of each opening fence.
fn fences(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open: Option<String> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &open {
            None if indent <= 3 && (trimmed.starts_with("```") || trimmed.starts_with("~~~")) => {
                let first = trimmed.chars().next().unwrap_or('`');
                let marker: String = trimmed.chars().take_while(|c| *c == first).collect();
                let info = trimmed[marker.len()..].trim();
                // CommonMark: the info string of a backtick fence holds no backtick.
                if first == '`' && info.contains('`') {
                    continue;
                }
                found.push((index + 1, info.to_string()));
                open = Some(marker);
            }
            Some(marker) if indent <= 3 && closes(trimmed, marker) => open = None,
            _ => {}
        }
    }
    found
}

/// Does this line close a fence opened with `marker` (the same character, at
/// least as many times, nothing after)?
fn closes(line: &str, marker: &str) -> bool {
    let first = marker.chars().next().unwrap_or('`');
    let run = line.chars().take_while(|c| *c == first).count();
    run >= marker.chars().count() && line[run..].trim().is_empty()
}

fn is_rust(info: &str) -> bool {
    info.split([',', ' ']).next() == Some("rust")
}

fn markdown_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

#[test]
fn every_page_with_a_rust_block_is_a_doc_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let trace = std::fs::read_to_string(root.join("trace/src/lib.rs")).unwrap_or_default();
    let mut pages_with_rust = 0;
    for page in markdown_pages(root) {
        let Ok(text) = std::fs::read_to_string(&page) else {
            eprintln!("SKIPPED: {} is absent (not part of the packaged crate)", page.display());
            continue;
        };
        let name = page.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let blocks = fences(&text);
        if !blocks.iter().any(|(_, info)| is_rust(info)) {
            continue;
        }
        pages_with_rust += 1;
        let from_core = format!("include_str!(\"../{name}\")");
        let from_trace = format!("include_str!(\"../../{name}\")");
        assert!(
            core.contains(&from_core) || trace.contains(&from_trace),
            "{name} has a ```rust block but is not a doc test: add `#[doc = {from_core}]` to a \
             `#[cfg(doctest)]` module in src/lib.rs (or `{from_trace}` in trace/src/lib.rs)"
        );
        for (line, info) in &blocks {
            assert!(!info.is_empty(), "{name}:{line}: a code block without an info string would be compiled as Rust (write ```text, ```sh, …)");
        }
    }
    assert!(pages_with_rust > 0, "no page with a Rust block found");
}

#[test]
fn fences_are_found_with_their_info_strings() {
    let markdown = "```js\nlet a;\n```\ntext\n```rust\nlet x = 1;\n```\n````text\n```\n````\n```\nbare\n```\n```` ```js ```` inline\n";
    let found: Vec<String> = fences(markdown).into_iter().map(|(_, info)| info).collect();
    assert_eq!(found, ["js", "rust", "text", ""]);
    assert!(is_rust("rust") && is_rust("rust,ignore") && !is_rust("rusty") && !is_rust("text"));
}
