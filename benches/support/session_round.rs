//! The run both the `session_round` bench group (benches/core.rs) and the
//! callgrind harness (examples/session_round.rs) measure: one call per
//! response through the session engine, as every adapter runs it — the
//! shim hands over the fingerprint of the call's small arguments
//! (`CallKey::Fingerprint`), the arguments distinct every response, a
//! fresh session every 64 responses (a run that makes progress).

use doom_loop::config::resolve_doom_loop_option;
use doom_loop::json::{parse, Value};
use doom_loop::session::{Call, CallKey, Response, RoundOutcome, Session, SessionOptions};
use doom_loop::{fingerprint_tool_call, JsString, ResolvedConfig};

/// Responses per session.
const RUN: usize = 64;

/// A run of one-call responses under one option.
pub struct OneCallRun {
    config: ResolvedConfig,
    session: Session,
    tool: JsString,
    fingerprints: Vec<JsString>,
    responses: usize,
}

impl OneCallRun {
    /// A run under `option` (the `doomLoop` option's value).
    pub fn new(option: &Value) -> Result<OneCallRun, Box<dyn std::error::Error>> {
        let config = resolve_doom_loop_option(Some(option))
            .result?
            .ok_or("detection is off")?;
        let tool = JsString::from("bash");
        let fingerprints = (0..RUN)
            .map(|i| {
                let args = parse(&format!(
                    r#"{{"command":"grep -rn TODO src/","cwd":"/home/user/project-{i}","timeout_ms":30000,"env":{{"LANG":"C","TERM":"dumb"}},"flags":["-i","--color=never"],"dry_run":false}}"#
                ))?;
                Ok(JsString::from(fingerprint_tool_call(&tool, &args)?))
            })
            .collect::<Result<Vec<_>, doom_loop::Error>>()?;
        Ok(OneCallRun {
            session: Session::new(config.clone(), SessionOptions::default()),
            config,
            tool,
            fingerprints,
            responses: 0,
        })
    }

    /// The next response, on a fresh session every [`RUN`] responses.
    pub fn respond(&mut self) -> RoundOutcome {
        let i = self.responses;
        self.responses += 1;
        if i % RUN == 0 {
            self.session = Session::new(self.config.clone(), SessionOptions::default());
        }
        let call = Call {
            id: JsString::from(format!("c{i}")),
            tool_name: self.tool.clone(),
            args: Value::Null,
            malformed: false,
            key: CallKey::Fingerprint(self.fingerprints[i % RUN].clone()),
        };
        self.session.on_response(Response {
            text: None,
            calls: vec![call],
        })
    }
}
