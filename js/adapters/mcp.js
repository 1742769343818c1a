// MCP loop keys: a `tools/list` result's server-advertised doom-loop
// identities (`_meta["openrouter/loopKey"]`) as the adapters' `loopKeys` map,
// with the reference's rule (@openrouter/mcp): only `false` or an array of
// strings is accepted (anything else is ignored), and a client-side entry
// keyed by the unprefixed MCP tool name wins over the server's.
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
function toolsOf(list) {
  if (Array.isArray(list)) return list.flatMap((item) => (item && typeof item === 'object' && Array.isArray(item.tools) ? item.tools : [item]));
  if (list && typeof list === 'object' && Array.isArray(list.tools)) return list.tools;
  throw new TypeError('mcpLoopKeys: expected a tools/list result ({ tools: [...] }), a list of result pages, or a list of tools');
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
