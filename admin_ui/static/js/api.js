// fetch wrapper: JSON in/out, session cookie, CSRF header on writes, error envelope -> ApiError.
// Every request asks for the console's language (Accept-Language): the server's messages follow it.
import { acceptLanguage } from "./i18n.js";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
let csrfToken = null;
const unauthorizedHandlers = new Set();

export class ApiError extends Error {
  constructor({ status = 0, code = "error", message = "", fields = [], body = null } = {}) {
    super(message || code);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.fields = Array.isArray(fields) ? fields : [];
    this.body = body;
    this.error = body && typeof body === "object" ? body.error ?? null : null;
  }
  /** message per field name: {"name": "too long", "extra_params": "..."}. */
  fieldMap() {
    const out = {};
    for (const f of this.fields) {
      if (!f || typeof f !== "object") continue;
      const name = String(f.field ?? f.name ?? f.loc ?? "").replace(/^body\./, "");
      if (name && !out[name]) out[name] = String(f.message ?? f.msg ?? "");
    }
    return out;
  }
}

export function setCsrfToken(token) { csrfToken = token || null; }
export function onUnauthorized(fn) { unauthorizedHandlers.add(fn); return () => unauthorizedHandlers.delete(fn); }

async function errorFrom(resp) {
  let body = null;
  try {
    const text = await resp.text();
    body = text ? JSON.parse(text) : null;
  } catch { body = null; }
  const err = body && typeof body === "object" && body.error && typeof body.error === "object" ? body.error : {};
  let fields = err.fields;
  if (!Array.isArray(fields) && Array.isArray(body?.detail)) {  // bare FastAPI shape, just in case
    fields = body.detail.map((d) => ({ field: (d.loc || []).filter((p) => p !== "body").join("."), message: d.msg }));
  }
  return new ApiError({
    status: resp.status,
    code: err.code || (resp.status === 401 ? "unauthorized" : `http_${resp.status}`),
    message: err.message || (typeof body?.detail === "string" ? body.detail : resp.statusText || `HTTP ${resp.status}`),
    fields: fields || [],
    body,
  });
}

/** Low-level request: returns the Response when ok, throws ApiError otherwise. */
export async function request(method, path, { body, signal, headers = {}, quiet401 = false } = {}) {
  const m = method.toUpperCase();
  const h = { Accept: "application/json", "Accept-Language": acceptLanguage(), ...headers };
  if (body !== undefined) h["Content-Type"] = "application/json";
  if (!SAFE.has(m) && csrfToken) h["X-CSRF-Token"] = csrfToken;
  let resp;
  try {
    resp = await fetch(path, {
      method: m, headers: h, credentials: "same-origin", cache: "no-store", signal,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    throw new ApiError({ status: 0, code: "network_error", message: String(e && e.message ? e.message : e) });
  }
  if (!resp.ok) {
    const err = await errorFrom(resp);
    if (resp.status === 401 && !quiet401) unauthorizedHandlers.forEach((fn) => fn(err));
    throw err;
  }
  return resp;
}

/** JSON request: returns the parsed body, or null for 204 / empty. */
export async function api(method, path, body, opts = {}) {
  const resp = await request(method, path, { ...opts, body });
  if (resp.status === 204) return null;
  const text = await resp.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return text; }
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body, opts) => api("POST", path, body, opts);
export const put = (path, body, opts) => api("PUT", path, body, opts);
export const del = (path, opts) => api("DELETE", path, undefined, opts);

/** Query string from an object, skipping empty values. */
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") u.set(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : "";
}
