//! The gateway engine's export (feature `trace`, in the full build only):
//! one LLM API request's body in, the decision out as JSON text — what to
//! forward or answer, the headers to add, the log lines. The npm package's
//! fetch handler, `doomloop proxy` and the Worker template are glue over
//! this one call; the decision itself is `doom_loop_gateway::decide`.

use doom_loop::{Error, ErrorKind, Value};
use std::cell::RefCell;

use doom_loop_gateway::{Api, Gateway, GatewayOptions};
use wasm_bindgen::prelude::*;

use crate::{lowered, Result};

/// Conversation prefixes kept per set of options: an agent's next request
/// goes on from its previous one instead of replaying it whole.
const PREFIXES: usize = 256;
/// Sets of options with a cache of their own (a process usually has one).
const CONFIGS: usize = 4;

thread_local! {
    /// The instance's gateways, most recently used last.
    static GATEWAYS: RefCell<Vec<Gateway>> = const { RefCell::new(Vec::new()) };
}

/// Decides with the cached gateway of `options` (made, and the least
/// recently used one dropped, when there is none).
fn decide_cached(api: Api, body: &[u8], options: GatewayOptions) -> doom_loop_gateway::Decision {
    GATEWAYS.with(|gateways| {
        let Ok(mut gateways) = gateways.try_borrow_mut() else {
            // Re-entered (never, from JS): decide without the cache.
            return doom_loop_gateway::decide(api, body, &options);
        };
        let mut gateway = match gateways.iter().position(|g| *g.options() == options) {
            Some(at) => gateways.remove(at),
            None => Gateway::new(options, PREFIXES),
        };
        let decision = gateway.decide(api, body);
        gateways.push(gateway);
        if gateways.len() > CONFIGS {
            gateways.remove(0);
        }
        decision
    })
}

/// Decides one request: `api` is `chat`, `responses` or `anthropic`,
/// `option` and `loop_keys` the JSON text of the `doomLoop` option
/// (`undefined`: `RECOMMENDED_DOOM_LOOP_OPTION`) and of the per-tool loop
/// keys. Answers `{action: "forward"|"rewrite"|"answer", body?,
/// contentType?, headers: [[name, value]], log: [line]}`.
#[wasm_bindgen(js_name = gatewayDecide)]
pub fn gateway_decide(api: &str, body: &[u8], option: Option<String>, loop_keys: Option<String>) -> Result<String> {
    let api = Api::from_name(api).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("unknown API {api:?}: chat, responses or anthropic"),
        )
    })?;
    let mut options = GatewayOptions::default();
    if let Some(option) = option {
        options.option = lowered(&option)?;
    }
    if let Some(loop_keys) = loop_keys {
        match lowered(&loop_keys)? {
            Value::Object(keys) => options.loop_keys = keys,
            _ => return Err(Error::new(ErrorKind::InvalidArgument, "loopKeys must be an object").into()),
        }
    }
    Ok(decide_cached(api, body, options).to_json())
}

/// The API a request speaks (`chat`, `responses`, `anthropic`) from its
/// method and path, or `undefined`: it passes through.
#[wasm_bindgen(js_name = gatewayRoute)]
pub fn gateway_route(method: &str, path: &str) -> Option<String> {
    doom_loop_gateway::route(method, path).map(|api| api.name().to_string())
}
