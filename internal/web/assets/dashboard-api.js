// The dashboard's only way to the server: the public /v1 API with the
// signed-in key as a bearer token, exactly as any other client calls it.
// The key lives in sessionStorage, so it stays with this tab and is gone when
// the tab closes; it is never put in a URL, a cookie or localStorage.

const KEY = "ratchet.apiKey";

export function getKey() {
  try { return sessionStorage.getItem(KEY) || ""; } catch { return ""; }
}

export function setKey(k) {
  try {
    if (k) sessionStorage.setItem(KEY, k); else sessionStorage.removeItem(KEY);
  } catch { /* storage disabled: the key lives until the next reload */ }
}

// ApiError is a non-2xx answer: status, the error code and message of the
// API's one error shape, its field errors, and error.current on a conflict.
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || "";
    this.fields = e.fields || [];
    this.current = e.current;
  }
}

// api calls one route and returns the decoded JSON body. A 401 signs the
// tab out (the onUnauthenticated hook shows the sign-in form again).
export const hooks = { onUnauthenticated: () => {} };

export async function api(method, path, body, key = getKey()) {
  const init = { method, headers: { Authorization: "Bearer " + key, Accept: "application/json" }, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, { error: { code: "network", message: "The server did not answer; check that ratchet serve is running." } });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401) hooks.onUnauthenticated(err);
    throw err;
  }
  return data;
}

// query builds "?a=1&b=2" from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? "?" + s : "";
}
