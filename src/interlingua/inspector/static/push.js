// Push notifications the inspector's own webhook received, signatures checked.

import { h, clear, badge, jsonBlock, short, time } from "./dom.js";

export class Pushes {
  constructor(root, counter) {
    this.root = root;
    this.counter = counter;
    this.count = 0;
  }

  reset() {
    clear(this.root);
    this.root.append(h("p", { class: "empty" }, "Notifications this inspector receives appear here."));
    this.count = 0;
    this.counter.textContent = "";
  }

  config(entry) {
    if (!this.count) clear(this.root);
    this.root.prepend(h("p", { class: "note" }, `Webhook registered for task ${short(entry.taskId)}.`));
  }

  push(entry) {
    if (!this.count) clear(this.root);
    this.count += 1;
    this.counter.textContent = String(this.count);
    const sig = entry.verified ? h("span", { class: "sig sig-verified" }, "signature verified")
      : h("span", { class: "sig sig-unsigned" }, entry.signed ? "signature not checked" : "not signed");
    this.root.prepend(h("details", { class: "push", dataset: { task: entry.taskId || "", state: entry.state || "" } },
      h("summary", {}, time(entry.at), " task ", h("code", {}, short(entry.taskId)), " ",
        entry.state ? badge(entry.state) : h("span", { class: "meta" }, Object.keys(entry.body || {})[0] || "update"),
        " ", sig, " ", h("small", {}, `A2A ${entry.dialect}`)),
      h("p", {}, `notification ${entry.notificationId || "(no id)"}${entry.kid ? `, key ${entry.kid}` : ""}`),
      jsonBlock(entry.body),
      h("details", {}, h("summary", {}, "Headers"), jsonBlock(entry.headers))));
  }
}
