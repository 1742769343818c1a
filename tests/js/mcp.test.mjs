// doom-loop-wasm/mcp: a tools/list result's `_meta["openrouter/loopKey"]` as
// the adapters' loopKeys map, with the reference's rule (@openrouter/mcp):
// only `false` or an all-string array is accepted; a client-side entry keyed
// by the unprefixed tool name wins. The e2e case lists tools from a real MCP
// SDK server (@modelcontextprotocol/sdk, in-memory transport).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const { mcpLoopKeys, advertisedLoopKey, MCP_LOOP_KEY_META } = await import(process.env.DOOM_LOOP_MCP ?? new URL('../../pkg/mcp.mjs', import.meta.url).href);

const def = (name, loopKey) => ({ name, inputSchema: { type: 'object', properties: {} }, ...(loopKey !== undefined && { _meta: { [MCP_LOOP_KEY_META]: loopKey } }) });

describe('advertisedLoopKey: the reference validation', () => {
  test('a field list and false are accepted', () => {
    assert.deepEqual(advertisedLoopKey({ 'openrouter/loopKey': ['command', 'cwd'] }), ['command', 'cwd']);
    assert.equal(advertisedLoopKey({ 'openrouter/loopKey': false }), false);
    assert.deepEqual(advertisedLoopKey({ 'openrouter/loopKey': [] }), []);
  });
  for (const [label, value] of [['truthy scalar', 'loop'], ['true', true], ['mixed-type array', ['command', 1]], ['nested object', { fields: ['command'] }], ['null', null], ['missing', undefined]]) {
    test(`ignored: ${label}`, () => {
      assert.equal(advertisedLoopKey(value === undefined ? {} : { 'openrouter/loopKey': value }), undefined);
    });
  }
  test('no _meta, or _meta not an object', () => {
    assert.equal(advertisedLoopKey(undefined), undefined);
    assert.equal(advertisedLoopKey('x'), undefined);
  });
});

describe('mcpLoopKeys', () => {
  const list = { tools: [def('run_command', ['command', 'cwd']), def('poll_job', false), def('search', 'bad'), def('read_file')] };

  test('server declarations by tool name; invalid or missing ones get no entry', () => {
    assert.deepEqual(mcpLoopKeys(list), { run_command: ['command', 'cwd'], poll_job: false });
  });

  test('a client-side entry keyed by the unprefixed name wins over the server', () => {
    const fn = (args) => args.query;
    const keys = mcpLoopKeys(list, { loopKeys: { run_command: false, search: fn, read_file: ['path'] }, prefix: 'mcp__dev__' });
    assert.deepEqual(Object.keys(keys).sort(), ['mcp__dev__poll_job', 'mcp__dev__read_file', 'mcp__dev__run_command', 'mcp__dev__search']);
    assert.equal(keys.mcp__dev__run_command, false);
    assert.equal(keys.mcp__dev__search, fn);
    assert.deepEqual(keys.mcp__dev__read_file, ['path']);
    assert.equal(keys.mcp__dev__poll_job, false);
  });

  test('a client key under the prefixed name is not the unprefixed one (the reference keys by MCP name)', () => {
    assert.deepEqual(mcpLoopKeys(list, { loopKeys: { mcp__dev__run_command: false }, prefix: 'mcp__dev__' }).mcp__dev__run_command, ['command', 'cwd']);
  });

  test('inherited names (toString) are not client entries', () => {
    assert.deepEqual(mcpLoopKeys({ tools: [def('toString', ['command'])] }, { loopKeys: {} }), { toString: ['command'] });
  });

  test('pages, plain tool lists, a prefix function, __proto__ as a name', () => {
    const pages = [{ tools: [def('a', ['x'])], nextCursor: 'c' }, { tools: [def('__proto__', false)] }];
    const keys = mcpLoopKeys(pages, { prefix: (n) => `svc_${n}` });
    assert.deepEqual(Object.keys(keys), ['svc_a', 'svc___proto__']);
    assert.deepEqual(mcpLoopKeys([def('b', false)]), { b: false });
    const own = mcpLoopKeys([def('__proto__', ['q'])]);
    assert.ok(Object.hasOwn(own, '__proto__'));
    assert.deepEqual(own.__proto__, ['q']);
  });

  test('a value that is not a tools/list result is a TypeError', () => {
    assert.throws(() => mcpLoopKeys(42), TypeError);
  });

  test('a real MCP server: tools/list over the MCP SDK carries _meta through', async () => {
    const server = new McpServer({ name: 'jobs', version: '1.0.0' });
    server.registerTool('run_command', { description: 'Run a command.', inputSchema: { command: z.string(), cwd: z.string() }, _meta: { 'openrouter/loopKey': ['command', 'cwd'] } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    server.registerTool('poll_job', { description: 'Poll a job.', inputSchema: { id: z.string() }, _meta: { 'openrouter/loopKey': false } }, async () => ({ content: [{ type: 'text', text: 'pending' }] }));
    server.registerTool('bad_meta', { description: 'Bad meta.', inputSchema: {}, _meta: { 'openrouter/loopKey': [1] } }, async () => ({ content: [] }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '1.0.0' });
    await Promise.all([server.connect(a), client.connect(b)]);
    try {
      const result = await client.listTools();
      assert.deepEqual(mcpLoopKeys(result, { prefix: 'mcp__jobs__' }), { mcp__jobs__run_command: ['command', 'cwd'], mcp__jobs__poll_job: false });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
