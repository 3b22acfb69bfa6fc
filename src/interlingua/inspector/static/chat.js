// The chat: messages out, the agent's answers streaming in, multi-turn.

import { h, clear, badge, renderPart, short } from "./dom.js";

const WAITING = new Set(["input-required", "auth-required"]);
const TERMINAL = new Set(["completed", "canceled", "failed", "rejected"]);

function textOf(message) {
  return (message?.parts || []).filter((p) => p.kind === "text").map((p) => p.text).join(" ");
}

export class Chat {
  constructor(root, prompt, target, cancelButton) {
    this.root = root;
    this.prompt = prompt;
    this.target = target;
    this.cancelButton = cancelButton;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.turns = new Map();
    this.taskId = null; // a task waiting for our answer
    this.contextId = null;
    this.runningTask = null;
    this.prompt.hidden = true;
    this.showTarget();
  }

  // what the next message continues
  showTarget() {
    const what = this.taskId ? `answering task ${short(this.taskId)}`
      : this.contextId ? `in conversation ${short(this.contextId)}` : "new conversation";
    this.target.textContent = what;
    this.cancelButton.hidden = !this.runningTask;
  }

  box(turn) {
    let box = this.turns.get(turn);
    if (!box) {
      box = { el: h("div", { class: "turn", dataset: { turn } }), artifacts: new Map(),
        state: h("span", { class: "turn-state" }) };
      box.agent = h("div", { class: "bubble agent" }, h("div", { class: "meta" }, "agent ", box.state));
      box.el.append(box.agent);
      this.root.append(box.el);
      this.turns.set(turn, box);
    }
    return box;
  }

  turn(entry) {
    const box = this.box(entry.turn);
    const mine = h("div", { class: "bubble user" }, h("div", { class: "meta" },
      entry.mode === "subscribe" ? `subscribe to ${short(entry.taskId)}` +
        (entry.lastEventId != null ? ` after event ${entry.lastEventId}` : "") : "you"));
    if (entry.text) mine.append(h("p", {}, entry.text));
    if (entry.data !== undefined && entry.data !== null) mine.append(renderPart({ kind: "data", data: entry.data }));
    for (const f of entry.files || []) mine.append(renderPart(f));
    box.el.insertBefore(mine, box.agent);
    box.el.classList.add("running");
    this.prompt.hidden = true;
    this.scroll();
  }

  setState(box, entry) {
    if (!entry.state) return;
    box.state.replaceChildren(badge(entry.state));
    if (entry.contextId) this.contextId = entry.contextId;
    if (WAITING.has(entry.state)) {
      this.taskId = entry.taskId;
      this.runningTask = entry.taskId;
    } else if (TERMINAL.has(entry.state)) {
      if (this.taskId === entry.taskId) {
        this.taskId = null;
        this.prompt.hidden = true; // the question it asked is moot
      }
      if (this.runningTask === entry.taskId) this.runningTask = null;
    } else {
      this.runningTask = entry.taskId;
    }
    this.showTarget();
  }

  status(box, status, entry) {
    const message = status?.message;
    const line = h("div", { class: "status-line", dataset: { state: status.state } }, badge(status.state));
    if (message) for (const part of message.parts || []) line.append(renderPart(part));
    box.agent.append(line);
    if (WAITING.has(status.state) && entry.turn != null) {
      this.prompt.replaceChildren(h("strong", {}, `The agent needs ${status.state === "auth-required" ? "credentials" : "input"}: `),
        textOf(message) || "(no question given)", " — your next message answers it.");
      this.prompt.hidden = false;
    }
  }

  artifact(box, artifact, append, last) {
    let view = box.artifacts.get(artifact.artifact_id);
    if (!view || !append) {
      const el = h("div", { class: "artifact", dataset: { name: artifact.name || "", chunks: 0 } },
        h("div", { class: "meta" }, `artifact ${artifact.name || short(artifact.artifact_id)}`));
      if (view) view.el.replaceWith(el); else box.agent.append(el);
      view = { el, text: "", textEl: null, chunks: 0 };
      box.artifacts.set(artifact.artifact_id, view);
    }
    view.chunks += 1;
    view.el.dataset.chunks = view.chunks;
    for (const part of artifact.parts || []) {
      if (part.kind === "text") {
        view.text += part.text;
        if (!view.textEl) {
          view.textEl = h("p", { class: "artifact-text" });
          view.el.append(view.textEl);
        }
        view.textEl.textContent = view.text;
      } else {
        view.el.append(renderPart(part));
      }
    }
    if (last) view.el.classList.add("complete");
  }

  event(entry) {
    if (entry.turn == null) { // a cancel from the task browser
      if (this.runningTask === entry.taskId || this.taskId === entry.taskId) {
        for (const box of this.turns.values()) if (box.lastTask === entry.taskId) this.setState(box, entry);
      }
      return;
    }
    const box = this.box(entry.turn);
    box.lastTask = entry.taskId || box.lastTask;
    const item = entry.item;
    if (entry.type === "task") {
      if (item.status?.message || !entry.seq) this.status(box, item.status, entry);
      for (const artifact of item.artifacts || []) this.artifact(box, artifact, false, true);
    } else if (entry.type === "status") {
      this.status(box, item.status, entry);
    } else if (entry.type === "artifact") {
      this.artifact(box, item.artifact, item.append, item.last_chunk);
    } else if (entry.type === "message") {
      const bubble = h("div", { class: "message" });
      for (const part of item.parts || []) bubble.append(renderPart(part));
      box.agent.append(bubble);
      if (entry.contextId) this.contextId = entry.contextId;
    }
    this.setState(box, entry);
    this.scroll();
  }

  // a push notification about a task of this conversation: its new state
  push(entry) {
    if (!entry.state) return;
    for (const box of this.turns.values()) {
      if (box.lastTask !== entry.taskId) continue;
      box.agent.append(h("div", { class: "status-line push-line", dataset: { state: entry.state } },
        badge(entry.state), h("span", { class: "meta" }, "by push notification")));
      this.setState(box, entry);
    }
  }

  end(entry) {
    const box = this.box(entry.turn);
    box.el.classList.remove("running");
    if (this.runningTask && !WAITING.has(box.state.textContent)) this.runningTask = null;
    this.showTarget();
  }

  error(entry) {
    const box = entry.turn != null ? this.box(entry.turn) : null;
    const el = h("div", { class: "error" }, entry.message);
    if (box) { box.agent.append(el); box.el.classList.remove("running"); } else this.root.append(el);
    this.runningTask = null;
    this.showTarget();
    this.scroll();
  }

  // what to send with the next message
  continuation(fresh) {
    if (fresh) { this.taskId = null; this.contextId = null; this.showTarget(); }
    return { taskId: this.taskId, contextId: this.contextId };
  }

  scroll() {
    this.root.scrollTop = this.root.scrollHeight;
  }
}
