// Small DOM helpers: build elements, show JSON, shorten ids.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function pretty(value) {
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value, null, 2);
}

export function jsonBlock(value, cls = "json") {
  return h("pre", { class: cls }, pretty(value));
}

export function short(id) {
  return id && id.length > 12 ? id.slice(0, 8) + "…" : id || "?";
}

export function time(at) {
  return new Date(at * 1000).toLocaleTimeString();
}

export function badge(state) {
  return h("span", { class: `state state-${state || "none"}` }, state || "—");
}

// A part of a message or artifact (canonical shape: kind text | data | file).
export function renderPart(part) {
  if (part.kind === "text") return h("p", { class: "part-text" }, part.text);
  if (part.kind === "data") return h("div", { class: "part-data" }, jsonBlock(part.data));
  if (part.kind === "file") {
    const name = part.filename || "file";
    const type = part.media_type || "application/octet-stream";
    const safeType = /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : "application/octet-stream";
    // an agent's URI becomes a link only when it is http(s): never javascript: or the like
    const web = typeof part.uri === "string" && /^https?:\/\//i.test(part.uri);
    const href = part.raw ? `data:${safeType};base64,${part.raw}` : web ? part.uri : null;
    const label = `⬇ ${name} (${type})`;
    const link = href
      ? h("a", { class: "part-file", href, download: part.raw ? name : null,
        target: part.raw ? null : "_blank", rel: "noopener noreferrer" }, label)
      : h("span", { class: "part-file" }, `${name} (${type}) at `, h("code", {}, part.uri || "(no location)"));
    const box = h("div", { class: "part-file-box" }, link);
    if (part.raw && safeType.startsWith("image/")) box.append(h("img", { src: href, alt: name }));
    return box;
  }
  return jsonBlock(part);
}
