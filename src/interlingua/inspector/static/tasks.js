// The task browser: list with filters, get, cancel, subscribe, push.

import { h, clear, badge, jsonBlock, short } from "./dom.js";
import { getJSON, postJSON } from "./api.js";

export class Tasks {
  constructor(els, status) {
    this.els = els;
    this.status = status;
    this.known = new Map();
    this.nextToken = null;
    els.form.addEventListener("submit", (e) => { e.preventDefault(); this.list(null); });
    els.next.addEventListener("click", () => this.list(this.nextToken));
    els.taskForm.addEventListener("submit", (e) => { e.preventDefault(); this.get(); });
    els.cancel.addEventListener("click", () => this.cancel());
    els.subscribe.addEventListener("click", () => this.subscribe());
    els.push.addEventListener("click", () => this.push());
  }

  reset() {
    clear(this.els.table);
    clear(this.els.detail);
    clear(this.els.known);
    this.known.clear();
    this.nextToken = null;
    this.els.next.hidden = true;
    this.els.id.value = "";
  }

  id() {
    const id = this.els.id.value.trim();
    if (!id) throw new Error("give a task id (pick one from the list)");
    return id;
  }

  pick(id) {
    this.els.id.value = id;
    this.get();
  }

  // tasks seen in this session, for agents that cannot list theirs (before A2A 1.0)
  seen(entry) {
    if (!entry.taskId) return;
    const chip = this.known.get(entry.taskId);
    if (chip) { chip.querySelector(".state")?.replaceWith(badge(entry.state)); return; }
    if (!this.known.size) this.els.known.append(h("span", { class: "meta" }, "Seen in this session: "));
    const el = h("button", { type: "button", class: "chip", dataset: { task: entry.taskId },
      onclick: () => this.pick(entry.taskId) }, short(entry.taskId), " ", badge(entry.state));
    this.known.set(entry.taskId, el);
    this.els.known.append(el);
  }

  async run(what, action) {
    clear(this.els.detail);
    try {
      await action();
    } catch (err) {
      this.els.detail.replaceChildren(h("div", { class: "error" }, `${what}: ${err.message}`));
    }
  }

  list(token) {
    return this.run("Listing tasks", async () => {
      const q = new URLSearchParams();
      if (this.els.context.value.trim()) q.set("contextId", this.els.context.value.trim());
      if (this.els.state.value) q.set("status", this.els.state.value);
      if (this.els.pageSize.value) q.set("pageSize", this.els.pageSize.value);
      if (token) q.set("pageToken", token);
      const page = await getJSON(`api/tasks?${q}`);
      clear(this.els.table);
      this.els.table.append(h("table", { class: "task-list" },
        h("tr", {}, h("th", {}, "task"), h("th", {}, "context"), h("th", {}, "state"), h("th", {}, "updated")),
        page.tasks.length ? page.tasks.map((t) => h("tr", { class: "task-row", dataset: { task: t.taskId },
          onclick: () => this.pick(t.taskId) },
          h("td", {}, h("code", {}, t.taskId)), h("td", {}, h("code", {}, short(t.contextId))),
          h("td", {}, badge(t.state)), h("td", {}, t.item.status?.timestamp || "")))
          : h("tr", {}, h("td", { colspan: 4 }, "No tasks match."))));
      this.nextToken = page.nextPageToken;
      this.els.next.hidden = !page.nextPageToken;
    });
  }

  show(result, title) {
    this.els.detail.replaceChildren(h("h3", {}, title, " ", badge(result.state)),
      jsonBlock(result.item), result.raw ? h("details", {}, h("summary", {}, "As the agent sent it"), jsonBlock(result.raw)) : null);
  }

  get() {
    return this.run("Getting the task", async () => {
      const id = this.id();
      this.show(await getJSON(`api/tasks/${encodeURIComponent(id)}`), `Task ${short(id)}`);
    });
  }

  cancel() {
    return this.run("Canceling the task", async () => {
      const id = this.id();
      this.show(await postJSON(`api/tasks/${encodeURIComponent(id)}/cancel`), `Canceled ${short(id)}`);
    });
  }

  subscribe() {
    return this.run("Subscribing", async () => {
      const id = this.id();
      const last = this.els.lastEvent.value;
      await postJSON(`api/tasks/${encodeURIComponent(id)}/subscribe`,
        { lastEventId: last === "" ? null : Number(last) });
      this.els.detail.replaceChildren(h("p", { class: "note" },
        `Subscribed to ${short(id)}: its events appear in the chat and the timeline.`));
    });
  }

  push() {
    return this.run("Registering the webhook", async () => {
      const id = this.id();
      const result = await postJSON(`api/tasks/${encodeURIComponent(id)}/push`);
      this.els.detail.replaceChildren(h("h3", {}, "Webhook registered"), jsonBlock(result.config));
    });
  }
}
