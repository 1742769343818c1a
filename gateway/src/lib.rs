//! # doom-loop-gateway
//!
//! The engine of a doom-loop guard that sits **outside** the agent: between
//! any client of the OpenAI chat completions, Responses or Anthropic
//! Messages APIs and the upstream that serves it. Every request of an agent
//! loop carries the whole conversation, so the gateway replays it through
//! the one session engine every adapter runs ([`doom_loop::session`]),
//! deterministically, with no state of its own, and decides what to do with
//! the request:
//!
//! - **observe**: forward it unchanged, with headers naming the verdict;
//! - **steer**: forward it with the guidance added as instructions;
//! - **block**: forward it with each refused call's result replaced by the
//!   verdict's text, so the model reads the refusal as it would in-process
//!   (the tool has already run: a gateway cannot stop it);
//! - **stop**: answer it without calling upstream — a final assistant
//!   message carrying the stop verdict, no tool calls, in the client's
//!   format — so the agent's loop ends the way it always ends. A new user
//!   message lifts the halt.
//!
//! This crate is that decision alone, bytes in and bytes out: no I/O, no
//! clock, no randomness. The HTTP layers (the npm package's fetch handler
//! and `doomloop proxy`, a Cloudflare Worker) are glue over [`decide`],
//! compiled to wasm; a request the gateway cannot read, or any error of its
//! own, forwards the request unchanged with one log line (fail open).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod answer;
pub mod api;
mod raw;
pub mod read;
pub mod rewrite;

use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
use doom_loop::fingerprint::sha256_hex;
use doom_loop::json::{parse, to_json, Object, Value};
use doom_loop::ladder::Action as Rung;
use doom_loop::monitor::Verdict;
use doom_loop::session::{CallAction, Capabilities, Session, SessionOptions};
use doom_loop::JsString;
use doom_loop_trace::import::{Conversation, Resume};
use doom_loop_trace::replay::round_response;
use indexmap::IndexMap;
use std::collections::HashMap;

pub use answer::Answer;
pub use api::{route, Api};
pub use read::Request;
pub use rewrite::Refusal;

/// How the gateway decides.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayOptions {
    /// The `doomLoop` option (`RECOMMENDED_DOOM_LOOP_OPTION` by default;
    /// `true`: the reference's defaults).
    pub option: Value,
    /// Per-tool `loopKey` declarations (field lists or `false`).
    pub loop_keys: Object,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            option: recommended_doom_loop_option(),
            loop_keys: Object::new(),
        }
    }
}

/// What to do with the request.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Forward the request's own bytes, unchanged.
    Forward,
    /// Forward this body instead (refused results replaced, guidance added).
    Rewrite(String),
    /// Do not call upstream: answer with this.
    Answer(Answer),
}

/// The gateway's decision for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Forward, forward rewritten, or answer.
    pub action: Action,
    /// Response headers to add (`x-doomloop-*`), whatever the action.
    pub headers: Vec<(String, String)>,
    /// Lines for the gateway's log: what it decided and why (never a
    /// body, never a header's value).
    pub log: Vec<String>,
}

impl Decision {
    fn forward(log: Vec<String>) -> Decision {
        Decision {
            action: Action::Forward,
            headers: Vec::new(),
            log,
        }
    }

    /// The decision as JSON, for the bindings (wasm, Python): `{action:
    /// "forward"|"rewrite"|"answer", body?, contentType?, headers: [[name,
    /// value]], log: [line]}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"action\":");
        match &self.action {
            Action::Forward => push_string("forward", &mut out),
            Action::Rewrite(body) => {
                push_string("rewrite", &mut out);
                out.push_str(",\"body\":");
                push_string(body, &mut out);
            }
            Action::Answer(answer) => {
                push_string("answer", &mut out);
                out.push_str(",\"contentType\":");
                push_string(answer.content_type, &mut out);
                out.push_str(",\"body\":");
                push_string(&answer.body, &mut out);
            }
        }
        out.push_str(",\"headers\":[");
        for (i, (name, value)) in self.headers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            push_string(name, &mut out);
            out.push(',');
            push_string(value, &mut out);
            out.push(']');
        }
        out.push_str("],\"log\":[");
        for (i, line) in self.log.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(line, &mut out);
        }
        out.push_str("]}");
        out
    }
}

fn push_string(s: &str, out: &mut String) {
    doom_loop::json::write_json_string(&JsString::from(s), out);
}

/// Decides one request of `api` whose body is `body`: a pure function of
/// the body and the options (the same request always gets the same
/// answer). Never fails: a body it cannot read, or an option it cannot
/// resolve, forwards the request unchanged with a log line saying why.
/// Replays the whole conversation; [`Gateway`] keeps earlier prefixes.
pub fn decide(api: Api, body: &[u8], options: &GatewayOptions) -> Decision {
    Gateway::new(options.clone(), 0).decide(api, body)
}

/// The engine's state after a conversation's first rounds, and what those
/// rounds decided: enough to go on from there as if they were replayed.
#[derive(Clone, Debug)]
struct Snapshot {
    /// The engine itself, not its persisted state: a copy goes on exactly
    /// as the original would, without a serialize and parse per request.
    session: Session,
    refusals: Vec<Refusal>,
    last_verdicts: Vec<Verdict>,
    guidance: Option<JsString>,
    /// The rounds those messages hold.
    rounds: usize,
    /// How many messages (Responses: input items) were read.
    items: usize,
    /// Where reading them stopped, to read the next request's on from there.
    resume: Resume,
}

/// The gateway with a bounded cache of conversation prefixes: an agent's
/// next request carries the previous one's messages plus the new ones, so
/// the engine's state after the previous request (keyed by a digest of the
/// options, the API and the text of each message as it appears in the
/// body) lets it build values for, read and replay only what is new. A
/// client that writes a message's JSON differently from one request to the
/// next (other key order, other spacing) misses the cache and gets the
/// whole replay: the same decision, at its cost. The decisions are the
/// same as [`decide`]'s, cache or not (a property the tests check); the
/// least recently used prefix is dropped past `capacity`.
#[derive(Clone, Debug)]
pub struct Gateway {
    options: GatewayOptions,
    seed: String,
    capacity: usize,
    cache: IndexMap<u128, Snapshot>,
    /// How many cached prefixes end after each number of messages: only
    /// there is a request's digest worth taking.
    lengths: HashMap<usize, usize>,
}

impl Gateway {
    /// A gateway deciding under `options`, keeping up to `capacity`
    /// conversation prefixes (0: none).
    pub fn new(options: GatewayOptions, capacity: usize) -> Gateway {
        let seed = sha256_hex(
            format!(
                "{}\n{}",
                to_json(&options.option),
                to_json(&Value::Object(options.loop_keys.clone()))
            )
            .as_bytes(),
        );
        Gateway {
            options,
            seed,
            capacity,
            cache: IndexMap::new(),
            lengths: HashMap::new(),
        }
    }

    /// The options it decides under.
    pub fn options(&self) -> &GatewayOptions {
        &self.options
    }

    /// How many conversation prefixes it keeps now.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// [`decide`], going on from the longest cached prefix of the
    /// request's conversation, and caching the whole of it.
    pub fn decide(&mut self, api: Api, body: &[u8]) -> Decision {
        match self.try_decide(api, body) {
            Ok(decision) => decision,
            Err(why) => Decision::forward(vec![format!("{} request forwarded unguarded: {why}", api.name())]),
        }
    }
}

/// Where a replay starts: the engine made for it, or a cached prefix.
type Start = Option<Snapshot>;

/// Where a replay's end is kept: the digest of the request's messages,
/// how many there are, and where reading them stopped.
type Save = Option<(u128, usize, Resume)>;

/// What replaying the conversation found.
struct Replay {
    rounds: usize,
    refusals: Vec<Refusal>,
    /// Verdicts of the last round (its calls, their results, its text).
    last_verdicts: Vec<Verdict>,
    guidance: Option<JsString>,
    halt: Option<JsString>,
    warnings: Vec<String>,
}

impl Gateway {
    fn try_decide(&mut self, api: Api, body: &[u8]) -> Result<Decision, String> {
        let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_string())?;
        let raw = (self.capacity > 0).then(|| raw::read(api, text)).flatten();
        let digests = raw.as_ref().map(|raw| self.digests(api, &raw.items));
        let warm = raw.as_ref().zip(digests).and_then(|(raw, (cached, digest))| {
            let (done, key) = cached?;
            self.warm(api, raw, done, key, digest)
        });
        let (request, replay, value) = match warm {
            Some((request, replay)) => (request, replay, None),
            None => {
                let value = parse_body(text)?;
                let (request, resume) = read::read_resumable(api, &value)?;
                let save = raw
                    .as_ref()
                    .zip(digests)
                    .zip(resume)
                    .map(|((raw, (_, digest)), resume)| (digest, raw.items.len(), resume));
                let replay = self.replay(&request.conversation, None, save)?;
                (request, replay, Some(value))
            }
        };
        let mut log: Vec<String> = replay
            .warnings
            .iter()
            .map(|w| format!("{} request: {w}", api.name()))
            .collect();
        let mut headers = vec![("x-doomloop-rounds".to_string(), replay.rounds.to_string())];
        let strongest = replay.last_verdicts.iter().map(|v| v.action).max();
        for verdict in &replay.last_verdicts {
            log.push(format!(
                "{} request, round {}: {} (streak {}{})",
                api.name(),
                replay.rounds,
                verdict.action.as_str(),
                verdict.streak,
                verdict
                    .tool_name
                    .as_ref()
                    .map(|t| format!(", tool {}", t.to_utf8_lossy()))
                    .unwrap_or_default()
            ));
        }
        if let Some(halt) = &replay.halt {
            headers.push(("x-doomloop-verdict".into(), Rung::Stop.as_str().into()));
            log.push(format!(
                "{} request answered by the gateway: the run is halted",
                api.name()
            ));
            let id = answer::request_id(body);
            let answer = answer::answer(api, halt, request.model.as_ref(), request.stream, &id);
            return Ok(Decision {
                action: Action::Answer(answer),
                headers,
                log,
            });
        }
        if let Some(rung) = strongest {
            headers.push(("x-doomloop-verdict".into(), rung.as_str().into()));
        }
        if !replay.refusals.is_empty() {
            headers.push(("x-doomloop-refused".into(), replay.refusals.len().to_string()));
        }
        if replay.refusals.is_empty() && replay.guidance.is_none() {
            return Ok(Decision {
                action: Action::Forward,
                headers,
                log,
            });
        }
        // Values for the whole body only when it is rewritten (rarely).
        let value = match value {
            Some(value) => value,
            None => parse_body(text)?,
        };
        let rewritten = rewrite::rewrite(api, value, &replay.refusals, replay.guidance.as_ref());
        Ok(Decision {
            action: Action::Rewrite(to_json(&rewritten)),
            headers,
            log,
        })
    }
}

fn parse_body(text: &str) -> Result<Value, String> {
    parse(text).map_err(|e| format!("the body is not JSON ({})", e.message()))
}

/// The final message of a halted run: what stopped it, in the verdict's words.
fn stop_text(verdict: &Verdict) -> JsString {
    let mut text = JsString::from("This run was stopped by doom-loop detection.");
    if !verdict.message.is_empty() {
        text.push_str(" ");
        text.push_js(&verdict.message);
    }
    text
}

impl Gateway {
    /// The request and its replay going on from the cached prefix `key` of
    /// its first `done` messages, building values only for the messages
    /// after it (`digest`: of them all); or `None` (messages the prefix
    /// cannot be read on from): read the whole body.
    fn warm(
        &mut self,
        api: Api,
        raw: &raw::Raw<'_>,
        done: usize,
        key: u128,
        digest: u128,
    ) -> Option<(Request, Replay)> {
        let items = raw.items[done..]
            .iter()
            .map(|item| parse(item).ok())
            .collect::<Option<Vec<Value>>>()?;
        let (conversation, resume) = read::conversation_from(api, &items, &self.cache.get(&key)?.resume).ok()?;
        let model = match raw.model {
            Some(model) => parse(model).ok()?.as_js_string().cloned(),
            None => None,
        };
        let save = resume
            .filter(|_| raw.items.len() > done)
            .map(|resume| (digest, raw.items.len(), resume));
        // A conversation that goes on is kept once, at its latest state: the
        // prefix is taken, not copied (a request that branches from it
        // later is a whole replay). A retry, or a request cut inside a turn,
        // leaves it in place.
        let snapshot = match save {
            Some(_) => self.take(key)?,
            None => self.cache.get(&key)?.clone(),
        };
        let replay = self.replay(&conversation, Some(snapshot), save).ok()?;
        let request = Request {
            conversation,
            model,
            stream: raw.stream,
        };
        Some((request, replay))
    }

    /// The digest of the longest prefix of `items` that is cached (with its
    /// length), and the digest of them all: the options, the API, then each
    /// message's text, its length first.
    fn digests(&self, api: Api, items: &[&str]) -> (Option<(usize, u128)>, u128) {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.seed.as_bytes());
        hasher.update(api.name().as_bytes());
        let mut cached = None;
        for (i, item) in items.iter().enumerate() {
            hasher.update(&(item.len() as u64).to_le_bytes());
            hasher.update(item.as_bytes());
            if self.lengths.contains_key(&(i + 1)) {
                let digest = digest128(&hasher);
                if self.cache.contains_key(&digest) {
                    cached = Some((i + 1, digest));
                }
            }
        }
        (cached, digest128(&hasher))
    }

    /// Replays the conversation through the session engine as an in-process
    /// adapter would have lived it: per turn, a user message before it lifts
    /// a halt; the turn's calls are one round; the results of the calls the
    /// engine let run feed it (a refused call's result is what the refusal
    /// replaces); the guidance after the last turn goes with this request.
    /// From `start` (a cached prefix, the conversation then being what its
    /// messages are followed by) when there is one; the state at the end is
    /// cached as `save` says.
    fn replay(&mut self, conversation: &Conversation, start: Start, save: Save) -> Result<Replay, String> {
        let resolution = resolve_doom_loop_option(Some(&self.options.option));
        let mut warnings = resolution.warnings;
        let config = resolution
            .result
            .map_err(|e| format!("the option is invalid ({})", e.message()))?
            .ok_or("the option turns detection off")?;
        let session_options = SessionOptions {
            loop_keys: self.options.loop_keys.clone(),
            // A gateway cannot change the model a client asked for.
            capabilities: Capabilities {
                escalate: false,
                ..Capabilities::default()
            },
            ..SessionOptions::default()
        };
        let rounds = &conversation.rounds;
        let (done, items_done, mut session, mut refusals, mut last_verdicts, mut guidance) = match start {
            Some(snapshot) => (
                snapshot.rounds,
                snapshot.items,
                snapshot.session,
                snapshot.refusals,
                snapshot.last_verdicts,
                snapshot.guidance,
            ),
            None => (
                0,
                0,
                Session::new(config, session_options),
                Vec::new(),
                Vec::new(),
                None,
            ),
        };
        for (index, round) in rounds.iter().enumerate() {
            if round.after_user {
                session.on_user_turn();
            }
            let outcome = session.on_response(round_response(round, done + index + 1));
            let mut verdicts = outcome.verdicts;
            for (call, decision) in round.calls.iter().zip(&outcome.decisions) {
                if decision.action == CallAction::Refuse {
                    if let (Some(id), Some(text)) = (&call.id, &decision.message) {
                        refusals.push(Refusal {
                            id: id.clone(),
                            text: text.clone(),
                        });
                    }
                } else if call.result.is_some() || call.failed {
                    verdicts.extend(session.on_result(&decision.id, call.result.as_ref(), call.failed));
                }
            }
            guidance = session.next_request().guidance;
            last_verdicts = verdicts;
            warnings.extend(session.take_warnings());
        }
        if let Some((key, items, resume)) = save.filter(|(_, items, _)| *items > items_done) {
            self.remember(
                key,
                Snapshot {
                    // A copy, not the engine itself: copying keeps only the
                    // state it persists (a quarter less memory under the
                    // recommended option).
                    session: session.clone(),
                    refusals: refusals.clone(),
                    last_verdicts: last_verdicts.clone(),
                    guidance: guidance.clone(),
                    rounds: done + rounds.len(),
                    items,
                    resume,
                },
            );
        }
        if conversation.ends_with_user_turn {
            session.on_user_turn();
            last_verdicts.clear();
            guidance = None;
        }
        Ok(Replay {
            rounds: done + rounds.len(),
            refusals,
            last_verdicts,
            guidance,
            halt: session.halt().map(stop_text),
            warnings,
        })
    }

    /// Keeps `snapshot` as the most recently used prefix, dropping the least
    /// recently used past the capacity.
    fn remember(&mut self, key: u128, snapshot: Snapshot) {
        self.take(key);
        *self.lengths.entry(snapshot.items).or_default() += 1;
        self.cache.insert(key, snapshot);
        while self.cache.len() > self.capacity {
            if let Some((_, old)) = self.cache.shift_remove_index(0) {
                self.forget(old.items);
            }
        }
    }

    /// Takes the prefix `key` out of the cache.
    fn take(&mut self, key: u128) -> Option<Snapshot> {
        let snapshot = self.cache.shift_remove(&key)?;
        self.forget(snapshot.items);
        Some(snapshot)
    }

    /// One cached prefix of `items` messages fewer.
    fn forget(&mut self, items: usize) {
        if let Some(count) = self.lengths.get_mut(&items) {
            *count -= 1;
            if *count == 0 {
                self.lengths.remove(&items);
            }
        }
    }
}

/// The first 128 bits of what `hasher` has read so far (it reads on after):
/// a collision still takes about 2^64 work, out of any client's reach.
fn digest128(hasher: &blake3::Hasher) -> u128 {
    let mut first = [0u8; 16];
    first.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    u128::from_le_bytes(first)
}
