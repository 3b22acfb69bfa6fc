// Agent on the official JavaScript SDK 0.3 (@a2a-js/sdk 0.3.x), for interlingua's client.
//
//     node js_agent_v03.mjs --port PORT --sdk .interop/js-0.3.14 [--cjs]
//
// Express with the SDK's A2AExpressApp routes (v0.3 JSON-RPC at / plus the
// card) and its HTTP+JSON handler at /rest (named in the card's
// additionalInterfaces) over its DefaultRequestHandler, in-memory task store
// and in-memory push-config store, on 127.0.0.1. It behaves as every agent of
// these tests does (tests/interop/agent.py tells how).

import { randomUUID } from 'node:crypto';
import { parseArgs, sdkLoader, sdkRequire } from './jsdriver.mjs';

const opts = parseArgs(process.argv.slice(2));
const port = Number(opts.port);
const load = sdkLoader(opts.sdk, opts.cjs);
const express = sdkRequire(opts.sdk)('express');
const {
  DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore,
} = await load('@a2a-js/sdk/server');
const { A2AExpressApp, restHandler, UserBuilder } = await load('@a2a-js/sdk/server/express');

const url = `http://127.0.0.1:${port}/`;

const textOf = (message) => (message?.parts ?? [])
  .filter((p) => p.kind === 'text').map((p) => p.text).join('\n');

const agentMessage = (taskId, contextId, text) => ({
  kind: 'message', role: 'agent', messageId: randomUUID(), taskId, contextId,
  parts: [{ kind: 'text', text }],
});

class InteropExecutor {
  constructor() {
    this.waiting = new Map();
  }

  cancelTask = async (taskId) => {
    this.waiting.get(taskId)?.();
  };

  async execute(ctx, bus) {
    const { taskId, contextId, userMessage } = ctx;
    const existing = ctx.task;
    if (textOf(userMessage).startsWith('reply')) {
      const reply = agentMessage(undefined, contextId, `re: ${textOf(userMessage)}`);
      delete reply.taskId;
      bus.publish(reply);
      bus.finished();
      return;
    }
    const status = (state, text, final = false) => bus.publish({
      kind: 'status-update', taskId, contextId, final,
      status: { state, timestamp: new Date().toISOString(),
                message: text === undefined ? undefined : agentMessage(taskId, contextId, text) },
    });
    const artifact = (artifactId, name, parts, append, lastChunk) => bus.publish({
      kind: 'artifact-update', taskId, contextId, append, lastChunk,
      artifact: { artifactId, name, parts },
    });
    if (!existing) {
      bus.publish({
        kind: 'task', id: taskId, contextId, artifacts: [], history: [userMessage],
        status: { state: 'submitted', timestamp: new Date().toISOString() },
      });
    }
    const said = textOf(userMessage);
    const words = said.split(/\s+/).filter(Boolean);
    const verb = words[0] ?? '';
    if (verb === 'stream') {
      const n = words.length > 1 ? Number(words[1]) : 3;
      status('working', 'streaming');
      const aid = randomUUID();
      for (let i = 0; i < n; i++) {
        artifact(aid, 'stream.txt', [{ kind: 'text', text: `chunk ${i};` }], i > 0, i === n - 1);
      }
      status('completed', 'done', true);
    } else if (verb === 'slow') {
      status('working', 'waiting');
      const cancelled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 30000);
        this.waiting.set(taskId, () => { clearTimeout(timer); resolve(true); });
      });
      this.waiting.delete(taskId);
      if (cancelled) status('canceled', undefined, true);
      else status('completed', 'woke up', true);
    } else if (verb === 'book') {
      status('input-required', 'Where to?', true);
    } else if (existing) {
      const first = (existing.history ?? []).find((m) => m.role === 'user');
      artifact(randomUUID(), 'booking', [{ kind: 'text', text: `${textOf(first)} -> ${said}` }],
               false, true);
      status('completed', undefined, true);
    } else {
      artifact(randomUUID(), 'echo', userMessage.parts, false, true);
      status('completed', undefined, true);
    }
    bus.finished();
  }
}

const modes = ['text/plain', 'application/json', 'application/octet-stream'];
const card = {
  name: 'Interop (@a2a-js/sdk 0.3)',
  description: 'Echoes, streams, waits and asks, for the interoperability tests.',
  protocolVersion: '0.3.0',
  version: '1.0.0',
  url,
  preferredTransport: 'JSONRPC',
  additionalInterfaces: [{ url: `http://127.0.0.1:${port}/rest`, transport: 'HTTP+JSON' }],
  capabilities: { streaming: true, pushNotifications: true },
  defaultInputModes: modes,
  defaultOutputModes: modes,
  skills: [{ id: 'interop', name: 'interop', description: 'Interop behaviours', tags: ['test'] }],
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new InteropExecutor(),
                                          undefined, new InMemoryPushNotificationStore());
const app = new A2AExpressApp(handler).setupRoutes(express());
app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.listen(port, '127.0.0.1', (err) => {
  if (err) throw err;
  process.stderr.write(`listening on ${url}\n`);
});
