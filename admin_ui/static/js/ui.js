// Small DOM helpers. Server data only ever reaches the page through textContent / attributes.
import { fmtNum, labelOf, t } from "./i18n.js";

let uid = 0;
export const nextId = (prefix = "f") => `${prefix}-${++uid}`;

/**
 * h("button", {class: "btn", onclick: fn, "aria-label": "x"}, "text", childNode, [more])
 * Strings become text nodes; null/false children are skipped. Never parses HTML.
 */
export function h(tag, attrs, ...children) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value" && "value" in el && !(el instanceof SVGElement)) el.value = v;
    else if (k === "checked" || k === "disabled" || k === "hidden" || k === "selected") el[k] = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }
export function replace(el, ...children) { clear(el); append(el, children); return el; }

export function toast(message, kind = "info", ms = 4500) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const el = h("div", { class: `toast toast-${kind}` }, message);
  box.appendChild(el);
  setTimeout(() => el.remove(), ms);
}

/** Modal confirm with the native <dialog>: resolves true / false; focus returns to the opener. */
export function confirmDialog(message, { confirmLabel = t("confirm"), danger = false } = {}) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = nextId("dlg");
    const ok = h("button", { type: "submit", value: "ok", class: `btn ${danger ? "btn-danger" : "btn-primary"}` }, confirmLabel);
    const no = h("button", { type: "submit", value: "cancel", class: "btn" }, t("cancel"));
    const dlg = h("dialog", { class: "dialog dialog-confirm", "aria-labelledby": titleId },
      h("form", { method: "dialog" },
        h("p", { id: titleId, class: "dialog-message" }, message),
        h("div", { class: "dialog-actions" }, no, ok)));
    dlg.addEventListener("close", () => {
      resolve(dlg.returnValue === "ok");
      dlg.remove();
      if (opener && opener.isConnected) opener.focus();
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    (danger ? no : ok).focus();
  });
}

const GOOD = new Set(["ok", "completed"]);
const WARN = new Set(["truncated_by_reasoning", "truncated", "cancelled", "superseded", "empty_output"]);
export const TRUNCATION_CODES = new Set(["truncated_by_reasoning", "truncated"]);

export function codeKind(code) {
  if (GOOD.has(code)) return "ok";
  if (WARN.has(code)) return "warn";
  return "error";
}

export function badge(text, kind = "neutral", attrs = {}) {
  return h("span", { class: `badge badge-${kind}`, ...attrs }, text);
}

/** A result code's label in the console's language; the code itself stays in `title` and `data-code`. */
export const codeLabel = (code) => labelOf("code_", code);
export const codeBadge = (code) => badge(codeLabel(code), codeKind(code), { title: code ?? "", "data-code": code ?? "" });

// Wire names of a record's or a diagnostic's fields -> dictionary keys of their labels.
const FIELD_KEYS = { at: "time", latency_ms: "latency", status: "http_status", source: "record_source" };
/** A field's label: its dictionary entry, else the field name (parameter names such as max_tokens). */
export const fieldLabel = (name) => labelOf("", FIELD_KEYS[name] ?? name);

/** A value as a reader sees it: nothing is "—", booleans are yes/no, a list its items. */
export function valueText(v) {
  if (v === null || v === undefined || v === "") return t("none");
  if (typeof v === "boolean") return t(v ? "yes" : "no");
  if (Array.isArray(v)) return v.length ? v.map((x) => (x && typeof x === "object" ? JSON.stringify(x) : valueText(x))).join(t("list_sep")) : t("none");
  if (typeof v === "object") return Object.keys(v).length ? JSON.stringify(v) : t("none");
  return String(v);
}

/** "1,234 ms" that never breaks between the number and its unit. */
export const msText = (v, digits = 0) => (v === null || v === undefined ? t("none") : `${fmtNum(v, digits)}\u00a0ms`);

/** A pretty-printed JSON block. */
export function jsonBlock(value, attrs = {}) {
  let text;
  try { text = JSON.stringify(value, null, 2); } catch { text = String(value); }
  return h("pre", { class: "code-block", ...attrs }, text);
}

/** An error banner (role=alert) from an Error / ApiError. */
export function errorBanner(err, extra) {
  const msg = err && err.code === "network_error" ? t("network_error") : (err && err.message) || t("error_generic");
  // The server words the message in the console's language; its code is for ops, in `title`.
  return h("div", { class: "banner banner-error", role: "alert", title: err?.code || null, "data-code": err?.code || null },
    msg, extra || null);
}

/** Diagnostic box: code, message, advice and the numbers behind it. */
export function diagnosticBox(d) {
  if (!d || typeof d !== "object") return null;
  const nums = ["finish_reason", "max_tokens", "completion_tokens", "reasoning_tokens", "status", "latency_ms"]
    .filter((k) => d[k] !== undefined && d[k] !== null)
    .map((k) => h("div", { class: "kv" }, h("dt", { title: k }, fieldLabel(k)), h("dd", {}, valueText(d[k]))));
  return h("div", { class: `diag-box diag-${codeKind(d.code)}` },
    h("div", { class: "diag-head" }, h("span", { class: "diag-label" }, t("diagnostic")), codeBadge(d.code)),
    d.message ? h("p", { class: "diag-message" }, d.message) : null,
    d.advice ? h("p", { class: "diag-advice" }, h("strong", {}, `${t("advice")}${t("colon")}`), d.advice) : null,
    nums.length ? h("dl", { class: "kv-list" }, nums) : null);
}

/** A labelled form control: returns {row, input, error, setError}. */
export function field({ label, name, type = "text", value, hint, options, required, attrs = {}, control }) {
  const id = nextId(name || "f");
  const errId = `${id}-err`;
  const hintId = hint ? `${id}-hint` : null;
  let input = control;
  if (!input && options) {
    input = h("select", { id, name, ...attrs },
      options.map((o) => h("option", { value: o.value, selected: String(o.value) === String(value ?? "") }, o.label)));
  } else if (!input && type === "textarea") {
    input = h("textarea", { id, name, rows: 3, ...attrs });
    input.value = value ?? "";
  } else if (!input) {
    input = h("input", { id, name, type, value: value ?? "", ...attrs });
  } else {
    input.id = id;
    if (name) input.name = name;
  }
  if (required) input.required = true;
  input.setAttribute("aria-describedby", [hintId, errId].filter(Boolean).join(" "));
  const error = h("p", { class: "field-error", id: errId, hidden: true });
  const row = h("div", { class: "field", dataset: { field: name || "" } },
    h("label", { for: id }, label, required ? h("span", { class: "req", "aria-hidden": "true" }, " *") : null),
    input, hint ? h("p", { class: "field-hint", id: hintId }, hint) : null, error);
  const setError = (msg) => {
    error.textContent = msg || "";
    error.hidden = !msg;
    if (msg) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
    row.classList.toggle("has-error", !!msg);
  };
  // A mark ("required", "not a URL") is about what was there: it goes once the field changes.
  const clearOnEdit = () => { if (row.classList.contains("has-error")) setError(""); };
  input.addEventListener("input", clearOnEdit);
  input.addEventListener("change", clearOnEdit);
  return { row, input, error, setError };
}

/** Page heading that receives focus after navigation. */
export function pageHeader(title, intro, ...actions) {
  return h("div", { class: "page-header" },
    h("div", {}, h("h1", { tabindex: "-1", class: "page-title" }, title),
      intro ? h("p", { class: "page-intro" }, intro) : null),
    actions.length ? h("div", { class: "page-actions" }, actions) : null);
}

export function setBusy(button, busy, busyLabel) {
  if (!button) return;
  if (busy) {
    button.dataset.label = button.dataset.label || button.textContent;
    if (busyLabel) button.textContent = busyLabel;
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
  } else {
    if (button.dataset.label) button.textContent = button.dataset.label;
    delete button.dataset.label;
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

export function randomId(n = 8) {
  const a = new Uint8Array(n);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => (b % 36).toString(36)).join("");
}
