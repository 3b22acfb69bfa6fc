// The card view: what the agent says it is, checked per protocol version.

import { h, clear, jsonBlock } from "./dom.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function checks(list) {
  return h("div", { class: "checks" }, (list || []).map((c) => {
    const warnings = c.warnings || [];
    const verdict = c.ok ? "valid" : plural(c.problems.length, "problem");
    return h("div", { class: `check ${c.ok ? "ok" : "bad"}${warnings.length ? " warn" : ""}`,
                      dataset: { version: c.version } },
      h("strong", {}, `A2A ${c.version}: `),
      warnings.length ? `${verdict}, ${plural(warnings.length, "warning")}` : verdict,
      h("ul", {}, c.problems.map((p) => h("li", { class: "problem" }, p)),
        warnings.map((w) => h("li", { class: "warning" }, w))));
  }));
}

function signature(sig) {
  if (!sig) return null;
  return h("div", { class: `signature sig-${sig.status}` },
    h("strong", {}, { verified: "Signed ✓ ", invalid: "Signature ✗ ", unsigned: "Unsigned " }[sig.status] || ""),
    sig.message);
}

export function renderCard(root, info) {
  clear(root);
  if (!info) return;
  const card = info.card;
  if (info.error) root.append(h("div", { class: "error" }, info.error));
  if (info.cardNote) root.append(h("p", { class: "note" }, info.cardNote));
  if (info.endpoint) {
    root.append(h("p", { class: "endpoint" }, "Talking A2A ",
      h("strong", { id: "card-dialect" }, info.endpoint.dialect), " over ",
      h("strong", { id: "card-binding" }, info.endpoint.binding), " at ",
      h("code", {}, info.endpoint.url)));
  }
  if (!card) return;
  if (card.name) {
    root.append(h("h2", { id: "card-name" }, card.name, " ",
      h("small", {}, card.version ? `v${card.version}` : "")));
    root.append(h("p", {}, card.description || ""));
  }
  root.append(h("h3", {}, "Validation"), checks(card.checks));
  if (card.signature) root.append(h("h3", {}, "Signature"), signature(card.signature));
  if (card.interfaces) {
    root.append(h("h3", {}, "Interfaces"), h("table", { class: "interfaces" },
      h("tr", {}, h("th", {}, "binding"), h("th", {}, "version"), h("th", {}, "URL"),
        h("th", {}, "spoken here")),
      card.interfaces.map((i) => h("tr", {},
        h("td", {}, i.binding), h("td", {}, i.protocolVersion), h("td", {}, h("code", {}, i.url)),
        h("td", {}, i.spoken ? "yes" : "no")))));
  }
  if (card.capabilities) {
    const caps = card.capabilities;
    root.append(h("h3", {}, "Capabilities"), h("ul", { class: "caps" },
      h("li", {}, `streaming: ${caps.streaming ? "yes" : "no"}`),
      h("li", {}, `push notifications: ${caps.push_notifications ? "yes" : "no"}`),
      h("li", {}, `extended card: ${caps.extended_card ? "yes" : "no"}`),
      (caps.extensions || []).map((e) => h("li", {}, `extension ${e.uri}`))));
  }
  if (card.skills && card.skills.length) {
    root.append(h("h3", {}, "Skills"), h("div", { class: "skills" }, card.skills.map((s) =>
      h("div", { class: "skill" }, h("strong", {}, s.name), h("p", {}, s.description || ""),
        (s.examples || []).map((ex) => h("p", { class: "example" }, `“${ex}”`))))));
  }
  const schemes = Object.entries(card.securitySchemes || {});
  if (schemes.length) {
    root.append(h("h3", {}, "Security"), h("ul", {}, schemes.map(([name, s]) =>
      h("li", {}, `${name}: ${s.type}${s.name ? ` (${s.location} ${s.name})` : ""}${s.scheme ? ` (${s.scheme})` : ""}`))));
  }
  if (card.document) {
    root.append(h("details", { class: "raw" }, h("summary", {}, `Card document (${card.url})`),
      jsonBlock(card.document)));
  }
}
