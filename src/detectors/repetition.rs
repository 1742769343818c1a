//! In-response repetition (opt-in, the `repetition` key of the `doomLoop`
//! option): one response that says the same sentence over and over.
//!
//! The reference's within-response rule looks for a block of at most
//! `maxPeriodTokens` (16) tokens repeating back to back at the end of the
//! response. A model that chants a longer paragraph — Gemini 3 Pro's
//! "Wait, I am confused. Is it `msubsup` or `msubsup`? …", five sentences
//! repeated hundreds of times — or whose repetition is followed by other
//! text escapes it. This rule counts sentences instead:
//!
//! - the response is cut into lines, and lines into sentences (after `.`,
//!   `!` or `?` followed by a space); whitespace is collapsed;
//! - lines inside fenced code blocks (```` ``` ````) are skipped, as Gemini
//!   CLI's content check skips them — code repeats lines legitimately;
//! - sentences shorter than `minChars` (default 16) are ignored;
//! - the response *chants* when one sentence occurs at least `minRepeats`
//!   (default 20) times, anywhere in it.
//!
//! A chanting response is scored as a repeat of itself: streak 2 for the
//! first (the reference's ladder observes), one more for each following
//! response with text that chants again; a response that does not chant
//! resets it. Like the reference's text verdicts it never blocks, and it
//! reaches `stop` only when the model keeps chanting response after
//! response — a single degenerate response in a run that then recovers (one
//! of the recorded runs this was measured on succeeded) is flagged, not
//! ended. State: the count, persisted under `beyond.repetition`.

use std::collections::HashMap;

use crate::js_string::JsString;
use crate::json::{Object, Value};

/// Detector label (`optInDetector`) of its verdicts, reported under the
/// reference's `text-repetition` kind.
pub const IN_RESPONSE_REPETITION: &str = "in-response-repetition";
/// Default repeats of one sentence that make a response chant.
pub const DEFAULT_MIN_REPEATS: usize = 20;
/// Default shortest sentence counted (characters, whitespace collapsed).
pub const DEFAULT_MIN_CHARS: usize = 16;
/// Longest sample quoted in a verdict message (characters).
const SAMPLE_CHARS: usize = 120;

/// The rule's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RepetitionConfig {
    /// Repeats of one sentence that make a response chant (≥ 2).
    pub min_repeats: usize,
    /// Shortest sentence counted (characters).
    pub min_chars: usize,
}

impl Default for RepetitionConfig {
    fn default() -> Self {
        RepetitionConfig {
            min_repeats: DEFAULT_MIN_REPEATS,
            min_chars: DEFAULT_MIN_CHARS,
        }
    }
}

impl RepetitionConfig {
    /// Reads `repetition: true | {minRepeats?, minChars?}`; other values mean off.
    pub fn from_option(option: &Value) -> Option<RepetitionConfig> {
        let defaults = RepetitionConfig::default();
        let number = |o: &Object, name: &str, min: f64| {
            o.get(name)
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= min)
                .map(|n| n.min(1_000_000.0) as usize)
        };
        match option {
            Value::Bool(true) => Some(defaults),
            Value::Object(o) => Some(RepetitionConfig {
                min_repeats: number(o, "minRepeats", 2.0).unwrap_or(defaults.min_repeats),
                min_chars: number(o, "minChars", 1.0).unwrap_or(defaults.min_chars),
            }),
            _ => None,
        }
    }

    /// The resolved form, as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(Object::from_entries(vec![
            (JsString::from("minRepeats"), Value::Number(self.min_repeats as f64)),
            (JsString::from("minChars"), Value::Number(self.min_chars as f64)),
        ]))
    }
}

/// A chanting response: the most repeated sentence and how often it occurs.
#[derive(Clone, Debug, PartialEq)]
pub struct Chant {
    /// The sentence (whitespace collapsed; long ones cut with `…`).
    pub sample: String,
    /// How many times it occurs in the response.
    pub repeats: usize,
}

/// The most repeated sentence of `text` when it occurs at least
/// `min_repeats` times (see the module docs); `None` otherwise. Linear in
/// the text.
///
/// ```
/// use doom_loop::repetition::{chanting, RepetitionConfig};
/// let text = "Wait, I am confused. Is it `a` or `b`?\n".repeat(25);
/// let chant = chanting(&text, &RepetitionConfig::default()).unwrap();
/// assert_eq!((chant.sample.as_str(), chant.repeats), ("Wait, I am confused.", 25));
/// assert_eq!(chanting("```\nx = 1 + 2 + 3 + 4\n```\n".repeat(30).as_str(), &RepetitionConfig::default()), None);
/// ```
pub fn chanting(text: &str, config: &RepetitionConfig) -> Option<Chant> {
    let min_repeats = config.min_repeats.max(2);
    // Too short to hold `min_repeats` sentences of `min_chars`: most
    // responses end here.
    if text.len() < min_repeats.saturating_mul(config.min_chars.max(1)) {
        return None;
    }
    // One pass: the counted sentences, whitespace collapsed, into one buffer.
    let mut buffer = String::with_capacity(text.len());
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut fenced = false;
    for line in text.split('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            push_sentences(line, &mut buffer, &mut ranges, config.min_chars);
        }
    }
    if ranges.len() < min_repeats {
        return None;
    }
    let mut counts: HashMap<&str, usize> = HashMap::with_capacity(ranges.len());
    let mut best: Option<(&str, usize)> = None;
    for &(start, end) in &ranges {
        let sentence = &buffer[start..end];
        let count = counts.entry(sentence).or_insert(0);
        *count += 1;
        if best.is_none_or(|(_, n)| *count > n) {
            best = Some((sentence, *count));
        }
    }
    let (sentence, repeats) = best.filter(|(_, n)| *n >= min_repeats)?;
    let sample = if sentence.chars().count() > SAMPLE_CHARS {
        let cut: String = sentence.chars().take(SAMPLE_CHARS).collect();
        format!("{cut}…")
    } else {
        sentence.to_string()
    };
    Some(Chant { sample, repeats })
}

/// Appends the sentences of one line to `buffer`, whitespace collapsed, and
/// the byte range of each one at least `min_chars` long to `ranges`: a
/// sentence ends after `.`, `!` or `?` followed by whitespace (or the end of
/// the line).
fn push_sentences(line: &str, buffer: &mut String, ranges: &mut Vec<(usize, usize)>, min_chars: usize) {
    let mut start = buffer.len();
    let mut pending_space = false;
    let mut finish = |buffer: &mut String, start: &mut usize| {
        let end = buffer.len();
        let sentence = &buffer[*start..end];
        if sentence.len() >= min_chars && (sentence.len() >= 4 * min_chars || sentence.chars().count() >= min_chars) {
            ranges.push((*start, end));
        } else {
            buffer.truncate(*start);
        }
        *start = buffer.len();
    };
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            pending_space = buffer.len() > start;
            continue;
        }
        if pending_space {
            buffer.push(' ');
            pending_space = false;
        }
        buffer.push(c);
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()) {
            finish(buffer, &mut start);
        }
    }
    if buffer.len() > start {
        finish(buffer, &mut start);
    }
}

/// The sentences of one line, whitespace collapsed (for the tests).
#[cfg(test)]
fn sentences(line: &str) -> Vec<String> {
    let (mut buffer, mut ranges) = (String::new(), Vec::new());
    push_sentences(line, &mut buffer, &mut ranges, 1);
    ranges.iter().map(|&(a, b)| buffer[a..b].to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_after_terminators_and_collapse_whitespace() {
        assert_eq!(
            sentences("  Wait,   I am confused.  Is it a? Yes!x"),
            ["Wait, I am confused.", "Is it a?", "Yes!x"]
        );
        assert_eq!(sentences("v1.2.3 is out"), ["v1.2.3 is out"]);
        assert!(sentences("   ").is_empty());
    }

    #[test]
    fn a_repeated_paragraph_chants_anywhere_in_the_response() {
        let block = "Wait, I am confused.\nIs it `msubsup` or `msubsup`?\n`msubsup` -> m s u b s u p.\n\n";
        let text = format!("Let me look.\n{}Now the real answer follows, once.", block.repeat(30));
        let chant = chanting(&text, &RepetitionConfig::default()).unwrap();
        assert_eq!(chant.repeats, 30);
        assert_eq!(chanting(&block.repeat(19), &RepetitionConfig::default()), None);
    }

    #[test]
    fn short_sentences_and_code_do_not_count() {
        assert_eq!(chanting(&"Ok. ".repeat(100), &RepetitionConfig::default()), None);
        let code = format!("```python\n{}```\n", "new_lines.append(line)\n".repeat(50));
        assert_eq!(chanting(&code, &RepetitionConfig::default()), None);
        // An unclosed fence hides the rest of the response.
        assert_eq!(
            chanting(
                &format!("```\n{}", "new_lines.append(line)\n".repeat(50)),
                &RepetitionConfig::default()
            ),
            None
        );
    }

    #[test]
    fn options_read_true_objects_and_reject_nonsense() {
        assert_eq!(
            RepetitionConfig::from_option(&Value::Bool(true)),
            Some(RepetitionConfig::default())
        );
        assert_eq!(RepetitionConfig::from_option(&Value::Bool(false)), None);
        let o = crate::json::parse(r#"{"minRepeats":1,"minChars":4}"#).unwrap();
        assert_eq!(
            RepetitionConfig::from_option(&o),
            Some(RepetitionConfig {
                min_repeats: DEFAULT_MIN_REPEATS,
                min_chars: 4
            })
        );
    }
}
