// Driver: the official JavaScript SDK 1.x client (@a2a-js/sdk 1.x) against an agent.
//
//     node js_client_v1.mjs AGENT_URL --sdk .interop/js-1.3.0 [--dialect 1.0|0.3]
//                           [--binding JSONRPC|HTTP+JSON]
//
// The card is read with the SDK's DefaultAgentCardResolver and the client made
// by ClientFactory from it, the way the SDK documents. The card's interfaces
// of the other binding are dropped first, and the factory is given that
// binding's transport only. With --dialect 0.3 the SDK's v0.3 compatibility
// layer is switched on (legacyCompat) and the card's v1.0 interfaces are
// dropped too, so the factory picks the SDK's legacy transport of the binding.
// Commands and result shapes: pydriver.py.

import { randomUUID } from 'node:crypto';
import { parseArgs, sdkLoader, serve } from './jsdriver.mjs';

const opts = parseArgs(process.argv.slice(2));
const url = opts._[0];
const load = sdkLoader(opts.sdk, opts.cjs);
const sdk = await load('@a2a-js/sdk');
const {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  RestTransportFactory,
} = await load('@a2a-js/sdk/client');
const { AgentCard, Role, roleToJSON, taskStateToJSON } = sdk;

function normParts(parts) {
  return (parts ?? []).map((p) => {
    const c = p.content;
    switch (c?.$case) {
      case 'text':
        return { text: c.value };
      case 'data':
        return { data: c.value };
      case 'raw':
        return { file: { bytes: Buffer.from(c.value).toString('base64'), uri: null,
                         mediaType: p.mediaType, name: p.filename } };
      case 'url':
        return { file: { bytes: null, uri: c.value, mediaType: p.mediaType, name: p.filename } };
      default:
        return { unknown: String(c?.$case) };
    }
  });
}

const normArtifact = (a) => ({ artifactId: a.artifactId, name: a.name, parts: normParts(a.parts) });

const normMessage = (m) => ({
  kind: 'message', role: roleToJSON(m.role), messageId: m.messageId, taskId: m.taskId,
  contextId: m.contextId, parts: normParts(m.parts),
});

const normTask = (t) => ({
  kind: 'task',
  id: t.id,
  contextId: t.contextId,
  state: taskStateToJSON(t.status?.state),
  statusMessage: t.status?.message ? normParts(t.status.message.parts) : null,
  artifacts: (t.artifacts ?? []).map(normArtifact),
  history: (t.history ?? []).map((m) => ({ role: roleToJSON(m.role), messageId: m.messageId,
                                          parts: normParts(m.parts) })),
});

function normEvent(ev) {
  const p = ev.payload;
  switch (p?.$case) {
    case 'task':
      return normTask(p.value);
    case 'message':
      return normMessage(p.value);
    case 'statusUpdate':
      return { kind: 'status', taskId: p.value.taskId, contextId: p.value.contextId,
               state: taskStateToJSON(p.value.status?.state),
               message: p.value.status?.message ? normParts(p.value.status.message.parts) : null };
    case 'artifactUpdate':
      return { kind: 'artifact', taskId: p.value.taskId, artifact: normArtifact(p.value.artifact),
               append: Boolean(p.value.append), lastChunk: Boolean(p.value.lastChunk) };
    default:
      return { kind: String(p?.$case) };
  }
}

const normResult = (r) => ('status' in r && 'id' in r ? normTask(r) : normMessage(r));

const normPush = (c) => ({ id: c.id, taskId: c.taskId, url: c.url, token: c.token });

const schemeKind = (s) => s?.scheme?.$case ?? s?.type
  ?? Object.keys(s ?? {}).find((k) => k.endsWith('SecurityScheme'));

const normCard = (card) => ({
  name: card.name,
  version: card.version,
  interfaces: (card.supportedInterfaces ?? []).map((i) => ({
    url: i.url, binding: i.protocolBinding, version: i.protocolVersion })),
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
    .map(([name, s]) => [name, schemeKind(s)])),
  security: (card.securityRequirements ?? []).map((r) => Object.keys(r.schemes ?? {}).sort()),
});

function part(content, extra = {}) {
  return { content, metadata: undefined, filename: extra.filename ?? '',
           mediaType: extra.mediaType ?? '' };
}

function request(args) {
  const parts = [part({ $case: 'text', value: args.text })];
  if (args.data !== undefined && args.data !== null) {
    parts.push(part({ $case: 'data', value: args.data }));
  }
  if (args.file) {
    parts.push(part({ $case: 'raw', value: Buffer.from(args.file.bytes, 'base64') },
                    { filename: args.file.name, mediaType: args.file.mediaType }));
  }
  return {
    tenant: '',
    metadata: undefined,
    message: {
      messageId: randomUUID(), role: Role.ROLE_USER, parts,
      taskId: args.taskId ?? '', contextId: args.contextId ?? '',
      extensions: [], metadata: undefined, referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: [], taskPushNotificationConfig: undefined,
      historyLength: undefined, returnImmediately: Boolean(args.returnImmediately),
    },
  };
}

const legacy = opts.dialect === '0.3';
const binding = opts.binding ?? 'JSONRPC';
const card = await new DefaultAgentCardResolver({ legacyCompat: { enabled: legacy } })
  .resolve(url);
card.supportedInterfaces = card.supportedInterfaces.filter(
  (i) => i.protocolBinding === binding && (!legacy || i.protocolVersion === '0.3'));
const Transport = binding === 'HTTP+JSON' ? RestTransportFactory : JsonRpcTransportFactory;
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new Transport({ legacyCompat: { enabled: legacy } })],
}));
const client = await factory.createFromAgentCard(card);

await serve({
  // What the SDK's resolver makes of the card, and what its protobuf-JSON
  // parser (AgentCard.fromJSON, used for cards in protobuf shape) makes of it.
  card: async (args) => {
    const at = args.url ?? url;
    const resolved = await new DefaultAgentCardResolver().resolve(at);
    const raw = await (await fetch(new URL('/.well-known/agent-card.json', at))).json();
    return { ...normCard(resolved), protoParsed: normCard(AgentCard.fromJSON(raw)) };
  },
  info: async () => ({ transport: client.transport.constructor.name,
                       protocolVersion: client.protocolVersion }),
  send: async (args) => normResult(await client.sendMessage(request(args))),
  stream: async (args) => {
    const events = [];
    for await (const ev of client.sendMessageStream(request(args))) events.push(normEvent(ev));
    return { events };
  },
  subscribe: async (args) => {
    // With cancelAfterFirst the task is canceled (another call) once the
    // subscription has its first event; the subscription then sees it end.
    const events = [];
    let cancel = null;
    for await (const ev of client.resubscribeTask({ tenant: '', id: args.taskId })) {
      events.push(normEvent(ev));
      if (events.length === 1 && args.cancelAfterFirst) {
        cancel = normTask(await client.cancelTask({ tenant: '', id: args.taskId,
                                                    metadata: undefined }));
      }
    }
    return { events, cancel };
  },
  get: async (args) => normTask(await client.getTask(
    { tenant: '', id: args.taskId, historyLength: args.historyLength ?? undefined })),
  cancel: async (args) => normTask(await client.cancelTask(
    { tenant: '', id: args.taskId, metadata: undefined })),
  push_set: async (args) => normPush(await client.createTaskPushNotificationConfig({
    tenant: '', id: args.id ?? '', taskId: args.taskId, url: args.url, token: args.token ?? '',
    authentication: undefined })),
  push_get: async (args) => normPush(await client.getTaskPushNotificationConfig(
    { tenant: '', taskId: args.taskId, id: args.id })),
});
