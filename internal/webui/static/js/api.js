// Calls to the admin port's APIs. With admin bearer tokens configured the
// server answers 401: the token form (index.html's dialog) asks for one,
// it is kept in sessionStorage (this tab only) and sent with every call
// as "Authorization: Bearer …"; a 401 brings the form back. Without
// tokens nothing is asked.

const KEY = "wirehouse.token";
let pending = null; // the open form's promise, shared by concurrent 401s

export function token() {
  return sessionStorage.getItem(KEY) || "";
}

export function signOut() {
  sessionStorage.removeItem(KEY);
  location.reload();
}

// askToken shows the form and resolves with what is entered.
function askToken(refused) {
  if (pending) return pending;
  const dlg = document.getElementById("auth");
  const form = document.getElementById("auth-form");
  const input = document.getElementById("auth-token");
  const err = document.getElementById("auth-error");
  err.hidden = !refused;
  err.textContent = refused ? "The server refused that token." : "";
  input.value = "";
  pending = new Promise((resolve) => {
    form.onsubmit = (e) => {
      e.preventDefault();
      const t = input.value.trim();
      if (!t) return;
      sessionStorage.setItem(KEY, t);
      dlg.close();
      pending = null;
      document.dispatchEvent(new CustomEvent("wh-token"));
      resolve(t);
    };
    dlg.oncancel = (e) => e.preventDefault(); // data needs a token: Escape does not close it
  });
  dlg.showModal();
  input.focus();
  return pending;
}

// APIError is an error answer: its status and the server's message.
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// request fetches path (with params, an object or URLSearchParams) and
// returns the parsed JSON, retrying after the token form on 401. Errors
// become APIError with the API's message (Prometheus' "error", Jaeger's
// "errors", Loki's text).
export async function request(path, params, { signal, method = "GET" } = {}) {
  let url = path;
  let body;
  const q = params instanceof URLSearchParams ? params : new URLSearchParams(params || {});
  if (method === "POST") body = q;
  else if ([...q].length) url += (path.includes("?") ? "&" : "?") + q;
  for (let attempt = 0; ; attempt++) {
    const headers = {};
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    const resp = await fetch(url, { method, headers, body, signal, cache: "no-store" });
    if (resp.status === 401 && attempt < 5) {
      await askToken(Boolean(t));
      continue;
    }
    const text = await resp.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      // Loki and Jaeger answer some errors as text.
    }
    if (!resp.ok || (data && data.status === "error")) {
      let msg = text.trim() || resp.statusText;
      if (data && data.error) msg = data.error;
      else if (data && Array.isArray(data.errors) && data.errors.length) msg = data.errors.map((e) => e.msg).join("; ");
      throw new APIError(resp.status, `${resp.status} ${msg}`);
    }
    return data;
  }
}

// get is request with GET.
export const get = (path, params, opts) => request(path, params, opts);

// latest runs fn(signal), aborting the run before: for queries that a
// newer one replaces (typing, refreshing). An aborted run's error is
// swallowed (it resolves undefined).
export function latest() {
  let ctl = null;
  return async (fn) => {
    if (ctl) ctl.abort();
    const mine = (ctl = new AbortController());
    try {
      return await fn(mine.signal);
    } catch (e) {
      if (mine.signal.aborted) return undefined;
      throw e;
    }
  };
}
