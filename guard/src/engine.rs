//! The session engine behind the hook ([`doom_loop::session::Session`]):
//! the hook translates each agent event into the engine's calls
//! (`on_response`, `on_result`, `on_user_turn`) and persists its state;
//! what a call is worth — identity, round, streak, rung, the text the
//! model reads — is decided there, by the one engine every adapter runs.

use doom_loop::config::resolve_doom_loop_option;
use doom_loop::json::{Object, Value};
use doom_loop::monitor::Verdict;
use doom_loop::session::{self, CallAction, Capabilities, Response, Session, SessionOptions};
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

/// What the hook declares about an agent's tools, by tool name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolDeclarations {
    /// `loopKeys`: what identifies a call.
    pub loop_keys: Object,
    /// `loopEffects`: which tools change what later calls observe.
    pub loop_effects: Object,
}

/// What the engine decided for one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Refuse the call (block or stop).
    pub refuse: bool,
    /// The text the model reads instead of the result, when refused.
    pub message: Option<String>,
    /// The rung the call's verdict reached (`observe` … `stop`), and its text.
    pub verdict: Option<(&'static str, String)>,
}

/// What the agents' hooks can do: refuse a call, stop the session, add
/// text the model reads (steer); none can change the model (escalate).
pub const CAPABILITIES: Capabilities = Capabilities {
    refuse: true,
    stop: true,
    steer: true,
    escalate: false,
};

/// The engine of one session.
pub struct Engine {
    session: Session,
}

impl Engine {
    /// An engine for `option` and the agent's `tools`, resumed from `state`
    /// (`Null`: fresh). Warnings are the config's and the restore's.
    ///
    /// # Errors
    /// The option is invalid or turns detection off.
    pub fn restore(option: &Value, tools: &ToolDeclarations, state: &Value) -> Result<(Engine, Vec<String>), String> {
        let resolution = resolve_doom_loop_option(Some(option));
        let mut warnings = resolution.warnings;
        let config = resolution
            .result
            .map_err(|e| e.to_string())?
            .ok_or("the option turns detection off")?;
        let options = SessionOptions {
            loop_keys: tools.loop_keys.clone(),
            loop_effects: tools.loop_effects.clone(),
            capabilities: CAPABILITIES,
        };
        let mut session = match state {
            Value::Null => Session::new(config, options),
            state => Session::restore(config, options, state),
        };
        warnings.extend(session.take_warnings());
        Ok((Engine { session }, warnings))
    }

    /// One model response's calls, decided together (identical calls in
    /// one response count once and share the first one's decision).
    pub fn on_response(&mut self, calls: &[Call], warnings: &mut Vec<String>) -> Vec<Decision> {
        let calls = calls
            .iter()
            .map(|c| session::Call::new(c.id.as_str(), c.tool.as_str(), c.args.clone()))
            .collect();
        let outcome = self.session.on_response(Response { text: None, calls });
        warnings.extend(self.session.take_warnings());
        outcome
            .decisions
            .into_iter()
            .map(|d| Decision {
                refuse: d.action == CallAction::Refuse,
                message: d.message.map(|m| m.to_utf8_lossy().into_owned()),
                verdict: d
                    .verdict
                    .map(|v| (v.action.as_str(), v.message.to_utf8_lossy().into_owned())),
            })
            .collect()
    }

    /// A call's result (`failed`: an error result); a second one for the
    /// same call is ignored.
    pub fn on_result(&mut self, id: &str, output: &Value, failed: bool, warnings: &mut Vec<String>) -> Option<Verdict> {
        let verdict = self.session.on_result(&JsString::from(id), Some(output), failed);
        warnings.extend(self.session.take_warnings());
        verdict
    }

    /// A new user message (lifts a halt; the streaks go on).
    pub fn on_user_turn(&mut self) {
        self.session.on_user_turn();
    }

    /// Guidance for the next model request (steer), consumed once.
    pub fn take_guidance(&mut self) -> Option<String> {
        self.session.take_guidance().map(|g| g.to_utf8_lossy().into_owned())
    }

    /// The stop verdict, once one was reached.
    pub fn halt(&self) -> Option<&Verdict> {
        self.session.halt()
    }

    /// The state to persist (the reference's shape plus the session's own).
    pub fn state(&self) -> Value {
        self.session.state()
    }
}
