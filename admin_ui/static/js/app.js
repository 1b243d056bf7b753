// Hash router and auth guard. Every route but #/login needs a session (GET /api/auth/me).
import { get, post, setCsrfToken, onUnauthorized } from "./api.js";
import { applyStatic, getLang, labelOf, onLangChange, setLang, t } from "./i18n.js";
import { h, replace, toast, errorBanner } from "./ui.js";
import { can } from "./roles.js";
import * as login from "./pages/login.js";
import * as models from "./pages/models.js";
import * as diagnostics from "./pages/diagnostics.js";
import * as playground from "./pages/playground.js";
import * as people from "./pages/people.js";
import * as audit from "./pages/audit.js";
import { openPasswordDialog } from "./pages/password.js";
import * as evaluations from "./pages/evaluations.js";
import * as scripts from "./pages/scripts.js";
import * as lexicons from "./pages/lexicons.js";
import * as globalIntents from "./pages/global_intents.js";
import * as canaries from "./pages/canaries.js";
import * as serviceKeys from "./pages/service_keys.js";
import * as usage from "./pages/usage.js";
import * as call from "./pages/call.js";

const DEFAULT_ROUTE = "/ai/models";
const ROUTES = {
  "/login": { page: login, title: "login_title", public: true },
  "/ai/models": { page: models, title: "nav_models" },
  "/ai/diagnostics": { page: diagnostics, title: "nav_diagnostics" },
  "/ai/playground": { page: playground, title: "nav_playground", need: "operator" },
  "/admin/people": { page: people, title: "nav_people", need: "admin" },
  "/admin/audit": { page: audit, title: "nav_audit", need: "admin" },
  "/ai/evaluations": { page: evaluations, title: "nav_evaluations" },
  "/ai/scripts": { page: scripts, title: "nav_scripts" },
  "/ai/lexicons": { page: lexicons, title: "nav_lexicons" },
  "/ai/global-intents": { page: globalIntents, title: "nav_global_intents" },
  "/ai/canaries": { page: canaries, title: "nav_canaries" },
  "/admin/service-keys": { page: serviceKeys, title: "nav_service_keys", need: "admin" },
  "/ai/usage": { page: usage, title: "nav_usage" },
  "/ai/call": { page: call, title: "call_title" },
};

export const session = { me: null };
let cleanup = null;
let navSeq = 0;

export function parseHash(hash = location.hash) {
  const raw = hash.replace(/^#/, "") || "/";
  const q = raw.indexOf("?");
  const path = (q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, "") || "/";
  return { path, query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)) };
}

export function navigate(path, { replace: rep = false } = {}) {
  const target = `#${path}`;
  if (location.hash === target) { render(); return; }
  if (rep) location.replace(target); else location.hash = target;
}

/** Rewrite the hash's query without a navigation (filters kept in the URL). */
export function setQuery(params) {
  const { path } = parseHash();
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.set(k, v);
  const s = u.toString();
  history.replaceState(null, "", `#${path}${s ? `?${s}` : ""}`);
}

function safeNext(next) {
  if (!next) return DEFAULT_ROUTE;
  const { path } = parseHash(`#${next}`);
  return ROUTES[path] && !ROUTES[path].public ? next : DEFAULT_ROUTE;
}

function goLogin(fromPath) {
  const next = fromPath && fromPath !== "/login" ? `?next=${encodeURIComponent(fromPath)}` : "";
  navigate(`/login${next}`, { replace: true });
}

async function loadMe() {
  try {
    const me = await get("/api/auth/me", { quiet401: true });
    if (!me || typeof me !== "object" || !me.username) return null;
    session.me = me;
    setCsrfToken(me.csrf_token || me.csrf || null);
    return me;
  } catch (e) {
    if (e && [401, 403, 404].includes(e.status)) return null;
    throw e;
  }
}

function updateShell(path) {
  const app = document.getElementById("app");
  app.dataset.auth = session.me ? "in" : "out";
  const chip = document.getElementById("user-chip");
  const logout = document.getElementById("logout-btn");
  const password = document.getElementById("password-btn");
  chip.hidden = logout.hidden = !session.me;
  password.hidden = !session.me || session.me.via !== "session";
  if (session.me) {
    const role = session.me.role;
    replace(chip, h("span", { class: "user-name" }, session.me.username),
      role ? h("span", { class: "user-role", "data-role": role, "data-testid": "user-role" }, labelOf("role_", role)) : null);
  }
  // The nav shows only what the role may open (the server refuses the rest anyway).
  document.querySelectorAll(".sidebar [data-need]").forEach((el) => { el.hidden = !can(session.me, el.dataset.need); });
  document.querySelectorAll(".sidebar a[data-route]").forEach((a) => {
    if (a.dataset.route === path) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  document.getElementById("lang-toggle").textContent = t("lang_other");
}

function focusPage(main, title) {
  const target = main.querySelector("[data-autofocus]") || main.querySelector("h1") || main;
  if (!target.hasAttribute("tabindex") && !/^(INPUT|SELECT|TEXTAREA|BUTTON|A)$/.test(target.tagName)) {
    target.setAttribute("tabindex", "-1");
  }
  target.focus({ preventScroll: false });
  const announcer = document.getElementById("route-announcer");
  if (announcer) announcer.textContent = title;
}

export async function render() {
  const seq = ++navSeq;
  const { path, query } = parseHash();
  if (path === "/") { navigate(DEFAULT_ROUTE, { replace: true }); return; }
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  const main = document.getElementById("main");
  const route = ROUTES[path];
  if (!route || !route.public) {
    if (!session.me) {
      try {
        const me = await loadMe();
        if (seq !== navSeq) return;
        if (!me) { goLogin(route ? `${path}${query.toString() ? `?${query}` : ""}` : null); return; }
      } catch (e) {
        if (seq !== navSeq) return;
        updateShell(path);
        replace(main, errorBanner(e), h("button", { type: "button", class: "btn", onclick: () => render() }, t("retry")));
        return;
      }
    }
  }
  updateShell(path);
  const title = t(route ? route.title : "page_not_found");
  document.title = `${title} · ${t("app_title")}`;
  replace(main);
  if (!route) {
    main.append(h("h1", { class: "page-title", tabindex: "-1" }, t("page_not_found")),
      h("p", {}, t("page_not_found_body")), h("a", { href: `#${DEFAULT_ROUTE}` }, t("back_home")));
    focusPage(main, title);
    return;
  }
  if (!route.public && !can(session.me, route.need)) {
    main.append(h("h1", { class: "page-title", tabindex: "-1" }, t("not_allowed")),
      h("p", { "data-testid": "not-allowed" }, t("not_allowed_body", { role: t(`role_${session.me?.role}`), need: t(`role_${route.need}`) })),
      h("a", { href: `#${DEFAULT_ROUTE}` }, t("back_home")));
    focusPage(main, title);
    return;
  }
  const ctx = {
    query, session, navigate, setQuery,
    next: safeNext(query.get("next")),
    onLogin: async () => { await loadMe(); navigate(safeNext(query.get("next")), { replace: true }); },
  };
  try {
    const result = route.page.render(main, ctx);
    if (typeof result === "function") cleanup = result;
  } catch (e) {
    replace(main, errorBanner(e));
  }
  focusPage(main, title);
}

async function logout() {
  try { await post("/api/auth/logout"); } catch { /* the session is dropped client-side anyway */ }
  session.me = null;
  setCsrfToken(null);
  toast(t("logged_out"));
  navigate("/login", { replace: true });
}

function boot() {
  applyStatic();
  document.getElementById("lang-toggle").addEventListener("click", () => {
    setLang(getLang() === "zh" ? "en" : "zh");
  });
  // Toasts were worded in the old language: drop them rather than leave it on screen.
  onLangChange(() => { replace(document.getElementById("toasts")); applyStatic(); render(); });
  document.getElementById("logout-btn").addEventListener("click", logout);
  document.getElementById("password-btn").addEventListener("click", () => openPasswordDialog());
  onUnauthorized(() => {
    if (!session.me) return;
    session.me = null;
    setCsrfToken(null);
    toast(t("session_expired"), "error");
    const { path, query } = parseHash();
    goLogin(`${path}${query.toString() ? `?${query}` : ""}`);
  });
  window.addEventListener("hashchange", render);
  render();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
