//! `doomloop eval --html`'s page on arbitrary strings in every place the
//! data carries one: an option's label, a session's source and id, the
//! message of its first block or stop.
//!
//! The input is split at NULs (each part decoded lossily): the first part
//! is the option's label, then each three parts a session (source, id,
//! message). Invariants:
//! - never panics;
//! - the data element's text, read as an HTML tokenizer reads a script
//!   element's content (it ends at the first `</script` outside a
//!   `<!-- … <script` run), is the whole data: it ends right before the
//!   element's own `</script>`, which the drawing script follows;
//! - that text parses as JSON back to the same label, sources, ids and
//!   messages.
#![no_main]

use doom_loop::json::{parse, Value};
use doom_loop_trace::eval::{Metrics, OptionReport, Report, SessionRow, SessionTrack};
use doom_loop_trace::html::render;
use libfuzzer_sys::fuzz_target;

const OPEN: &str = "<script id=\"data\" type=\"application/json\">";

#[derive(Clone, Copy, PartialEq)]
enum State {
    Data,
    Escaped,
    DoubleEscaped,
}

/// Whether `rest` starts with `tag` (ASCII case-insensitive) and then a
/// byte that ends a tag name.
fn tag_at(rest: &[u8], tag: &[u8]) -> bool {
    rest.len() > tag.len()
        && rest[..tag.len()].eq_ignore_ascii_case(tag)
        && matches!(rest[tag.len()], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>')
}

/// Where the content of a script element starting at `text` ends, as the
/// HTML tokenizer's script data states find it.
fn script_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut state, mut i) = (State::Data, 0);
    while i < bytes.len() {
        let rest = &bytes[i..];
        if tag_at(rest, b"</script") {
            if state != State::DoubleEscaped {
                return Some(i);
            }
            state = State::Escaped;
            i += 8;
        } else if state == State::Data && rest.starts_with(b"<!--") {
            state = State::Escaped;
            i += 4;
        } else if state == State::Escaped && tag_at(rest, b"<script") {
            state = State::DoubleEscaped;
            i += 7;
        } else if state != State::Data && rest.starts_with(b"-->") {
            state = State::Data;
            i += 3;
        } else {
            i += 1;
        }
    }
    None
}

fn string(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.to_utf8_lossy().into_owned(),
        other => panic!("not a string: {other:?}"),
    }
}

fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value.as_object().and_then(|o| o.get(name))
}

fuzz_target!(|data: &[u8]| {
    let parts: Vec<String> = data
        .split(|&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let label = parts[0].clone();
    let mut sessions: Vec<SessionRow> = parts[1..]
        .chunks_exact(3)
        .take(64)
        .map(|s| SessionRow {
            source: s[0].clone(),
            id: s[1].clone(),
            resolved: None,
            tracks: vec![SessionTrack {
                rungs: "ob".into(),
                saved_calls: 0,
                saved_tokens: None,
                first: Some((2, s[2].clone())),
            }],
        })
        .collect();
    let report = Report {
        options: vec![OptionReport {
            label: label.clone(),
            option: Value::Bool(true),
            sources: Vec::new(),
            total: Metrics::default(),
        }],
        failures: Vec::new(),
        failures_omitted: 0,
        warnings: Vec::new(),
    };
    let page = render(&report, &sessions);
    let start = page.find(OPEN).expect("the data element") + OPEN.len();
    let end = start + script_end(&page[start..]).expect("the data element ends");
    assert!(
        page[end..].starts_with("</script>\n<script>"),
        "the data element ends early or late: {}",
        &page[start..]
    );
    let value = parse(&page[start..end]).unwrap_or_else(|e| panic!("not JSON ({e}): {}", &page[start..end]));
    let options = match field(&value, "options") {
        Some(Value::Array(options)) => options,
        other => panic!("options: {other:?}"),
    };
    assert_eq!(string(field(&options[0], "label")), label);
    let Some(Value::Array(shown)) = field(&value, "sessions") else {
        panic!("sessions")
    };
    let mut read: Vec<(String, String, String)> = shown
        .iter()
        .map(|s| {
            let track = match field(s, "tracks") {
                Some(Value::Array(tracks)) => &tracks[0],
                other => panic!("tracks: {other:?}"),
            };
            let first = field(track, "first").expect("first");
            (
                string(field(s, "source")),
                string(field(s, "id")),
                string(field(first, "message")),
            )
        })
        .collect();
    let mut given: Vec<(String, String, String)> = sessions
        .drain(..)
        .map(|s| {
            let message = s.tracks[0].first.clone().map(|(_, m)| m).unwrap_or_default();
            (s.source, s.id, message)
        })
        .collect();
    read.sort();
    given.sort();
    assert_eq!(read, given);
});
