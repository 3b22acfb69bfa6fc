// The event timeline: each task's events in order, with their sequence numbers,
// the chunks of each artifact put together, and the numbers never received.

import { h, clear, badge, short, time } from "./dom.js";

export class Timeline {
  constructor(root) {
    this.root = root;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.root.append(h("p", { class: "empty" }, "Events of the tasks you follow appear here."));
    this.tasks = new Map();
  }

  group(taskId) {
    let g = this.tasks.get(taskId);
    if (!g) {
      if (!this.tasks.size) clear(this.root);
      g = { last: null, rows: h("tbody"), artifacts: new Map(), assembled: h("div", { class: "assembled" }),
        state: h("span"), seen: new Set() };
      const el = h("div", { class: "task-group", dataset: { task: taskId } },
        h("h3", {}, "Task ", h("code", {}, taskId), " ", g.state),
        h("table", { class: "events" },
          h("thead", {}, h("tr", {}, h("th", {}, "seq"), h("th", {}, "time"), h("th", {}, "event"),
            h("th", {}, "details"))), g.rows),
        g.assembled);
      g.el = el;
      this.root.append(el);
      this.tasks.set(taskId, g);
    }
    return g;
  }

  turn(entry) {
    if (entry.mode === "subscribe" && entry.taskId) {
      const g = this.group(entry.taskId);
      g.rows.append(h("tr", { class: "connection" }, h("td", { colspan: 4 },
        `subscribed${entry.lastEventId != null ? ` with Last-Event-ID ${entry.lastEventId}` : ""}`)));
      // numbering restarts from what was asked for
      if (entry.lastEventId != null) g.last = entry.lastEventId;
      else g.last = null;
    } else if (entry.taskId && this.tasks.has(entry.taskId)) {
      // a new message to the task: its stream's numbers are new events, whatever they are,
      // and its first one follows the user's message, which is in the log but not streamed
      // (v0.1's stream begins with a status update, not with a snapshot that holds it)
      const g = this.tasks.get(entry.taskId);
      g.seen.clear();
      g.last = null;
    }
  }

  event(entry) {
    if (!entry.taskId) return;
    const g = this.group(entry.taskId);
    const seq = entry.seq;
    // a task snapshot carries all that came before it: a jump before one loses
    // nothing (the user's message of a next turn, for one, is in the log but not streamed)
    if (seq != null && g.last != null && seq > g.last + 1 && entry.type !== "task") {
      const missing = seq - g.last - 1;
      g.rows.append(h("tr", { class: "gap" }, h("td", { colspan: 4 },
        `gap: ${missing} event${missing === 1 ? "" : "s"} (seq ${g.last + 1}${missing > 1 ? `–${seq - 1}` : ""}) not received on this stream`)));
    }
    if (seq != null) g.last = Math.max(g.last ?? seq, seq);
    // an event sent again (a subscription from a Last-Event-ID replays what followed it)
    // is listed, but its chunk is not put together twice
    const again = seq != null && g.seen.has(seq);
    if (seq != null) g.seen.add(seq);
    const item = entry.item;
    let details = "";
    if (entry.type === "artifact") {
      const a = item.artifact;
      const flags = `${item.append ? " (append)" : ""}${item.last_chunk ? " (last)" : ""}`;
      const name = a.name || short(a.artifact_id);
      details = again ? `${name} chunk received before${flags}`
        : `${name} chunk ${this.assemble(g, a, item.append, item.last_chunk).chunks}${flags}`;
    } else if (entry.type === "task" || entry.type === "status") {
      const text = (item.status?.message?.parts || []).filter((p) => p.kind === "text").map((p) => p.text).join(" ");
      details = text;
      for (const a of item.artifacts || []) this.assemble(g, a, false, true);
    } else if (entry.type === "message") {
      details = (item.parts || []).filter((p) => p.kind === "text").map((p) => p.text).join(" ");
    }
    g.rows.append(h("tr", { class: `ev ev-${entry.type}`, dataset: { seq: seq ?? "" } },
      h("td", { class: "seq" }, seq ?? "—"), h("td", {}, time(entry.at)),
      h("td", {}, entry.type, " ", entry.state ? badge(entry.state) : ""), h("td", {}, details)));
    if (entry.state) g.state.replaceChildren(badge(entry.state));
  }

  assemble(g, artifact, append, last) {
    let art = g.artifacts.get(artifact.artifact_id);
    if (!art || !append) {
      const el = h("div", { class: "assembled-artifact", dataset: { name: artifact.name || "" } });
      if (art) art.el.replaceWith(el); else g.assembled.append(el);
      art = { el, text: "", chunks: 0, other: 0, name: artifact.name || artifact.artifact_id };
      g.artifacts.set(artifact.artifact_id, art);
    }
    art.chunks += 1;
    for (const part of artifact.parts || []) {
      if (part.kind === "text") art.text += part.text; else art.other += 1;
    }
    art.el.replaceChildren(
      h("div", { class: "meta" }, `${art.name}: ${art.chunks} chunk${art.chunks === 1 ? "" : "s"} assembled`,
        last ? " — complete" : " — still arriving", art.other ? `, ${art.other} non-text parts` : ""),
      h("p", { class: "assembled-text" }, art.text));
    art.el.classList.toggle("complete", !!last);
    return art;
  }

  error(entry) {
    if (!this.tasks.size) clear(this.root);
    this.root.append(h("div", { class: "error" }, entry.message));
  }
}
