// Raw frames: each HTTP request to the agent and its answer, copyable as curl.

import { h, clear, pretty, time } from "./dom.js";

function headers(map) {
  return Object.entries(map || {}).map(([k, v]) => `${k}: ${v}`).join("\n");
}

function body(text, sse) {
  if (!text) return "(empty)";
  return sse ? text : pretty(text);
}

export class Frames {
  constructor(root, counter) {
    this.root = root;
    this.counter = counter;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.root.append(h("p", { class: "empty" }, "The HTTP exchanges with the agent appear here."));
    this.rows = new Map();
    this.counter.textContent = "";
  }

  frame(f) {
    if (!this.rows.size) clear(this.root);
    const status = f.error && f.response.status == null ? "failed" : f.response.status ?? "…";
    const copy = h("button", { type: "button", class: "copy", onclick: async (e) => {
      e.stopPropagation();
      try { await navigator.clipboard.writeText(f.curl); copy.textContent = "Copied"; }
      catch { copy.textContent = "Select the text to copy"; }
    } }, "Copy as curl");
    const el = h("details", { class: `frame ${f.sse ? "sse" : ""} ${f.error ? "failed" : ""}`, dataset: { id: f.id } },
      h("summary", {}, h("span", { class: "method" }, f.method), " ", h("code", { class: "url" }, f.url), " → ",
        h("span", { class: "status" }, String(status)), f.sse ? " SSE" : "",
        f.streaming && !f.done ? " (streaming…)" : "",
        f.durationMs != null ? ` ${f.durationMs} ms` : "", " ", h("small", {}, time(f.started))),
      h("div", { class: "frame-body" },
        h("div", { class: "half" }, h("h4", {}, "Request"), h("pre", { class: "headers" }, headers(f.request.headers)),
          h("pre", { class: "json request-body" }, body(f.request.body, false))),
        h("div", { class: "half" }, h("h4", {}, "Response"),
          f.error ? h("div", { class: "error" }, f.error) : null,
          h("pre", { class: "headers" }, headers(f.response.headers)),
          h("pre", { class: "json response-body" }, body(f.response.body, f.sse)),
          f.response.truncated ? h("p", { class: "note" }, `${f.response.truncated} more bytes not kept`) : null),
        h("div", { class: "curl" }, copy, h("pre", { class: "curl-text" }, f.curl))));
    const old = this.rows.get(f.id);
    if (old) { el.open = old.open; old.replaceWith(el); } else this.root.prepend(el);
    this.rows.set(f.id, el);
    this.counter.textContent = String(this.rows.size);
  }
}
