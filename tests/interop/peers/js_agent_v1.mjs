// Agent on the official JavaScript SDK 1.x (@a2a-js/sdk 1.x), for interlingua's client.
//
//     node js_agent_v1.mjs --port PORT --sdk .interop/js-1.3.0 [--cjs]
//
// Express with the SDK's JSON-RPC handler at / and its HTTP+JSON handler at
// /rest (each in v1.0, plus the SDK's own v0.3 compatibility layer on the
// same URL) and card handler, over its DefaultRequestHandler, in-memory task
// store and in-memory push-config store, on 127.0.0.1. It behaves as every
// agent of these tests does (tests/interop/agent.py tells how).

import { randomUUID } from 'node:crypto';
import { parseArgs, sdkLoader, sdkRequire } from './jsdriver.mjs';

const opts = parseArgs(process.argv.slice(2));
const port = Number(opts.port);
const load = sdkLoader(opts.sdk, opts.cjs);
const express = sdkRequire(opts.sdk)('express');
const { AGENT_CARD_PATH, Role, TaskState } = await load('@a2a-js/sdk');
const {
  AgentEvent, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore,
} = await load('@a2a-js/sdk/server');
const {
  agentCardHandler, jsonRpcHandler, restHandler, UserBuilder,
} = await load('@a2a-js/sdk/server/express');

const url = `http://127.0.0.1:${port}/`;
const restUrl = `http://127.0.0.1:${port}/rest`;

const textPart = (value) => ({
  content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain',
});

const textOf = (message) => (message?.parts ?? [])
  .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');

function agentMessage(taskId, contextId, text) {
  return {
    role: Role.ROLE_AGENT, messageId: randomUUID(), parts: [textPart(text)], taskId, contextId,
    extensions: [], metadata: undefined, referenceTaskIds: [],
  };
}

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
      bus.publish(AgentEvent.message({
        ...agentMessage('', contextId, `re: ${textOf(userMessage)}`), taskId: '' }));
      return;
    }
    const status = (state, text) => bus.publish(AgentEvent.statusUpdate({
      taskId, contextId, metadata: undefined,
      status: { state, timestamp: new Date().toISOString(),
                message: text === undefined ? undefined : agentMessage(taskId, contextId, text) },
    }));
    const artifact = (artifactId, name, parts, append, lastChunk) => bus.publish(
      AgentEvent.artifactUpdate({
        taskId, contextId, append, lastChunk, metadata: undefined,
        artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
      }));
    if (!existing) {
      bus.publish(AgentEvent.task({
        id: taskId, contextId, artifacts: [], history: [userMessage], metadata: undefined,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(),
                  message: undefined },
      }));
    }
    const said = textOf(userMessage);
    const words = said.split(/\s+/).filter(Boolean);
    const verb = words[0] ?? '';
    if (verb === 'stream') {
      const n = words.length > 1 ? Number(words[1]) : 3;
      status(TaskState.TASK_STATE_WORKING, 'streaming');
      const aid = randomUUID();
      for (let i = 0; i < n; i++) {
        artifact(aid, 'stream.txt', [textPart(`chunk ${i};`)], i > 0, i === n - 1);
      }
      status(TaskState.TASK_STATE_COMPLETED, 'done');
    } else if (verb === 'slow') {
      status(TaskState.TASK_STATE_WORKING, 'waiting');
      const cancelled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 30000);
        this.waiting.set(taskId, () => { clearTimeout(timer); resolve(true); });
      });
      this.waiting.delete(taskId);
      if (cancelled) status(TaskState.TASK_STATE_CANCELED);
      else status(TaskState.TASK_STATE_COMPLETED, 'woke up');
    } else if (verb === 'book') {
      status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Where to?');
    } else if (existing) {
      const first = (existing.history ?? []).find((m) => m.role === Role.ROLE_USER);
      artifact(randomUUID(), 'booking', [textPart(`${textOf(first)} -> ${said}`)], false, true);
      status(TaskState.TASK_STATE_COMPLETED);
    } else {
      artifact(randomUUID(), 'echo', userMessage.parts, false, true);
      status(TaskState.TASK_STATE_COMPLETED);
    }
  }
}

const modes = ['text/plain', 'application/json', 'application/octet-stream'];
const card = {
  name: 'Interop (@a2a-js/sdk 1.x)',
  description: 'Echoes, streams, waits and asks, for the interoperability tests.',
  supportedInterfaces: [
    { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    { url: restUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    { url: restUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '0.3' },
  ],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: true, extensions: [],
                  extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: modes,
  defaultOutputModes: modes,
  skills: [{ id: 'interop', name: 'interop', description: 'Interop behaviours', tags: ['test'],
             examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  documentationUrl: '',
  signatures: [],
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new InteropExecutor(),
                                          undefined, new InMemoryPushNotificationStore());
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication,
                               legacyCompat: { enabled: true } }));
app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication,
                         legacyCompat: { enabled: true } }));
app.listen(port, '127.0.0.1', (err) => {
  if (err) throw err;
  process.stderr.write(`listening on ${url}\n`);
});
