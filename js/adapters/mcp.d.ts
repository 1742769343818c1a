// Types of doom-loop-wasm/mcp: MCP tool definitions' advertised loop identities as `loopKeys`.
import type { LoopEffect, LoopKey } from '../index.js';

/** The `_meta` key an MCP server advertises a tool's loop identity under: `"openrouter/loopKey"`. */
export declare const MCP_LOOP_KEY_META: 'openrouter/loopKey';

/**
 * A server-advertised loop identity from a tool's `_meta`: a field-name list, `false` (exempt),
 * or `undefined` when none or an invalid shape is advertised (the reference's rule).
 * @param meta a tool definition's `_meta`
 */
export declare function advertisedLoopKey(meta: unknown): string[] | false | undefined;

/** Options of {@link mcpLoopKeys}. */
export interface McpLoopKeysOptions {
  /** Client-side loop keys by UNPREFIXED MCP tool name (any form); an entry here wins over the server's. */
  loopKeys?: Record<string, LoopKey | false | undefined>;
  /** How the agent names the MCP tools: a prefix (e.g. `'mcp__billing__'`) or a function of the MCP name. */
  prefix?: string | ((name: string) => string);
}

/** An MCP tool definition as `tools/list` returns it (only what this helper reads). */
export interface McpToolDefinition {
  /** The tool's MCP name. */
  name: string;
  /** Its metadata; `_meta["openrouter/loopKey"]` is read. */
  _meta?: Record<string, unknown>;
  /** Its annotations; `readOnlyHint` and `destructiveHint` are read by {@link mcpLoopEffects}. */
  annotations?: Record<string, unknown>;
}

/** A `tools/list` result (one page). */
export interface McpToolsListResult {
  /** The tool definitions of the page. */
  tools: McpToolDefinition[];
}

/**
 * The adapters' `loopKeys` map (keyed by the tool names the agent sees) from an MCP
 * `tools/list` result, a list of result pages, or a list of tools.
 * @param toolsList what `tools/list` returned
 * @param options client-side keys and the agent's tool naming
 */
export declare function mcpLoopKeys(toolsList: McpToolsListResult | ReadonlyArray<McpToolsListResult | McpToolDefinition>, options?: McpLoopKeysOptions): Record<string, LoopKey | false>;

/**
 * A tool's effect from its MCP annotations: `'read'` when `readOnlyHint` is `true`, `'write'`
 * when `readOnlyHint` is `false` or `destructiveHint` is `true`, else `undefined`. Hints that
 * are not booleans are ignored (`onInvalid` gets each one's name).
 */
export declare function annotatedLoopEffect(annotations: unknown, onInvalid?: (hint: string) => void): LoopEffect | undefined;

/** Options of {@link mcpLoopEffects}. */
export interface McpLoopEffectsOptions {
  /** Client-side effects by UNPREFIXED MCP tool name; an entry here wins over the annotations. */
  loopEffects?: Record<string, LoopEffect | undefined>;
  /** How the agent names the MCP tools: a prefix (e.g. `'mcp__billing__'`) or a function of the MCP name. */
  prefix?: string | ((name: string) => string);
}

/**
 * The adapters' `loopEffects` map (keyed by the tool names the agent sees) from an MCP
 * `tools/list` result's annotations; annotations that are not booleans are ignored with one warning.
 * @param toolsList what `tools/list` returned
 * @param options client-side effects and the agent's tool naming
 */
export declare function mcpLoopEffects(toolsList: McpToolsListResult | ReadonlyArray<McpToolsListResult | McpToolDefinition>, options?: McpLoopEffectsOptions): Record<string, LoopEffect>;
