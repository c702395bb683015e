// The dashboard's only door to the server: the /v1 API with the bearer
// token, and the event stream read with fetch (EventSource cannot send an
// Authorization header).

const TOKEN_KEY = "cronactor.token";

export class APIError extends Error {
  constructor(status, field, message) {
    super(field ? `${field}: ${message}` : message);
    this.status = status;
    this.field = field;
  }
}

let askToken = null; // set by the app: resolves once a new token was entered

export function onTokenNeeded(f) { askToken = f; }
export function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
export function setToken(t) { sessionStorage.setItem(TOKEN_KEY, t); }

function headers(extra) {
  const h = { Accept: "application/json", ...extra };
  const t = token();
  if (t) h.Authorization = "Bearer " + t;
  return h;
}

// api calls the API and returns the decoded JSON, or throws an APIError
// carrying the server's message. A 401 asks for the token and retries.
export async function api(method, path, body) {
  for (;;) {
    const init = { method, headers: headers(body !== undefined ? { "Content-Type": "application/json" } : {}) };
    if (body !== undefined) init.body = JSON.stringify(body);
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      throw new APIError(0, "", "the server cannot be reached: " + e.message);
    }
    if (res.status === 401 && askToken) {
      await askToken(token() !== "");
      continue;
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    if (!res.ok) {
      const err = data && data.error;
      if (err && typeof err === "object") throw new APIError(res.status, err.field || "", err.message || res.statusText);
      if (typeof err === "string") throw new APIError(res.status, "", err);
      throw new APIError(res.status, "", `${res.status} ${res.statusText}`);
    }
    return data;
  }
}

// follow reads GET /v1/events/stream and calls onEvent(event) for each
// event, onState("live"|"down", detail) when the connection opens or
// drops. It reconnects with Last-Event-ID, backing off up to 15 s.
export function follow(onEvent, onState) {
  let last = "";
  let wait = 500;
  const stop = new AbortController();
  (async () => {
    while (!stop.signal.aborted) {
      let why = "";
      try {
        const h = headers({ Accept: "text/event-stream" });
        if (last) h["Last-Event-ID"] = last;
        const res = await fetch("/v1/events/stream", { headers: h, signal: stop.signal, cache: "no-store" });
        if (res.status === 401 && askToken) {
          await askToken(token() !== "");
          continue;
        }
        if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, "\n");
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            const msg = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const m = parse(msg);
            if (m.comment !== undefined && m.comment.startsWith("stream after")) {
              wait = 500;
              onState("live", m.comment);
            }
            if (m.comment === "server shutting down") why = "the server is shutting down";
            if (m.id !== undefined) last = m.id;
            if (m.data !== undefined) {
              try { onEvent(JSON.parse(m.data)); } catch (e) { console.error("bad event", e, m.data); }
            }
          }
        }
        why = why || "the server closed the stream";
      } catch (e) {
        if (stop.signal.aborted) return;
        why = e.message;
      }
      onState("down", why);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 15000);
    }
  })();
  return () => stop.abort();
}

function parse(msg) {
  const m = {};
  for (const line of msg.split("\n")) {
    if (line.startsWith(":")) { m.comment = line.slice(1).trim(); continue; }
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") m.data = m.data === undefined ? value : m.data + "\n" + value;
    else if (field === "id") m.id = value;
  }
  return m;
}
