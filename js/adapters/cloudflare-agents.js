// Cloudflare `agents` adapter: doom-loop detection for an AIChatAgent
// (`@cloudflare/ai-chat`) in a Durable Object, whose `onChatMessage` runs the
// AI SDK's streamText / generateText. The detection is the AI SDK adapter's
// (doom-loop-wasm/ai-sdk); what this adds is where the detector state lives:
// in the agent's own state (`this.state.doomLoop`, written with
// `this.setState`), so it is persisted with the Durable Object, synced to
// connected clients, and every chat turn of the conversation continues the
// streaks. No SDK is imported.

import { createDoomLoop, SUPPORTED_AI_SDK_VERSIONS } from './ai-sdk.js';

/** The `agents` versions this adapter is tested against (with `@cloudflare/ai-chat` 0.12). */
export const SUPPORTED_AGENTS_VERSIONS = '0.32.x';
export { SUPPORTED_AI_SDK_VERSIONS };

const isRecord = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The detector for one chat turn of `agent` (call it in `onChatMessage`):
 * restored from `agent.state[stateKey]`, written back with `agent.setState`
 * after every step and when the turn ends. Wrap the turn's streamText /
 * generateText options with the returned guard's `.wrap(options)`.
 *
 * @param {{ state?: unknown, setState?: (state: unknown) => void }} agent the AIChatAgent (or any Agent)
 * @param {object} [options] the AI SDK adapter's options, plus `stateKey` (default `'doomLoop'`)
 */
export function doomLoopChat(agent, options = {}) {
  if (!isRecord(agent) || typeof agent.setState !== 'function') {
    throw new TypeError(
      'doom-loop-wasm/cloudflare-agents: doomLoopChat(agent, options) takes the Agent (an AIChatAgent of `agents` ' +
        `${SUPPORTED_AGENTS_VERSIONS}, whose state is written with this.setState)`,
    );
  }
  const { stateKey = 'doomLoop', ...rest } = isRecord(options) ? options : {};
  const stored = isRecord(agent.state) ? agent.state[stateKey] : undefined;
  const guard = createDoomLoop({ ...rest, ...(stored !== undefined && stored !== null && { state: stored }) });
  const save = () => {
    const state = guard.getState();
    if (state === undefined) return;
    try {
      agent.setState({ ...(isRecord(agent.state) ? agent.state : {}), [stateKey]: state });
    } catch (error) {
      console.warn('[DoomLoop] could not save the detector state with agent.setState; the run continues:', error);
    }
  };
  const wrap = guard.wrap.bind(guard);
  guard.wrap = (callOptions) => {
    const wrapped = wrap(callOptions);
    const { onStepFinish, onFinish } = callOptions ?? {};
    return {
      ...wrapped,
      onStepFinish: async (step) => {
        save();
        if (typeof onStepFinish === 'function') return onStepFinish(step);
      },
      onFinish: async (event) => {
        save();
        if (typeof onFinish === 'function') return onFinish(event);
      },
    };
  };
  guard.save = save;
  return guard;
}
