//! **The wiring**: which evidence rules a `doomLoop` option plugs into the
//! monitor. Above both the parity core, which resolves the reference's part
//! of the option and holds the rules opaquely ([`crate::evidence::Rules`]),
//! and the detectors, which implement them: the option's opt-in keys
//! (`outcomes`, `novelty`, `effects`, `repetition`, `cycles`, `ledger`,
//! `failures`, `budget` — keys the reference ignores) are read into a
//! [`BeyondConfig`] and plugged in here, and the recommended option is
//! chosen here. The public paths are `doom_loop::config::…`.

use crate::beyond::BeyondConfig;
use crate::error::Result;
use crate::json::Value;
use crate::parity::config::{resolve_reference_option, ConfigResolution, ResolvedConfig};

/// The reference's `resolveDoomLoopOption` (its configuration, warnings
/// and `TypeError`s, byte for byte), with the evidence rules the option's
/// opt-in keys turn on plugged in. `option` is `None` for `undefined`.
///
/// ```
/// use doom_loop::{config::resolve_doom_loop_option, json::parse};
/// let r = resolve_doom_loop_option(Some(&parse(r#"{"ladder":{"stop":false}}"#).unwrap()));
/// assert!(r.result.unwrap().is_some());
/// assert!(r.warnings[0].contains("block enabled with stop disabled"));
/// ```
pub fn resolve_doom_loop_option(option: Option<&Value>) -> ConfigResolution {
    let mut resolution = resolve_reference_option(option);
    if let Ok(Some(config)) = &mut resolution.result {
        config.beyond = BeyondConfig::from_option(option).into();
    }
    resolution
}

impl ResolvedConfig {
    /// Reads a resolved configuration back from its JSON shape (what
    /// [`ResolvedConfig::to_json`] writes, or a hand-built equivalent), with
    /// the reference's comparison semantics: a rung is off only when
    /// `false`, other values compare through `ToNumber`; the evidence rules
    /// are those of its `beyond` key.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Type`] when `ladder` or `text` is missing or not
    /// an object: the reference would throw on its first record.
    pub fn from_value(value: &Value) -> Result<ResolvedConfig> {
        let mut config = ResolvedConfig::from_reference_value(value)?;
        let beyond = value.as_object().and_then(|object| object.get("beyond"));
        config.beyond = BeyondConfig::from_option(beyond).into();
        Ok(config)
    }
}

/// The recommended `doomLoop` option, as JSON text: outcome-aware streaks
/// ([`crate::outcome`]), novelty-aware streaks ([`crate::novelty`]),
/// effect-aware streaks ([`crate::effects`]: they act only on the tools a
/// host declares `write` or `read`), in-response repetition ([`crate::repetition`]) and the reference's ladder
/// with its `stop` rung moved from 6 to 12 — what the evaluation on
/// recorded agent runs shows stops loops without interrupting agents that
/// make progress, and without ending a successful run (the other opt-in
/// detectors of [`crate::beyond`] did not earn a place; `docs/detectors.md`
/// says why, `docs/measured.md` has the numbers). The npm package exports
/// the same object under the same name (a test compares them).
pub const RECOMMENDED_DOOM_LOOP_OPTION: &str =
    r#"{"outcomes":true,"novelty":true,"repetition":true,"effects":true,"ladder":{"stop":12}}"#;

/// [`RECOMMENDED_DOOM_LOOP_OPTION`] as an option value.
///
/// ```
/// use doom_loop::beyond::BeyondConfig;
/// use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
/// let config = resolve_doom_loop_option(Some(&recommended_doom_loop_option())).result.unwrap().unwrap();
/// let beyond = BeyondConfig::of(&config);
/// assert!(beyond.outcomes.is_some() && beyond.novelty.is_some() && beyond.repetition.is_some());
/// assert!(beyond.effects);
/// assert_eq!(config.ladder.stop, doom_loop::ladder::Threshold::At(12.0));
/// ```
pub fn recommended_doom_loop_option() -> Value {
    match crate::json::parse(RECOMMENDED_DOOM_LOOP_OPTION) {
        Ok(option) => option,
        // A constant that parses (a unit test checks it); never taken.
        Err(_) => Value::Bool(true),
    }
}
