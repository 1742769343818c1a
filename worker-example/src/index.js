// Cloudflare Worker: an OpenRouter agent guarded by doom-loop-wasm.
//
//   POST /chat {conversationId, message}  -> one agent turn (tool rounds until
//        the model answers, the step cap, or the doom-loop detector stops it)
//   GET  /state/:conversationId           -> the stored detector blob
//        (ConversationState.doomLoop), or 404 when the conversation has none
//
// Each conversation lives in its own Durable Object (`Conversation`), which
// runs that conversation's turns one at a time and keeps its
// ConversationState — detector evidence included — in its storage.

import { DurableObject } from 'cloudflare:workers';
import { ConfigError, STATE_KEY, runAgentTurn } from './agent.js';

const MAX_ID_LENGTH = 256;
const MAX_MESSAGE_LENGTH = 32_000;

export class Conversation extends DurableObject {
  /** Tail of this conversation's turn queue: concurrent /chat requests run one after another. */
  #tail = Promise.resolve();

  /** RPC: one agent turn. */
  chat(message) {
    const turn = this.#tail.then(() => runAgentTurn({ env: this.env, storage: this.ctx.storage, message }));
    this.#tail = turn.catch(() => {});
    return turn;
  }

  /** RPC: the persisted detector blob (`ConversationState.doomLoop`), or null. */
  async doomLoopState() {
    const state = await this.ctx.storage.get(STATE_KEY);
    return state?.doomLoop ?? null;
  }

  /** RPC: the whole stored ConversationState, or null (maintenance; not routed from HTTP). */
  async conversationState() {
    return (await this.ctx.storage.get(STATE_KEY)) ?? null;
  }

  /**
   * RPC: replaces the stored ConversationState (maintenance — migrations,
   * repairs, tests; not routed from HTTP). Waits for a running turn first.
   */
  replaceConversationState(state) {
    const write = this.#tail.then(() => this.ctx.storage.put(STATE_KEY, state));
    this.#tail = write.catch(() => {});
    return write;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/chat') {
      if (request.method !== 'POST') return json({ error: 'use POST /chat' }, 405, { allow: 'POST' });
      let body;
      try {
        body = await request.json();
      } catch {
        return json({ error: 'the body must be JSON: {"conversationId": "...", "message": "..."}' }, 400);
      }
      const { conversationId, message } = body ?? {};
      const idError = checkId(conversationId);
      if (idError) return json({ error: idError }, 400);
      if (typeof message !== 'string' || message === '' || message.length > MAX_MESSAGE_LENGTH) {
        return json({ error: `message must be a non-empty string of at most ${MAX_MESSAGE_LENGTH} characters` }, 400);
      }
      try {
        const outcome = await conversation(env, conversationId).chat(message);
        return json({ conversationId, ...outcome });
      } catch (error) {
        const config = error instanceof ConfigError || /OPENROUTER_API_KEY is not set/.test(String(error?.message));
        console.error(`[worker] /chat ${conversationId} failed:`, error);
        return json({ conversationId, error: String(error?.message ?? error) }, config ? 500 : 502);
      }
    }
    const match = /^\/state\/([^/]+)$/.exec(url.pathname);
    if (match) {
      if (request.method !== 'GET') return json({ error: 'use GET /state/:conversationId' }, 405, { allow: 'GET' });
      let conversationId;
      try {
        conversationId = decodeURIComponent(match[1]);
      } catch {
        return json({ error: 'bad conversation id encoding' }, 400);
      }
      const idError = checkId(conversationId);
      if (idError) return json({ error: idError }, 400);
      const blob = await conversation(env, conversationId).doomLoopState();
      if (blob === null) return json({ error: `no detector state stored for conversation "${conversationId}"` }, 404);
      return json(blob);
    }
    return json({ error: 'not found: POST /chat or GET /state/:conversationId' }, 404);
  },
};

function conversation(env, conversationId) {
  return env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversationId));
}

function checkId(conversationId) {
  if (typeof conversationId !== 'string' || conversationId === '' || conversationId.length > MAX_ID_LENGTH) {
    return `conversationId must be a non-empty string of at most ${MAX_ID_LENGTH} characters`;
  }
  return undefined;
}

function json(value, status = 200, headers = {}) {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}
