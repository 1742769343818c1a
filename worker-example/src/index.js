// Cloudflare Worker: a Cloudflare `agents` chat agent guarded by doom-loop-wasm.
//
//   POST /chat {conversationId, message}  -> one chat turn (tool rounds until
//        the model answers, the step cap, or the doom-loop detector stops it)
//   GET  /state/:conversationId           -> the stored detector blob
//        (the agent's state.doomLoop), or 404 when the conversation has none
//   /agents/billing-agent/:conversationId -> the agents SDK's own routes
//        (WebSocket chat for `useAgentChat` clients), via routeAgentRequest
//
// Each conversation is its own BillingAgent Durable Object (an AIChatAgent),
// which runs the conversation's turns one at a time and keeps its messages
// and its detector state.

import { getAgentByName, routeAgentRequest } from 'agents';
import { BillingAgent, ConfigError } from './agent.js';

export { BillingAgent };

const MAX_ID_LENGTH = 256;
const MAX_MESSAGE_LENGTH = 32_000;

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
        const agent = await getAgentByName(env.BillingAgent, conversationId);
        const outcome = await agent.chat(message);
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
      const agent = await getAgentByName(env.BillingAgent, conversationId);
      const blob = await agent.doomLoopState();
      if (blob === null) return json({ error: `no detector state stored for conversation "${conversationId}"` }, 404);
      return json(blob);
    }
    return (
      (await routeAgentRequest(request, env)) ??
      json({ error: 'not found: POST /chat, GET /state/:conversationId, or /agents/billing-agent/:id' }, 404)
    );
  },
};

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
