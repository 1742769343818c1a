//! Which assistant message a Claude Code tool call belongs to.
//!
//! Claude Code's `PreToolUse` event names the call (`tool_use_id`) but not
//! its message. The session transcript it names (`transcript_path`, JSON
//! Lines) holds one `assistant` line per content block, each with the
//! message's `message.id`: all `tool_use` blocks sharing that id are one
//! round. A message still streaming is not in the transcript yet (Claude
//! Code starts a tool as soon as its block is complete and writes the
//! message when the stream ends), so what the transcript can tell is:
//! the message holding the call, or else the last message written before
//! it — every call not yet written belongs to the message after that one.
//!
//! Only the file's tail is read (the current round is near the end), so a
//! hook stays fast on a long session.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use doom_loop::json::{parse, Value};

/// How much of the transcript's end is read first, and at most.
const TAIL_FIRST: u64 = 512 << 10;
const TAIL_MAX: u64 = 8 << 20;

/// What the transcript tells about one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The id of the assistant message holding the call, when written.
    pub message: Option<String>,
    /// The id of the last assistant message holding any tool call.
    pub last_message: Option<String>,
}

/// Looks `tool_use_id` up in the transcript at `path` (`None`: it cannot be read).
pub fn place(path: &str, tool_use_id: &str) -> Option<Placement> {
    let mut placement = Placement::default();
    for size in [TAIL_FIRST, TAIL_MAX] {
        let (text, whole) = tail(path, size)?;
        placement = scan(&text, tool_use_id);
        if whole || placement.message.is_some() {
            break;
        }
    }
    Some(placement)
}

/// The message id of an assistant line and whether it holds `tool_use_id`
/// (`None`: not an assistant line with a tool call).
fn assistant_line(line: &str, tool_use_id: &str) -> Option<(String, bool)> {
    let value = parse(line).ok()?;
    let message = value.as_object()?.get("message")?.as_object()?;
    let id = message
        .get("id")?
        .as_js_string()?
        .to_utf8_lossy()
        .into_owned();
    let Some(Value::Array(blocks)) = message.get("content") else {
        return None;
    };
    let mut has_call = false;
    let mut holds = false;
    for block in blocks.iter().filter_map(Value::as_object) {
        if block
            .get("type")
            .and_then(Value::as_js_string)
            .is_some_and(|t| *t == "tool_use")
        {
            has_call = true;
            holds |= block
                .get("id")
                .and_then(Value::as_js_string)
                .is_some_and(|b| *b == *tool_use_id);
        }
    }
    has_call.then_some((id, holds))
}

fn scan(text: &str, tool_use_id: &str) -> Placement {
    let mut placement = Placement::default();
    // From the end: at most the last call's line and the line naming the
    // id are parsed. A line cut by the tail (or being written) does not parse
    // and is skipped.
    for line in text.lines().rev() {
        if !line.contains("\"tool_use\"") {
            continue;
        }
        let names_id = line.contains(tool_use_id);
        if placement.last_message.is_some() && !names_id {
            continue;
        }
        let Some((id, holds)) = assistant_line(line, tool_use_id) else {
            continue;
        };
        if placement.last_message.is_none() {
            placement.last_message = Some(id.clone());
        }
        if holds {
            placement.message = Some(id);
            break;
        }
    }
    placement
}

/// The last `size` bytes of the file, and whether that is all of it.
fn tail(path: &str, size: u64) -> Option<(String, bool)> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(size);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(size).read_to_end(&mut bytes).ok()?;
    Some((String::from_utf8_lossy(&bytes).into_owned(), start == 0))
}
