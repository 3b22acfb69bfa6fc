// Driver: the official JavaScript SDK 0.3 client (@a2a-js/sdk 0.3.x) against an agent.
//
//     node js_client_v03.mjs AGENT_URL --sdk .interop/js-0.3.14 [--binding JSONRPC|HTTP+JSON]
//
// The 0.3 SDK speaks only the v0.2/v0.3 dialect. The card is read with its
// DefaultAgentCardResolver and the client made by ClientFactory, told to
// prefer the binding (the card's preferred one is JSON-RPC; HTTP+JSON is among
// its additionalInterfaces). Commands and result shapes: pydriver.py.

import { randomUUID } from 'node:crypto';
import { parseArgs, sdkLoader, serve } from './jsdriver.mjs';

const opts = parseArgs(process.argv.slice(2));
const url = opts._[0];
const load = sdkLoader(opts.sdk, opts.cjs);
const {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver,
} = await load('@a2a-js/sdk/client');

function normParts(parts) {
  return (parts ?? []).map((p) => {
    if (p.kind === 'text') return { text: p.text };
    if (p.kind === 'data') return { data: p.data };
    if (p.kind === 'file') {
      const f = p.file;
      return { file: { bytes: f.bytes ?? null, uri: f.uri ?? null, mediaType: f.mimeType,
                       name: f.name ?? '' } };
    }
    return { unknown: String(p.kind) };
  });
}

const normArtifact = (a) => ({ artifactId: a.artifactId, name: a.name, parts: normParts(a.parts) });

const normMessage = (m) => ({
  kind: 'message', role: m.role, messageId: m.messageId, taskId: m.taskId,
  contextId: m.contextId, parts: normParts(m.parts),
});

const normTask = (t) => ({
  kind: 'task',
  id: t.id,
  contextId: t.contextId,
  state: t.status?.state,
  statusMessage: t.status?.message ? normParts(t.status.message.parts) : null,
  artifacts: (t.artifacts ?? []).map(normArtifact),
  history: (t.history ?? []).map((m) => ({ role: m.role, messageId: m.messageId,
                                          parts: normParts(m.parts) })),
});

function normEvent(ev) {
  switch (ev.kind) {
    case 'task':
      return normTask(ev);
    case 'message':
      return normMessage(ev);
    case 'status-update':
      return { kind: 'status', taskId: ev.taskId, contextId: ev.contextId,
               state: ev.status?.state, final: ev.final,
               message: ev.status?.message ? normParts(ev.status.message.parts) : null };
    case 'artifact-update':
      return { kind: 'artifact', taskId: ev.taskId, artifact: normArtifact(ev.artifact),
               append: Boolean(ev.append), lastChunk: Boolean(ev.lastChunk) };
    default:
      return { kind: String(ev.kind) };
  }
}

const normPush = (c) => ({
  id: c.pushNotificationConfig?.id, taskId: c.taskId, url: c.pushNotificationConfig?.url,
  token: c.pushNotificationConfig?.token,
});

function normCard(card) {
  const interfaces = [{ url: card.url, binding: card.preferredTransport ?? 'JSONRPC',
                        version: card.protocolVersion }];
  for (const i of card.additionalInterfaces ?? []) {
    interfaces.push({ url: i.url, binding: i.transport, version: card.protocolVersion });
  }
  return {
    name: card.name,
    version: card.version,
    interfaces,
    streaming: Boolean(card.capabilities?.streaming),
    pushNotifications: Boolean(card.capabilities?.pushNotifications),
    inputModes: card.defaultInputModes,
    outputModes: card.defaultOutputModes,
    skills: (card.skills ?? []).map((s) => ({ id: s.id, name: s.name, tags: s.tags })),
    provider: card.provider?.organization ?? null,
    documentationUrl: card.documentationUrl,
    iconUrl: card.iconUrl,
    extensions: (card.capabilities?.extensions ?? []).map((e) => e.uri),
    securitySchemes: Object.fromEntries(Object.entries(card.securitySchemes ?? {})
      .map(([name, s]) => [name, s.type])),
    security: (card.security ?? []).map((r) => Object.keys(r).sort()),
  };
}

function params(args) {
  const parts = [{ kind: 'text', text: args.text }];
  if (args.data !== undefined && args.data !== null) parts.push({ kind: 'data', data: args.data });
  if (args.file) {
    parts.push({ kind: 'file', file: { bytes: args.file.bytes, mimeType: args.file.mediaType,
                                       name: args.file.name } });
  }
  const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts };
  if (args.taskId) message.taskId = args.taskId;
  if (args.contextId) message.contextId = args.contextId;
  return { message, configuration: { blocking: !args.returnImmediately } };
}

const norm = (r) => (r.kind === 'task' ? normTask(r) : normMessage(r));

const client = await new ClientFactory(ClientFactoryOptions.createFrom(
  ClientFactoryOptions.default, { preferredTransports: [opts.binding ?? 'JSONRPC'] },
)).createFromUrl(url);

await serve({
  card: async (args) => normCard(await new DefaultAgentCardResolver().resolve(args.url ?? url)),
  info: async () => ({ transport: client.transport.constructor.name }),
  send: async (args) => norm(await client.sendMessage(params(args))),
  stream: async (args) => {
    const events = [];
    for await (const ev of client.sendMessageStream(params(args))) events.push(normEvent(ev));
    return { events };
  },
  subscribe: async (args) => {
    // With cancelAfterFirst the task is canceled (another call) once the
    // subscription has its first event; the subscription then sees it end.
    const events = [];
    let cancel = null;
    for await (const ev of client.resubscribeTask({ id: args.taskId })) {
      events.push(normEvent(ev));
      if (events.length === 1 && args.cancelAfterFirst) {
        cancel = normTask(await client.cancelTask({ id: args.taskId }));
      }
    }
    return { events, cancel };
  },
  get: async (args) => {
    const q = { id: args.taskId };
    if (args.historyLength !== undefined && args.historyLength !== null) {
      q.historyLength = args.historyLength;
    }
    return normTask(await client.getTask(q));
  },
  cancel: async (args) => normTask(await client.cancelTask({ id: args.taskId })),
  push_set: async (args) => normPush(await client.setTaskPushNotificationConfig({
    taskId: args.taskId,
    pushNotificationConfig: { id: args.id, url: args.url, token: args.token },
  })),
  push_get: async (args) => normPush(await client.getTaskPushNotificationConfig(
    { id: args.taskId, pushNotificationConfigId: args.id })),
});
