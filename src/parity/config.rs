//! Resolving the `doomLoop` option into the configuration the monitor runs.
//!
//! Keeps the reference's `resolveDoomLoopOption`: `undefined`/`false` turn
//! detection off, `true` means all defaults; ladder thresholds are sanitized
//! (`false` disables, a finite number ≥ 1 is floored, anything else takes
//! the default); text options pass through `??` untouched (the reference
//! does not sanitize them, so neither do we); escalation needs a mechanism
//! (`model`, or an `advisor` other than `false`) and a rung; and every
//! resolve-time warning is emitted with the reference's exact text, in its
//! order. Where the reference would throw a `TypeError` (a `null` section),
//! so does this, after the warnings it would already have printed.
//!
//! The option's other keys (the opt-in evidence rules) are ignored here, as
//! the reference ignores them: a configuration holds the rules they turn on
//! as an opaque [`Rules`] handle, which the wiring above the detectors
//! fills in (`doom_loop::config::resolve_doom_loop_option` is this
//! resolution with it).

use crate::error::{Error, ErrorKind, Result};
use crate::evidence::Rules;
use crate::json::{write_number, Value};
use crate::ladder::{Action, Ladder, Threshold, DEFAULT_LADDER};
use crate::text::RepetitionThresholds;

/// The reference's `DEFAULT_MAX_ESCALATIONS`.
pub const DEFAULT_MAX_ESCALATIONS: f64 = 2.0;

/// Text-detector options as resolved (raw JS values, as the reference keeps them).
#[derive(Clone, Debug, PartialEq)]
pub struct TextConfig {
    /// Master switch (JS truthiness).
    pub enabled: Value,
    /// Longest repeating block searched for.
    pub max_period_tokens: Value,
    /// Repeats needed.
    pub min_repeats: Value,
    /// Tokens the repetition must cover.
    pub min_covered_tokens: Value,
    /// Trailing tokens scanned.
    pub max_window_tokens: Value,
}

impl Default for TextConfig {
    fn default() -> Self {
        let d = RepetitionThresholds::default();
        TextConfig {
            enabled: Value::Bool(true),
            max_period_tokens: Value::Number(d.max_period_tokens),
            min_repeats: Value::Number(d.min_repeats),
            min_covered_tokens: Value::Number(d.min_covered_tokens),
            max_window_tokens: Value::Number(d.max_window_tokens),
        }
    }
}

impl TextConfig {
    /// Whether the text detectors run.
    pub fn is_enabled(&self) -> bool {
        self.enabled.is_truthy()
    }

    /// The numeric thresholds (JS `ToNumber` of each option).
    pub fn thresholds(&self) -> RepetitionThresholds {
        RepetitionThresholds {
            max_period_tokens: self.max_period_tokens.to_number(),
            min_repeats: self.min_repeats.to_number(),
            min_covered_tokens: self.min_covered_tokens.to_number(),
            max_window_tokens: self.max_window_tokens.to_number(),
        }
    }

    fn write_json(&self, out: &mut String) {
        let fields = [
            ("enabled", &self.enabled),
            ("maxPeriodTokens", &self.max_period_tokens),
            ("minRepeats", &self.min_repeats),
            ("minCoveredTokens", &self.min_covered_tokens),
            ("maxWindowTokens", &self.max_window_tokens),
        ];
        write_fields(&fields, out);
    }
}

/// Escalation recovery with its budget resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct EscalationConfig {
    /// Model to run the next turn on.
    pub model: Option<Value>,
    /// Advisor consult to force (`true` or the advisor's parameters).
    pub advisor: Option<Value>,
    /// How many escalations the run may use.
    pub max_escalations: f64,
}

/// The fully resolved configuration (the reference's `ResolvedDoomLoopConfig`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedConfig {
    /// Rung thresholds.
    pub ladder: Ladder,
    /// Escalation, when a mechanism is configured.
    pub escalation: Option<EscalationConfig>,
    /// Text detectors.
    pub text: TextConfig,
    /// The evidence rules plugged into the monitor ([`crate::evidence`];
    /// none by default: the reference). Persisted and written under the
    /// `beyond` key.
    pub beyond: Rules,
}

impl Default for ResolvedConfig {
    /// What `doomLoop: true` resolves to.
    fn default() -> Self {
        ResolvedConfig {
            ladder: DEFAULT_LADDER,
            escalation: None,
            text: TextConfig::default(),
            beyond: Rules::none(),
        }
    }
}

impl ResolvedConfig {
    /// Reads the reference's part of a resolved configuration back from its
    /// JSON shape, with no evidence rules (`ResolvedConfig::from_value`
    /// adds those of its `beyond` key).
    ///
    /// # Errors
    /// [`ErrorKind::Type`] when `ladder` or `text` is missing or not an
    /// object: the reference would throw on its first record.
    pub(crate) fn from_reference_value(value: &Value) -> Result<ResolvedConfig> {
        let section = |name: &str| {
            own(value, name).filter(|v| v.as_object().is_some()).ok_or_else(|| {
                Error::new(
                    ErrorKind::Type,
                    format!("DoomLoopMonitor config lacks `{name}`: pass resolveDoomLoopOption(...)"),
                )
            })
        };
        let ladder = Ladder::from_js(section("ladder")?);
        let text = section("text")?;
        let raw = |name: &str, fallback: Value| own(text, name).cloned().unwrap_or(fallback);
        let defaults = TextConfig::default();
        let escalation = match own(value, "escalation") {
            None | Some(Value::Null) => None,
            Some(e) => Some(EscalationConfig {
                model: own(e, "model").cloned(),
                advisor: own(e, "advisor").cloned(),
                max_escalations: own(e, "maxEscalations").map_or(f64::NAN, Value::to_number),
            }),
        };
        Ok(ResolvedConfig {
            ladder,
            escalation,
            beyond: Rules::none(),
            text: TextConfig {
                enabled: raw("enabled", Value::Undefined),
                max_period_tokens: raw("maxPeriodTokens", defaults.max_period_tokens),
                min_repeats: raw("minRepeats", defaults.min_repeats),
                min_covered_tokens: raw("minCoveredTokens", defaults.min_covered_tokens),
                max_window_tokens: raw("maxWindowTokens", defaults.max_window_tokens),
            },
        })
    }

    /// The configuration as the reference's JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"ladder\":");
        self.ladder.write_json(&mut out);
        out.push_str(",\"escalation\":");
        match &self.escalation {
            None => out.push_str("null"),
            Some(e) => {
                let cap = Value::Number(e.max_escalations);
                let mut fields: Vec<(&str, &Value)> = Vec::new();
                if let Some(model) = &e.model {
                    fields.push(("model", model));
                }
                if let Some(advisor) = &e.advisor {
                    fields.push(("advisor", advisor));
                }
                fields.push(("maxEscalations", &cap));
                write_fields(&fields, &mut out);
            }
        }
        out.push_str(",\"text\":");
        self.text.write_json(&mut out);
        if let Some(beyond) = self.beyond.to_value() {
            out.push_str(",\"beyond\":");
            out.push_str(&crate::json::to_json(&beyond));
        }
        out.push('}');
        out
    }
}

fn write_fields(fields: &[(&str, &Value)], out: &mut String) {
    out.push('{');
    let mut first = true;
    for (name, value) in fields {
        if matches!(value, Value::Undefined) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push('"');
        out.push_str(name);
        out.push_str("\":");
        out.push_str(&crate::json::to_json(value));
    }
    out.push('}');
}

/// The outcome of [`crate::config::resolve_doom_loop_option`]: the configuration (`None`
/// when detection is off) or the reference's `TypeError`, plus the warnings
/// printed on the way, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigResolution {
    /// The resolved configuration.
    pub result: Result<Option<ResolvedConfig>>,
    /// `console.warn` texts, in order.
    pub warnings: Vec<String>,
}

/// The reference's `resolveDoomLoopOption`, with no evidence rules (as the
/// reference, it ignores the keys that turn them on). `option` is `None`
/// for `undefined`.
pub(crate) fn resolve_reference_option(option: Option<&Value>) -> ConfigResolution {
    let mut warnings = Vec::new();
    let result = resolve(option, &mut warnings);
    ConfigResolution { result, warnings }
}

fn resolve(option: Option<&Value>, warnings: &mut Vec<String>) -> Result<Option<ResolvedConfig>> {
    let config = match option {
        None | Some(Value::Bool(false)) | Some(Value::Undefined) => return Ok(None),
        Some(Value::Bool(true)) => None,
        Some(Value::Null) => return Err(read_of_null("ladder")),
        Some(other) => Some(other),
    };
    let section = |name: &str| config.and_then(|c| own(c, name));

    let ladder_input = section("ladder").filter(|v| !matches!(v, Value::Null));
    let rung = |name: &str, fallback: Threshold| sanitize_threshold(ladder_input.and_then(|l| own(l, name)), fallback);
    let ladder = Ladder {
        observe: rung("observe", DEFAULT_LADDER.observe),
        steer: rung("steer", DEFAULT_LADDER.steer),
        escalate: rung("escalate", DEFAULT_LADDER.escalate),
        block: rung("block", DEFAULT_LADDER.block),
        stop: rung("stop", DEFAULT_LADDER.stop),
    };
    warn_on_ladder_hazards(&ladder, warnings);

    let escalation = resolve_escalation(section("escalation"), &ladder, warnings)?;
    let text = resolve_text(section("text"))?;
    Ok(Some(ResolvedConfig {
        ladder,
        escalation,
        text,
        beyond: Rules::none(),
    }))
}

/// Own property of a JS value as a plain `.name` read on the reference's
/// inputs (option sections are read by fixed names that no prototype holds).
fn own<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value
        .as_object()
        .and_then(|o| o.get(name))
        .filter(|v| !matches!(v, Value::Undefined))
}

fn read_of_null(property: &str) -> Error {
    Error::new(
        ErrorKind::Type,
        format!("Cannot read properties of null (reading '{property}')"),
    )
}

fn sanitize_threshold(value: Option<&Value>, fallback: Threshold) -> Threshold {
    match value {
        Some(Value::Bool(false)) => Threshold::Off,
        Some(Value::Number(n)) if n.is_finite() && *n >= 1.0 => Threshold::At(n.floor()),
        _ => fallback,
    }
}

fn warn_on_ladder_hazards(ladder: &Ladder, warnings: &mut Vec<String>) {
    if ladder.block != Threshold::Off && ladder.stop == Threshold::Off {
        warnings.push(
            "[DoomLoop] ladder has block enabled with stop disabled: a model that keeps \
             re-issuing a blocked call loops indefinitely (each blocked round still costs a \
             model request). Bound the run with stopWhen, or enable the stop rung."
                .to_string(),
        );
    }
    for (i, weak) in Action::ALL.into_iter().enumerate() {
        let Threshold::At(weak_at) = ladder.threshold(weak) else {
            continue;
        };
        let dead_by = Action::ALL[i + 1..]
            .iter()
            .find_map(|&strong| match ladder.threshold(strong) {
                Threshold::At(strong_at) if weak_at >= strong_at => Some((strong, strong_at)),
                _ => None,
            });
        if let Some((strong, strong_at)) = dead_by {
            let mut message = format!("[DoomLoop] ladder rung \"{}\" (", weak.as_str());
            write_number(weak_at, &mut message);
            message.push_str(&format!(") can never fire: stronger rung \"{}\" (", strong.as_str()));
            write_number(strong_at, &mut message);
            message.push_str(") already wins at that streak (strongest crossed rung is applied).");
            warnings.push(message);
        }
    }
}

fn resolve_escalation(
    input: Option<&Value>,
    ladder: &Ladder,
    warnings: &mut Vec<String>,
) -> Result<Option<EscalationConfig>> {
    if matches!(input, Some(Value::Null)) {
        // `escalationInput.model` on null: the reference's TypeError.
        return Err(read_of_null("model"));
    }
    let model = input.and_then(|e| own(e, "model")).cloned();
    let advisor = input
        .and_then(|e| own(e, "advisor"))
        .filter(|a| !matches!(a, Value::Bool(false)))
        .cloned();
    if model.is_none() && advisor.is_none() {
        if ladder.escalate != Threshold::Off {
            warnings.push(
                "[DoomLoop] ladder.escalate is enabled but no escalation config (model/advisor) \
                 was provided; the rung is skipped and verdicts fall through to weaker rungs."
                    .to_string(),
            );
        }
        return Ok(None);
    }
    let max_escalations = match input.and_then(|e| own(e, "maxEscalations")) {
        Some(Value::Number(n)) if n.is_finite() && *n >= 1.0 => n.floor(),
        _ => DEFAULT_MAX_ESCALATIONS,
    };
    if ladder.escalate == Threshold::Off {
        warnings.push(
            "[DoomLoop] escalation config provided but the escalate ladder rung is disabled; \
             set ladder.escalate to a streak threshold for recovery to trigger."
                .to_string(),
        );
    }
    Ok(Some(EscalationConfig {
        model,
        advisor,
        max_escalations,
    }))
}

fn resolve_text(input: Option<&Value>) -> Result<TextConfig> {
    match input {
        None | Some(Value::Bool(true)) => Ok(TextConfig::default()),
        Some(Value::Bool(false)) => Ok(TextConfig {
            enabled: Value::Bool(false),
            ..TextConfig::default()
        }),
        Some(Value::Null) => Err(read_of_null("enabled")),
        Some(options) => {
            let defaults = TextConfig::default();
            let pick = |name: &str, fallback: Value| match own(options, name) {
                None | Some(Value::Null) => fallback,
                Some(v) => v.clone(),
            };
            Ok(TextConfig {
                enabled: pick("enabled", defaults.enabled),
                max_period_tokens: pick("maxPeriodTokens", defaults.max_period_tokens),
                min_repeats: pick("minRepeats", defaults.min_repeats),
                min_covered_tokens: pick("minCoveredTokens", defaults.min_covered_tokens),
                max_window_tokens: pick("maxWindowTokens", defaults.max_window_tokens),
            })
        }
    }
}
