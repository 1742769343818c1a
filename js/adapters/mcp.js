// MCP loop keys: a `tools/list` result's server-advertised doom-loop
// identities (`_meta["openrouter/loopKey"]`) as the adapters' `loopKeys` map,
// with the reference's rule (@openrouter/mcp): only `false` or an array of
// strings is accepted (anything else is ignored), and a client-side entry
// keyed by the unprefixed MCP tool name wins over the server's.
// Its tool annotations (`readOnlyHint`, `destructiveHint`) map to the
// `loopEffects` the effect-aware streaks read, the same way — the rule the
// Rust core applies to the tools lists of replayed logs
// (doom_loop::effects::declared), both held to tests/fixtures/mcp-annotations.json.
// Data only: no MCP SDK import, no detection logic.

/** The `_meta` key an MCP server advertises a tool's loop identity under. */
export const MCP_LOOP_KEY_META = 'openrouter/loopKey';

/**
 * A server-advertised loop identity from a tool's `_meta`: a field-name list, `false`
 * (exempt), or `undefined` when the tool advertises none or an invalid shape.
 * @param {unknown} meta a tool definition's `_meta`
 * @returns {string[] | false | undefined}
 */
export function advertisedLoopKey(meta) {
  if (meta === null || typeof meta !== 'object') return undefined;
  const advertised = Object.hasOwn(meta, MCP_LOOP_KEY_META) ? meta[MCP_LOOP_KEY_META] : undefined;
  if (advertised === false) return false;
  if (Array.isArray(advertised) && advertised.every((field) => typeof field === 'string')) return [...advertised];
  return undefined;
}

/** The tool definitions of a `tools/list` result, a list of result pages, or a list of tools. */
function toolsOf(list, caller = 'mcpLoopKeys') {
  if (Array.isArray(list)) return list.flatMap((item) => (item && typeof item === 'object' && Array.isArray(item.tools) ? item.tools : [item]));
  if (list && typeof list === 'object' && Array.isArray(list.tools)) return list.tools;
  throw new TypeError(`${caller}: expected a tools/list result ({ tools: [...] }), a list of result pages, or a list of tools`);
}

/**
 * @typedef {object} McpLoopKeysOptions
 * @property {Record<string, unknown>} [loopKeys] Client-side loop keys by UNPREFIXED MCP tool
 *   name (any form: function, field list, `false`); an entry here wins over the server's.
 * @property {string | ((name: string) => string)} [prefix] How the agent names the MCP tools:
 *   a prefix (e.g. `'mcp__billing__'` for the Claude Agent SDK) or a function of the MCP name.
 *   The returned map is keyed by these names.
 */

/**
 * Turns an MCP `tools/list` result into the `loopKeys` map the adapters take (keyed by
 * the tool names the agent sees), from each tool's `_meta["openrouter/loopKey"]` and the
 * client-side `loopKeys`, with the reference's precedence and validation. Tools with
 * neither get no entry (the full arguments are their identity).
 *
 * @example
 * const { tools } = await client.listTools();
 * const loopKeys = mcpLoopKeys({ tools }, { prefix: 'mcp__files__', loopKeys: { poll_job: false } });
 * @param {unknown} toolsList a `tools/list` result, a list of result pages, or a list of tools
 * @param {McpLoopKeysOptions} [options]
 * @returns {Record<string, unknown>}
 */
export function mcpLoopKeys(toolsList, options = {}) {
  const { loopKeys, prefix } = options ?? {};
  const rename = typeof prefix === 'function' ? prefix : (name) => `${prefix ?? ''}${name}`;
  const client = loopKeys !== null && typeof loopKeys === 'object' ? loopKeys : undefined;
  const out = {};
  for (const tool of toolsOf(toolsList)) {
    if (!tool || typeof tool !== 'object' || typeof tool.name !== 'string') continue;
    const key = client !== undefined && Object.hasOwn(client, tool.name) ? client[tool.name] : advertisedLoopKey(tool._meta);
    if (key === undefined) continue;
    Object.defineProperty(out, rename(tool.name), { value: key, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * A tool's effect from its MCP annotations: `'read'` when `readOnlyHint` is `true`,
 * `'write'` when `readOnlyHint` is `false` or `destructiveHint` is `true` (it modifies its
 * environment), `undefined` otherwise (unknown: the effect-aware streaks leave it alone).
 * `idempotentHint` adds nothing: a write repeated with the same arguments is never counted
 * as a change. Hints that are not booleans are ignored; `onInvalid` is called with the
 * first one's name.
 * @param {unknown} annotations a tool definition's `annotations`
 * @param {(hint: string) => void} [onInvalid]
 * @returns {'read' | 'write' | undefined}
 */
export function annotatedLoopEffect(annotations, onInvalid) {
  if (annotations === null || typeof annotations !== 'object') return undefined;
  const hint = (name) => {
    const value = Object.hasOwn(annotations, name) ? annotations[name] : undefined;
    if (value === undefined || typeof value === 'boolean') return value;
    onInvalid?.(name);
    return undefined;
  };
  const readOnly = hint('readOnlyHint');
  const destructive = hint('destructiveHint');
  hint('idempotentHint');
  if (readOnly === true) return 'read';
  if (readOnly === false || destructive === true) return 'write';
  return undefined;
}

/**
 * Turns an MCP `tools/list` result into the `loopEffects` map the adapters take (keyed by
 * the tool names the agent sees), from each tool's `annotations` and the client-side
 * `loopEffects` (an entry keyed by the unprefixed MCP name wins). Tools with neither get no
 * entry. Annotations that are not booleans are ignored, with one warning per call.
 *
 * @example
 * const { tools } = await client.listTools();
 * const loopEffects = mcpLoopEffects({ tools }, { prefix: 'mcp__files__' });
 * @param {unknown} toolsList a `tools/list` result, a list of result pages, or a list of tools
 * @param {{ loopEffects?: Record<string, unknown>, prefix?: string | ((name: string) => string) }} [options]
 * @returns {Record<string, unknown>}
 */
export function mcpLoopEffects(toolsList, options = {}) {
  const { loopEffects, prefix } = options ?? {};
  const rename = typeof prefix === 'function' ? prefix : (name) => `${prefix ?? ''}${name}`;
  const client = loopEffects !== null && typeof loopEffects === 'object' ? loopEffects : undefined;
  const invalid = [];
  const out = {};
  for (const tool of toolsOf(toolsList, 'mcpLoopEffects')) {
    if (!tool || typeof tool !== 'object' || typeof tool.name !== 'string') continue;
    const effect = client !== undefined && Object.hasOwn(client, tool.name)
      ? client[tool.name]
      : annotatedLoopEffect(tool.annotations, (hint) => invalid.push(`${tool.name}.${hint}`));
    if (effect === undefined) continue;
    Object.defineProperty(out, rename(tool.name), { value: effect, enumerable: true, writable: true, configurable: true });
  }
  if (invalid.length > 0) {
    console.warn(`[DoomLoop] MCP tool annotations that are not booleans were ignored (${invalid.join(', ')}); those tools' effects are unknown unless another hint says.`);
  }
  return out;
}
