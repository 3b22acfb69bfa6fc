// The inspector's own server API (relative URLs: it may be mounted anywhere).

async function answer(response) {
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    const message = data && data.error ? data.error : `HTTP ${response.status}`;
    throw new Error(message);
  }
  return data;
}

export async function getJSON(path) {
  return answer(await fetch(path, { credentials: "same-origin" }));
}

export async function postJSON(path, body = {}) {
  return answer(await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  }));
}
