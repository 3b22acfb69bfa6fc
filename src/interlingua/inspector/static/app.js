// The inspector page: connect, then follow the session's log as it grows.

import { h } from "./dom.js";
import { getJSON, postJSON } from "./api.js";
import { renderCard } from "./card.js";
import { Chat } from "./chat.js";
import { Timeline } from "./timeline.js";
import { Frames } from "./frames.js";
import { Tasks } from "./tasks.js";
import { Pushes } from "./push.js";

const $ = (id) => document.getElementById(id);

const status = {
  show(text, kind = "info") {
    $("status").replaceChildren(h("span", { class: kind }, text));
  },
};

const chat = new Chat($("chat-log"), $("chat-prompt"), $("chat-target"), $("chat-cancel"));
const timeline = new Timeline($("view-timeline"));
const frames = new Frames($("view-frames"), $("frames-count"));
const pushes = new Pushes($("push-log"), $("push-count"));
const tasks = new Tasks({
  form: $("tasks-form"), next: $("tasks-next"), table: $("tasks-table"), known: $("tasks-known"),
  context: $("tasks-context"), state: $("tasks-status"), pageSize: $("tasks-page-size"),
  taskForm: $("task-form"), id: $("task-id"), cancel: $("task-cancel"), subscribe: $("task-subscribe"),
  push: $("task-push"), lastEvent: $("task-last-event"), detail: $("task-detail"),
}, status);

function showView(name) {
  for (const b of document.querySelectorAll("#tabs button")) {
    const on = b.dataset.view === name;
    b.classList.toggle("active", on);
    // the ARIA tabs pattern: the selected tab is the one in the Tab order
    b.setAttribute("aria-selected", on ? "true" : "false");
    b.tabIndex = on ? 0 : -1;
  }
  for (const v of document.querySelectorAll(".view")) v.classList.toggle("active", v.id === `view-${name}`);
}
for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showView(b.dataset.view));
// arrow keys, Home and End move between the tabs, as in any tab list
document.getElementById("tabs").addEventListener("keydown", (e) => {
  const tabs = [...document.querySelectorAll("#tabs [role=tab]")];
  const at = tabs.indexOf(document.activeElement);
  if (at < 0) return;
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const tab = tabs[(to + tabs.length) % tabs.length];
  showView(tab.dataset.view);
  tab.focus();
});

function showAuthFields() {
  const kind = $("auth-kind").value;
  for (const el of document.querySelectorAll("label.auth")) el.hidden = !el.classList.contains(kind);
}
$("auth-kind").addEventListener("change", showAuthFields);
showAuthFields();

function connected(info) {
  renderCard($("view-card"), info);
  if (info.error) {
    status.show(info.error, "error");
    return;
  }
  const ep = info.endpoint;
  status.show(`Connected to ${info.card?.name || info.url}` +
    (ep ? ` — A2A ${ep.dialect} over ${ep.binding} at ${ep.url}` : ""), "ok");
  // offer the header the card names for its API key
  for (const scheme of Object.values(info.card?.securitySchemes || {})) {
    if (scheme.type === "apiKey" && scheme.location === "header" && $("auth-kind").value !== "apikey") {
      $("auth-name").value = scheme.name;
    }
  }
}

$("connect-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const auth = { kind: $("auth-kind").value, name: $("auth-name").value, value: $("auth-value").value,
    user: $("auth-user").value, password: $("auth-password").value };
  status.show("Connecting…");
  $("connect").disabled = true;
  try {
    const info = await postJSON("api/connect", { url: $("url").value.trim(), dialect: $("dialect").value,
      binding: $("binding").value, auth });
    chat.continuation(true);
    connected(info);
    showView("card");
  } catch (err) {
    status.show(err.message, "error");
  } finally {
    $("connect").disabled = false;
  }
});

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

$("chat-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = { text: $("chat-text").value, push: $("chat-push").checked };
  try {
    const data = $("chat-data").value.trim();
    if (data) {
      try { body.data = JSON.parse(data); } catch (err) { throw new Error(`the data part is not JSON: ${err.message}`); }
    }
    body.files = await Promise.all([...$("chat-files").files].map(async (f) => ({
      name: f.name, mediaType: f.type || "application/octet-stream", bytes: base64(await f.arrayBuffer()) })));
    Object.assign(body, chat.continuation($("chat-new").checked));
    $("chat-send").disabled = true;
    await postJSON("api/send", body);
    $("chat-text").value = "";
    $("chat-data").value = "";
    $("chat-files").value = "";
    $("chat-new").checked = false;
  } catch (err) {
    chat.error({ turn: null, message: err.message });
  } finally {
    $("chat-send").disabled = false;
  }
});
$("chat-text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("chat-form").requestSubmit(); }
});
$("chat-cancel").addEventListener("click", async () => {
  if (!chat.runningTask) return;
  try { await postJSON(`api/tasks/${encodeURIComponent(chat.runningTask)}/cancel`); }
  catch (err) { chat.error({ turn: null, message: `Cancel: ${err.message}` }); }
});

const handlers = {
  frame: (e) => frames.frame(e.frame),
  // a new connection starts a new conversation, and the task browser shows only this
  // agent's tasks; the timeline and frames keep the session's history
  connected: (e) => { chat.reset(); tasks.reset(); connected(e.info); },
  turn: (e) => { chat.turn(e); timeline.turn(e); },
  event: (e) => { chat.event(e); timeline.event(e); tasks.seen(e); },
  "turn-end": (e) => chat.end(e),
  error: (e) => { chat.error(e); timeline.error(e); },
  push: (e) => { pushes.push(e); tasks.seen(e); chat.push(e); },
  "push-config": (e) => pushes.config(e),
};

function follow() {
  const source = new EventSource("api/events");
  source.onmessage = (msg) => {
    const entry = JSON.parse(msg.data);
    const handle = handlers[entry.kind];
    if (handle) {
      // one entry the page cannot show must not stop the others
      try { handle(entry); } catch (err) { console.error("inspector:", err); }
    }
  };
  source.onopen = () => document.body.classList.add("live");
  source.onerror = () => document.body.classList.remove("live");
}

async function start() {
  const config = await getJSON("api/config");
  for (const d of config.dialects) $("dialect").append(h("option", { value: d }, `A2A ${d}`));
  for (const b of config.bindings) $("binding").append(h("option", { value: b }, b));
  for (const s of config.states) $("tasks-status").append(h("option", { value: s }, s));
  $("push-webhook").textContent = config.webhook;
  const wanted = new URLSearchParams(location.search).get("url") || config.defaultUrl;
  if (wanted) $("url").value = wanted;
  const state = await getJSON("api/state");
  document.body.dataset.ready = "true";
  follow();
  // an agent named on the command line (or in ?url=) is connected to at once, the first time
  if (wanted && !state.info) $("connect-form").requestSubmit();
}

start().catch((err) => status.show(`The inspector's server did not answer: ${err.message}`, "error"));
