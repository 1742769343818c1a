//! The detector behind the hook, behind the four calls of the session
//! engine contract (`on_response`, `on_result`, `on_user_turn`, `state`):
//! the hook translates events into these calls and persists the state;
//! what a call is worth is decided here.

use doom_loop::config::resolve_doom_loop_option;
use doom_loop::loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
use doom_loop::json::{Object, Value};
use doom_loop::ladder::Action;
use doom_loop::monitor::{DeclaredCall, DoomLoopMonitor, RecordOptions, Verdict};
use doom_loop::JsString;

/// One call of a response.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The agent's id for it.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
}

/// What the engine decided for one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Refuse the call (block or stop).
    pub refuse: bool,
    /// The verdict, when a rung was reached.
    pub verdict: Option<Verdict>,
}

/// The engine of one session.
pub struct Engine {
    monitor: DoomLoopMonitor,
    loop_keys: Object,
    round: f64,
    /// Per call id of the last response: tool and fingerprint.
    calls: Vec<(String, JsString, JsString)>,
    guidance: Option<String>,
    halt: Option<Verdict>,
}

const STATE_KEY: &str = "doomLoop";
const ROUND_KEY: &str = "round";

impl Engine {
    /// An engine for `option` resumed from `state` (`Null`: fresh). Warnings
    /// are the config's and the restore's.
    ///
    /// # Errors
    /// The option is invalid or turns detection off.
    pub fn restore(option: &Value, loop_keys: &Object, state: &Value) -> Result<(Engine, Vec<String>), String> {
        let resolution = resolve_doom_loop_option(Some(option));
        let mut warnings = resolution.warnings;
        let config = resolution
            .result
            .map_err(|e| e.to_string())?
            .ok_or("the option turns detection off")?;
        let mut monitor = DoomLoopMonitor::new(config);
        let mut round = 0.0;
        if let Some(object) = state.as_object() {
            if let Some(inner) = object.get(STATE_KEY) {
                warnings.extend(monitor.restore(inner));
            }
            round = object
                .get(ROUND_KEY)
                .and_then(Value::as_f64)
                .filter(|r| r.is_finite() && *r >= 0.0)
                .unwrap_or(0.0);
        }
        Ok((
            Engine {
                monitor,
                loop_keys: loop_keys.clone(),
                round,
                calls: Vec::new(),
                guidance: None,
                halt: None,
            },
            warnings,
        ))
    }

    /// One model response: its calls, decided together (identical calls
    /// in one response count once and share the first one's decision).
    pub fn on_response(&mut self, calls: &[Call], warnings: &mut Vec<String>) -> Vec<Decision> {
        self.round += 1.0;
        let round = self.round;
        let keys: Vec<Value> = calls.iter().map(|c| self.identity(c)).collect();
        let declared: Vec<DeclaredCall> = calls
            .iter()
            .zip(&keys)
            .map(|(c, key)| DeclaredCall {
                tool_name: JsString::from(c.tool.as_str()),
                key_material: key.clone(),
            })
            .collect();
        warnings.extend(self.monitor.declare_round(round, &declared));
        self.calls.clear();
        let mut decided: Vec<(JsString, Decision)> = Vec::new();
        let mut out = Vec::with_capacity(calls.len());
        for (call, key) in calls.iter().zip(&keys) {
            let tool = JsString::from(call.tool.as_str());
            let record = match self.monitor.record_tool_call(
                &tool,
                key,
                round,
                &RecordOptions::default(),
            ) {
                Ok(record) => record,
                Err(error) => {
                    warnings.push(format!(
                        "[DoomLoop] could not fingerprint a \"{}\" call; not tracking it: {error}",
                        call.tool
                    ));
                    out.push(Decision {
                        refuse: false,
                        verdict: None,
                    });
                    continue;
                }
            };
            self.calls
                .push((call.id.clone(), tool, record.fingerprint.clone()));
            if record.duplicate_in_round {
                if let Some((_, first)) = decided.iter().find(|(f, _)| *f == record.fingerprint) {
                    out.push(first.clone());
                    continue;
                }
            }
            let decision = self.decide(record.verdict);
            decided.push((record.fingerprint, decision.clone()));
            out.push(decision);
        }
        out
    }

    /// The call's key material: its tool's loop key fields, else all arguments.
    fn identity(&self, call: &Call) -> Value {
        let declaration = match self.loop_keys.get(&call.tool) {
            Some(v) => LoopKey::Declared(v),
            None => LoopKey::Absent,
        };
        match resolve_loop_key_material(declaration, &call.args) {
            Ok(LoopKeyResolution::Key(key)) => key,
            Ok(LoopKeyResolution::Fallback { key_material, .. }) => key_material,
            _ => call.args.clone(),
        }
    }

    fn decide(&mut self, verdict: Option<Verdict>) -> Decision {
        let action = verdict.as_ref().map(|v| v.action);
        if let Some(v) = &verdict {
            match v.action {
                Action::Steer | Action::Escalate if self.guidance.is_none() => {
                    self.guidance = Some(v.message.to_utf8_lossy().into_owned());
                }
                Action::Stop if self.halt.is_none() => self.halt = Some(v.clone()),
                _ => {}
            }
        }
        Decision {
            refuse: matches!(action, Some(Action::Block | Action::Stop)),
            verdict,
        }
    }

    /// A call's result (`failed`: an error result).
    pub fn on_result(
        &mut self,
        id: &str,
        output: &Value,
        failed: bool,
        warnings: &mut Vec<String>,
    ) -> Option<Verdict> {
        let (_, tool, fingerprint) = self.calls.iter().find(|(i, _, _)| i == id)?.clone();
        let verdict = self
            .monitor
            .record_tool_result(&tool, &fingerprint, Some(output), failed, self.round)
            .unwrap_or_else(|error| {
                warnings.push(format!(
                    "[DoomLoop] the result of a \"{tool}\" call cannot be fingerprinted: {error}"
                ));
                None
            });
        if let Some(v) = &verdict {
            self.decide(Some(v.clone()));
        }
        verdict
    }

    /// A new user message.
    pub fn on_user_turn(&mut self) {
        self.monitor.reset_text_streak();
    }

    /// Guidance for the next model request (steer), consumed once.
    pub fn take_guidance(&mut self) -> Option<String> {
        self.guidance.take()
    }

    /// The stop verdict, once one was reached.
    pub fn halt(&self) -> Option<&Verdict> {
        self.halt.as_ref()
    }

    /// The state to persist.
    pub fn state(&self) -> Value {
        Value::Object(Object::from_entries(vec![
            (JsString::from(STATE_KEY), self.monitor.get_state()),
            (JsString::from(ROUND_KEY), Value::Number(self.round)),
        ]))
    }
}
