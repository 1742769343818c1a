// withLoopKey: a copy of the tool with its loop declarations where the
// adapter reads them; the tool passed in is left alone; bad input is a
// TypeError naming the argument. (End to end through the real SDK: the
// README's adapter example, run by tests/docs/check-docs.mjs.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tool } from '@openrouter/agent';
import { z } from 'zod';
import { withLoopKey } from '../../pkg/node.mjs';

const getInvoice = tool({
  name: 'get_invoice',
  inputSchema: z.object({ invoice_id: z.string() }),
  execute: async ({ invoice_id }) => ({ invoice_id }),
});

test('attaches loopKey and loopOutputKey to a copy of the tool', () => {
  const loopKey = ({ invoice_id }) => invoice_id.trim().toUpperCase();
  const keyed = withLoopKey(getInvoice, { loopKey, loopOutputKey: ['status'] });
  assert.notEqual(keyed, getInvoice);
  assert.equal(keyed.function.loopKey, loopKey);
  assert.deepEqual(keyed.function.loopOutputKey, ['status']);
  assert.equal(keyed.function.execute, getInvoice.function.execute);
  assert.equal(keyed.function.name, 'get_invoice');
  assert.equal(keyed.type, getInvoice.type);
  assert.equal('loopKey' in getInvoice.function, false, 'the original tool is not modified');
  assert.equal('loopOutputKey' in withLoopKey(getInvoice, { loopKey: false }).function, false);
});

test('rejects what is not a function tool, or keys that are not an object', () => {
  for (const bad of [null, undefined, 'get_invoice', {}, { function: null }]) {
    assert.throws(() => withLoopKey(bad, { loopKey: false }), { name: 'TypeError', message: /withLoopKey\(tool, keys\): tool must be/ });
  }
  for (const bad of [null, undefined, 'x']) {
    assert.throws(() => withLoopKey(getInvoice, bad), { name: 'TypeError', message: /keys must be an object/ });
  }
});
