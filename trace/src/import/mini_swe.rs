//! mini-swe-agent trajectories: `{info, messages: [{role, content}],
//! trajectory_format: "mini-swe-agent-1"}` (or the bare message list).
//!
//! Each assistant message is one model turn and its content the turn's
//! text. The agent runs the turn's action only when the content holds
//! exactly one bash block (mini-swe-agent's `action_regex`,
//! ```` ```bash\s*\n(.*?)\n``` ````, or ```` ```mswea_bash_command ```` in
//! its later prompt templates, then stripped); otherwise the turn ran
//! nothing (a format error) and has no call. The next user message is the
//! call's output (its result); a `<returncode>` other than 0 in it marks
//! the call failed.

use doom_loop::error::Result;
use doom_loop::js_string::JsString;
use doom_loop::json::Value;

use super::swe_agent::bash_call;
use super::{content_text, get, string_field};
use crate::transcript::TranscriptRound;

/// True when some assistant message holds a bash block.
pub(crate) fn has_bash_blocks(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        string_field(m, &["role"]).is_some_and(|r| r == "assistant")
            && content_text(get(m, "content")).is_some_and(|t| !bash_blocks(&t.to_utf8_lossy()).is_empty())
    })
}

/// The fences that open an action block: ```` ```bash ```` (mini-swe-agent
/// 1.x) and ```` ```mswea_bash_command ```` (its later prompt templates).
const FENCES: &[&str] = &["```mswea_bash_command", "```bash"];

/// The first action fence in `text`: its offset and which fence it is.
fn next_fence(text: &str) -> Option<(usize, &'static str)> {
    FENCES
        .iter()
        .filter_map(|fence| text.find(fence).map(|at| (at, *fence)))
        .min_by_key(|(at, fence)| (*at, std::cmp::Reverse(fence.len())))
}

/// The bodies of the action blocks in `text`, as mini-swe-agent's regex
/// finds them (non-overlapping, left to right), stripped.
pub fn bash_blocks(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some((offset, fence)) = next_fence(&text[from..]) {
        let start = from + offset + fence.len();
        let rest = &text[start..];
        let whitespace = rest.len() - rest.trim_start().len();
        // `\s*\n` backtracks: the greediest newline of the whitespace run
        // after which a closing fence follows.
        let closing = rest[..whitespace]
            .char_indices()
            .rev()
            .filter(|(_, c)| *c == '\n')
            .find_map(|(newline, _)| {
                let body_start = start + newline + 1;
                text[body_start..]
                    .find("\n```")
                    .map(|end| (body_start, body_start + end))
            });
        if let Some((body_start, body_end)) = closing {
            found.push(text[body_start..body_end].trim());
            from = body_end + 4;
            continue;
        }
        from = from + offset + 1;
    }
    found
}

/// The rounds of a mini-swe-agent message list.
///
/// # Errors
/// None today (every message list has a reading); a `Result` for the
/// shared importer signature.
pub fn rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut rounds = Vec::new();
    let mut awaiting = None;
    for message in messages {
        let role = string_field(message, &["role"]);
        let text = content_text(get(message, "content"));
        if role.as_ref().is_some_and(|r| r == "assistant") {
            let calls = text
                .as_ref()
                .map(|t| {
                    let lossy = t.to_utf8_lossy();
                    match bash_blocks(&lossy)[..] {
                        [command] => vec![bash_call(JsString::from(command), None)],
                        _ => Vec::new(),
                    }
                })
                .unwrap_or_default();
            awaiting = (!calls.is_empty()).then_some(rounds.len());
            rounds.push(TranscriptRound {
                text,
                calls,
                ..TranscriptRound::default()
            });
        } else if let (Some(index), Some(output)) = (awaiting.take(), text) {
            let failed = return_code(&output.to_utf8_lossy()).is_some_and(|c| c != "0");
            if let Some(call) = rounds
                .get_mut(index)
                .and_then(|r: &mut TranscriptRound| r.calls.first_mut())
            {
                call.result = Some(Value::String(output));
                call.failed = failed;
            }
        }
    }
    Ok(rounds)
}

fn return_code(output: &str) -> Option<&str> {
    let start = output.find("<returncode>")? + "<returncode>".len();
    let end = output[start..].find("</returncode>")?;
    Some(output[start..start + end].trim())
}
