// Executable evidence for tests/e2e/SDK-NOTES.md: how @openrouter/agent@0.8.0's
// callModel exposes its loop (callbacks, lifecycle hooks, stop conditions,
// per-turn parameter functions, state accessor), observed over real HTTP.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HooksManager, OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import { functionCall, inputText, startScriptedServer, text } from './scripted-server.mjs';
import { BILLING_INVOICE_ID, billingScenario } from './scenarios.mjs';

async function withServer(script, fn, options) {
  const srv = await startScriptedServer(script, options);
  try {
    return await fn(srv, new OpenRouter({ apiKey: 'test-key', serverURL: srv.url }));
  } finally {
    await srv.close();
  }
}

const repeatInvoice = () => functionCall('get_invoice', { invoice_id: BILLING_INVOICE_ID });

describe('loop order', () => {
  test('callbacks, hooks, per-turn functions and HTTP requests interleave in a fixed order', async () => {
    const trace = [];
    const script = (body, i) => {
      trace.push(`http#${i} instructions=${body.instructions}`);
      return i < 2 ? repeatInvoice() : text('done');
    };
    await withServer(script, async (srv, client) => {
      const scenario = billingScenario();
      const wrapped = tool({
        name: 'get_invoice',
        inputSchema: z.object({ invoice_id: z.string() }),
        execute: async (args, ctx) => {
          trace.push(`execute n=${ctx.numberOfTurns}`);
          return scenario.tools[0].function.execute(args, ctx);
        },
      });
      const result = client.callModel({
        model: 'm',
        input: 'hi',
        instructions: (ctx) => {
          trace.push(`instructions(${ctx.numberOfTurns})`);
          return `I${ctx.numberOfTurns}`;
        },
        tools: [wrapped],
        stopWhen: ({ steps }) => {
          trace.push(`stopWhen steps=${steps.length}`);
          return false;
        },
        onTurnStart: (ctx) => void trace.push(`onTurnStart(${ctx.numberOfTurns})`),
        onTurnEnd: (ctx, resp) => void trace.push(`onTurnEnd(${ctx.numberOfTurns}, ${resp.id})`),
        hooks: {
          SessionStart: [{ handler: () => void trace.push('SessionStart') }],
          PreToolUse: [{ handler: (p) => void trace.push(`PreToolUse ${p.toolName}`) }],
          PostToolUse: [{ handler: () => void trace.push('PostToolUse') }],
          PostToolUseFailure: [{ handler: () => void trace.push('PostToolUseFailure') }],
          PostModelCall: [{ handler: (p) => void trace.push(`PostModelCall ${p.turnType} ${p.turnNumber}`) }],
          SessionEnd: [{ handler: (p) => void trace.push(`SessionEnd ${p.reason}`) }],
        },
      });
      assert.equal(await result.getText(), 'done');
      assert.deepEqual(trace, [
        'instructions(0)',
        'SessionStart',
        'http#0 instructions=I0',
        'PostModelCall initial 0',
        'stopWhen steps=0',
        'onTurnStart(1)',
        'instructions(1)',
        'PreToolUse get_invoice',
        'execute n=1',
        'PostToolUseFailure',
        'http#1 instructions=I1',
        'PostModelCall tool_round 1',
        'onTurnEnd(1, resp_0001)',
        'stopWhen steps=1',
        'onTurnStart(2)',
        'instructions(2)',
        'PreToolUse get_invoice',
        'execute n=2',
        'PostToolUseFailure',
        'http#2 instructions=I2',
        'PostModelCall tool_round 2',
        'onTurnEnd(2, resp_0002)',
        'stopWhen steps=2', // evaluated even though the model just answered with text
        'SessionEnd complete',
      ]);
    });
  });

  test('`input` as a function is only honoured for the first request', async () => {
    await withServer((_b, i) => (i < 2 ? repeatInvoice() : text('done')), async (srv, client) => {
      const seen = [];
      const result = client.callModel({
        model: (ctx) => `m/${ctx.numberOfTurns}`,
        input: (ctx) => {
          seen.push(ctx.numberOfTurns);
          return [{ role: 'user', content: `input-${ctx.numberOfTurns}` }];
        },
        tools: billingScenario().tools,
      });
      await result.getText();
      assert.deepEqual(seen, [0, 1, 2]); // called every turn...
      assert.deepEqual(srv.requests.map((b) => b.model), ['m/0', 'm/1', 'm/2']);
      for (const body of srv.requests) {
        // ...but the accumulated conversation wins: later results are discarded.
        assert.deepEqual(body.input[0], { role: 'user', content: 'input-0' });
        assert.ok(!inputText(body).includes('input-1'));
      }
    });
  });
});

describe('PreToolUse', () => {
  test('block: "reason" skips execution and returns {"error": reason} to the model', async () => {
    const REASON = 'Blocked: identical get_invoice call already failed 2 times in a row.';
    // A reactive model: repeat until it reads the block reason, then give up.
    const model = (body) => (inputText(body).includes('Blocked:') ? text('giving up') : repeatInvoice());
    await withServer(model, async (srv, client) => {
      const scenario = billingScenario();
      const events = [];
      let seen = 0;
      const result = client.callModel({
        model: 'm',
        input: 'hi',
        tools: scenario.tools,
        stopWhen: stepCountIs(40),
        hooks: {
          PreToolUse: [
            {
              matcher: 'get_invoice',
              handler: (payload) => {
                seen++;
                return seen >= 3 ? { block: REASON } : undefined;
              },
            },
          ],
          PostToolUse: [{ handler: () => void events.push('PostToolUse') }],
          PostToolUseFailure: [{ handler: () => void events.push('PostToolUseFailure') }],
        },
      });
      assert.equal(await result.getText(), 'giving up');
      assert.equal(scenario.executions.length, 2); // third call never executed
      assert.deepEqual(events, ['PostToolUseFailure', 'PostToolUseFailure']); // nothing for the blocked call
      assert.equal(srv.requests.length, 4);
      const lastOutput = srv.requests[3].input.at(-1);
      assert.equal(lastOutput.type, 'function_call_output');
      assert.deepEqual(JSON.parse(lastOutput.output), { error: REASON });
    });
  });

  test('block: true uses a generic reason; mutatedInput rewrites arguments', async () => {
    await withServer(
      [
        [functionCall('get_invoice', { invoice_id: 'INV-1' }), functionCall('get_invoice', { invoice_id: 'INV-2' })],
        text('ok'),
      ],
      async (srv, client) => {
        const scenario = billingScenario();
        const result = client.callModel({
          model: 'm',
          input: 'hi',
          tools: scenario.tools,
          hooks: {
            PreToolUse: [
              {
                handler: (p) =>
                  p.toolInput.invoice_id === 'INV-1' ? { block: true } : { mutatedInput: { invoice_id: 'INV-2-fixed' } },
              },
            ],
          },
        });
        await result.getText();
        assert.deepEqual(scenario.executions.map((e) => e.invoice_id), ['INV-2-fixed']);
        const outputs = srv.requests[1].input.filter((i) => i.type === 'function_call_output');
        assert.deepEqual(JSON.parse(outputs[0].output), { error: 'Blocked by PreToolUse hook' });
        assert.match(JSON.parse(outputs[1].output).error, /INV-2-fixed/);
      },
    );
  });

  test('a throwing handler is swallowed by default; with throwOnHandlerError it becomes the tool error', async () => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      for (const strict of [false, true]) {
        await withServer([repeatInvoice(), text('ok')], async (srv, client) => {
          const scenario = billingScenario();
          const hooks = new HooksManager(undefined, { throwOnHandlerError: strict });
          hooks.on('PreToolUse', {
            handler: () => {
              throw new Error('detector exploded');
            },
          });
          await client.callModel({ model: 'm', input: 'hi', tools: scenario.tools, hooks }).getText();
          const out = JSON.parse(srv.requests[1].input.at(-1).output);
          if (strict) {
            assert.equal(scenario.executions.length, 0);
            assert.deepEqual(out, { error: 'detector exploded' });
          } else {
            assert.equal(scenario.executions.length, 1);
            assert.match(out.error, /timed out/);
          }
        });
      }
    } finally {
      console.warn = warn;
    }
  });
});

describe('edge cases a detector must know about', () => {
  test('unparseable arguments: synthetic error output, PreToolUse never fires', async () => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      await withServer(
        [functionCall('get_invoice', '{"invoice_id": INV-2291'), functionCall('get_invoice', '{"invoice_id": INV-2291'), text('ok')],
        async (srv, client) => {
          const scenario = billingScenario();
          let pre = 0;
          const result = client.callModel({
            model: 'm',
            input: 'hi',
            tools: scenario.tools,
            hooks: { PreToolUse: [{ handler: () => void pre++ }] },
          });
          assert.equal(await result.getText(), 'ok');
          assert.equal(pre, 0);
          assert.equal(scenario.executions.length, 0);
          assert.match(JSON.parse(srv.requests[2].input.at(-1).output).error, /Failed to parse tool call arguments/);
        },
      );
    } finally {
      console.warn = warn;
    }
  });

  test('a call to an undeclared tool ends the run with the call unexecuted', async () => {
    await withServer([functionCall('refund_invoice', { invoice_id: BILLING_INVOICE_ID })], async (srv, client) => {
      const result = client.callModel({ model: 'm', input: 'hi', tools: billingScenario().tools });
      const response = await result.getResponse();
      assert.equal(srv.requests.length, 1);
      assert.deepEqual(response.output.map((o) => o.name), ['refund_invoice']);
    });
  });
});

describe('stop conditions', () => {
  test('a custom stop condition sees steps with toolCalls/toolResults; stopping still runs the pending call', async () => {
    await withServer(
      (body) => (body.tool_choice === 'none' ? text('final') : repeatInvoice()),
      async (srv, client) => {
        const scenario = billingScenario();
        let lastSteps;
        const sameCallTwice = ({ steps }) => {
          lastSteps = steps;
          const keys = steps.map((s) => s.toolCalls.map((c) => `${c.name}:${JSON.stringify(c.arguments)}`).join('|'));
          return keys.length >= 3 && keys.at(-1) === keys.at(-2) && keys.at(-2) === keys.at(-3);
        };
        const result = client.callModel({ model: 'm', input: 'hi', tools: scenario.tools, stopWhen: [stepCountIs(40), sameCallTwice] });
        assert.equal(await result.getText(), 'final');
        // 1 initial + 3 follow-ups + 1 forced final; 3 rounds + the pending call of response #3.
        assert.equal(srv.requests.length, 5);
        assert.equal(scenario.executions.length, 4);
        const step = lastSteps.at(-1);
        assert.equal(step.stepType, 'continue');
        assert.deepEqual(step.toolCalls[0].arguments, { invoice_id: BILLING_INVOICE_ID });
        assert.equal(step.toolResults[0].toolName, 'get_invoice');
        assert.match(step.toolResults[0].result.error, /timed out/);
        assert.ok(step.usage.totalTokens > 0);
        assert.equal(typeof step.response.id, 'string');
      },
    );
  });

  test('Stop hook: appendPrompt reaches the final request; forceResume is capped at 3', async () => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      await withServer(
        (body) => (body.tool_choice === 'none' ? text('final') : repeatInvoice()),
        async (srv, client) => {
          const scenario = billingScenario();
          let stops = 0;
          const result = client.callModel({
            model: 'm',
            input: 'hi',
            tools: scenario.tools,
            stopWhen: stepCountIs(2),
            hooks: {
              Stop: [{ handler: (p) => (stops++, { forceResume: true, appendPrompt: `nudge-${stops} (${p.reason})` }) }],
            },
          });
          assert.equal(await result.getText(), 'final');
          assert.equal(stops, 4); // 3 honoured resumes + 1 refused
          // forceResume without new progress does not make new requests.
          assert.equal(srv.requests.length, 4);
          const finalInput = inputText(srv.requests.at(-1));
          for (let i = 1; i <= 4; i++) assert.ok(finalInput.includes(`nudge-${i} (max_turns)`));
        },
      );
    } finally {
      console.warn = warn;
    }
  });
});

describe('state accessor', () => {
  test('load/save shape, resume with history, and interruption via interruptedBy', async () => {
    let stored = null;
    const saves = [];
    const state = {
      load: async () => stored,
      save: async (s) => {
        saves.push(s.status);
        stored = structuredClone(s);
      },
    };
    await withServer(
      [repeatInvoice(), text('first answer'), text('second answer')],
      async (srv, client) => {
        const scenario = billingScenario();
        await client.callModel({ model: 'm', input: 'q1', tools: scenario.tools, state }).getText();
        assert.deepEqual(Object.keys(stored).sort(), [
          'createdAt', 'id', 'messages', 'previousResponseId', 'status', 'updatedAt', 'version',
        ]);
        assert.equal(stored.status, 'complete');
        assert.equal(stored.previousResponseId, 'resp_0001');
        assert.match(stored.id, /^conv_/);
        assert.deepEqual(stored.messages.map((m) => m.type ?? m.role), [
          'user', 'function_call', 'function_call_output', 'message',
        ]);
        stored.myDetector = { streak: 2 }; // foreign fields survive the SDK's updates
        await client.callModel({ model: 'm', input: 'q2', tools: scenario.tools, state }).getText();
        assert.deepEqual(stored.myDetector, { streak: 2 });
        // Second run sent the whole history plus the fresh user message.
        assert.deepEqual(srv.requests[2].input.map((m) => m.type ?? m.role), [
          'user', 'function_call', 'function_call_output', 'message', 'user',
        ]);
      },
    );

    // Interruption: the loop re-loads state before every round and stops if
    // `interruptedBy` is set, without calling the tool or the model again.
    stored = null;
    await withServer(
      () => repeatInvoice(),
      async (srv, client) => {
        const scenario = billingScenario();
        // The flag must come from load(): the SDK saves its own in-memory copy
        // after every step, so writing `interruptedBy` into the store is clobbered.
        let interruptedBy;
        const interrupting = {
          load: async () => (stored && interruptedBy ? { ...stored, interruptedBy } : stored),
          save: async (s) => {
            stored = structuredClone(s);
          },
        };
        const result = client.callModel({
          model: 'm',
          input: 'q',
          tools: scenario.tools,
          state: interrupting,
          stopWhen: stepCountIs(40),
          onTurnEnd: (ctx) => {
            if (ctx.numberOfTurns === 3) interruptedBy = 'doom-loop';
          },
        });
        const response = await result.getResponse();
        assert.equal(srv.requests.length, 4);
        assert.equal(scenario.executions.length, 3);
        assert.equal(stored.status, 'interrupted');
        assert.deepEqual(stored.partialResponse.toolCalls[0].arguments, { invoice_id: BILLING_INVOICE_ID });
        assert.deepEqual(response.output.map((o) => o.type), ['function_call']);
      },
    );
  });
});
