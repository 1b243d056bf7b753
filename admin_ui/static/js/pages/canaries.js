// #/ai/canaries: canary rollouts. Start one from a configuration row or an evaluation report
// (openStartCanary), watch both sides' figures (polled every few seconds while it runs, kept
// as a series while the page is open), promote or stop it; `?id=N` shows one. A banner on the
// models page says when one runs (canaryBanner).
import { get, post } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, codeBadge, confirmDialog, errorBanner, field, h, nextId, pageHeader, replace, setBusy, toast } from "../ui.js";
import { can } from "../roles.js";
import { pct } from "./eval_report.js";

const POLL_MS = 3000;
const RUNNING = "running";
const STATUS_KIND = { running: "info", promoted: "ok", stopped: "neutral", rolled_back: "error" };
const ms = (x) => (x === null || x === undefined ? "—" : `${fmtNum(x, 1)} ms`);

export const canaryStatus = (s) => badge(t(`canary_status_${s}`), STATUS_KIND[s] || "neutral", { "data-testid": "canary-status" });

/** The "start canary" dialog for a stored, inactive nlu or chat configuration. */
export async function openStartCanary(config, navigate) {
  const opener = document.activeElement;
  const titleId = nextId("canary");
  const num = (label, name, value, hint, attrs) => field({ label, name, type: "number", value, hint,
    attrs: { inputmode: "decimal", ...attrs } });
  const fields = {
    percent: num(t("canary_percent"), "percent", "5", t("canary_percent_hint"), { min: 0.01, max: 100, step: 0.01 }),
    min_calls: num(t("canary_min_calls"), "min_calls", "200", t("canary_min_calls_hint"), { min: 1, step: 1 }),
    max_fallback_rate: num(t("canary_max_fallback_pct"), "max_fallback_rate", "5",
      config.tier === "chat" ? t("canary_fallback_hint_chat") : null, { min: 0, max: 100, step: 0.1 }),
    max_error_rate: num(t("canary_max_error_pct"), "max_error_rate", "2", null, { min: 0, max: 100, step: 0.1 }),
    max_p95_ms: num(t("canary_max_p95_ms"), "max_p95_ms", "", t("canary_limit_blank"), { min: 1, step: 1 }),
  };
  const status = h("div", { class: "form-status", "aria-live": "assertive" });
  const start = h("button", { type: "submit", class: "btn btn-primary", "data-testid": "canary-submit" }, t("canary_start"));
  const dlg = h("dialog", { class: "dialog", "aria-labelledby": titleId, "data-testid": "canary-dialog" });
  const form = h("form", { class: "dialog-body", novalidate: true },
    h("p", { class: "muted" }, t("canary_dialog_intro", { name: config.name, model: config.model })),
    fields.percent.row, fields.min_calls.row,
    h("div", { class: "grid-2" }, fields.max_fallback_rate.row, fields.max_error_rate.row), fields.max_p95_ms.row, status,
    h("div", { class: "dialog-actions" },
      h("button", { type: "button", class: "btn", onclick: () => dlg.close() }, t("cancel")), start));
  dlg.append(h("div", { class: "dialog-head" }, h("h2", { id: titleId }, t("canary_start_title")),
    h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => dlg.close() }, "×")), form);
  dlg.addEventListener("close", () => { dlg.remove(); if (opener && opener.isConnected) opener.focus(); });
  const value = (f) => (f.input.value.trim() === "" ? null : Number(f.input.value));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    Object.values(fields).forEach((f) => f.setError(""));
    replace(status);
    const rate = (x) => (x === null ? null : x / 100);  // the form takes percents, the API fractions
    const body = { candidate_id: config.id, percent: value(fields.percent), rollback: {
      min_calls: value(fields.min_calls), max_fallback_rate: rate(value(fields.max_fallback_rate)),
      max_error_rate: rate(value(fields.max_error_rate)), max_p95_ms: value(fields.max_p95_ms) } };
    setBusy(start, true);
    try {
      const started = await post("/api/admin/canaries", body);
      dlg.close();
      toast(t("canary_started", { id: started.id }), "ok");
      navigate(`/ai/canaries?id=${encodeURIComponent(started.id)}`);
    } catch (e) {
      setBusy(start, false);
      let shown = false;
      for (const [name, msg] of Object.entries(e.status === 422 ? e.fieldMap() : {})) {
        const f = fields[name.replace(/^rollback\./, "")];
        if (f) { f.setError(msg); shown = true; }
      }
      if (!shown) {
        const link = e.code === "canary_running" && e.error?.canary_id
          ? h("a", { href: `#/ai/canaries?id=${encodeURIComponent(e.error.canary_id)}`, onclick: () => dlg.close() }, t("canary_open")) : null;
        replace(status, h("div", {}, errorBanner(e), link));
      }
    }
  });
  document.body.appendChild(dlg);
  dlg.showModal();
  fields.percent.input.focus();
}

/** A banner naming the running canaries (null when none runs or they cannot be read). */
export async function canaryBanner() {
  let running = [];
  try { running = ((await get("/api/admin/canaries?limit=20"))?.items || []).filter((c) => c.status === RUNNING); } catch { return null; }
  if (!running.length) return null;
  return h("div", { class: "banner banner-warn", role: "status", "data-testid": "canary-banner" }, running.map((c) =>
    h("p", {}, t("canary_banner", { tier: tierLabel(c.tier), percent: fmtNum(c.percent, 2), name: c.candidate?.name || `#${c.candidate?.id}` }),
      " ", h("a", { href: `#/ai/canaries?id=${encodeURIComponent(c.id)}` }, t("canary_open")))));
}

function sides(c) {
  const a = c.figures?.active || {};
  const k = c.figures?.canary || {};
  const rows = [
    [t("calls"), fmtNum(a.calls), fmtNum(k.calls)],
    [t("canary_fallback_rate"), pct(a.fallback_rate), pct(k.fallback_rate)],
    [t("canary_error_rate"), pct(a.error_rate), pct(k.error_rate)],
    [t("p50"), ms(a.p50_ms), ms(k.p50_ms)],
    [t("eval_p95"), ms(a.p95_ms), ms(k.p95_ms)],
    [t("code"), codes(a.codes), codes(k.codes)],
  ];
  return h("table", { class: "table table-compact", "data-testid": "canary-sides" },
    h("caption", { class: "sr-only" }, t("canary_sides")),
    h("thead", {}, h("tr", {}, ["", t("canary_side_active"), t("canary_side_canary")].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map(([name, x, y]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, x), h("td", {}, y)))));
}

function codes(map) {
  const entries = Object.entries(map || {});
  return entries.length ? h("div", { class: "eval-codes" }, entries.map(([code, n]) => h("span", { class: "eval-code" }, codeBadge(code), ` ${fmtNum(n)}`))) : "—";
}

/** The figures as they moved while this page was open, newest first. */
function series(samples) {
  if (samples.length < 2) return null;
  return h("table", { class: "table table-compact", "data-testid": "canary-series" },
    h("caption", {}, t("canary_series")),
    h("thead", {}, h("tr", {}, [t("canary_at"), `${t("canary_side_active")} ${t("calls")}`, `${t("canary_side_canary")} ${t("calls")}`,
      `${t("canary_side_canary")} ${t("canary_fallback_rate")}`, `${t("canary_side_canary")} P95`].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, [...samples].reverse().slice(0, 20).map((f) => h("tr", {},
      h("td", {}, fmtTime(f.at)), h("td", { class: "num" }, fmtNum(f.active?.calls)), h("td", { class: "num" }, fmtNum(f.canary?.calls)),
      h("td", { class: "num" }, pct(f.canary?.fallback_rate)), h("td", { class: "num" }, ms(f.canary?.p95_ms))))));
}

export function render(main, ctx) {
  const canWrite = can(ctx?.session?.me, "operator");
  const listBox = h("div", { class: "table-wrap" });
  const detail = h("section", { class: "section", "aria-live": "polite", "data-testid": "canary-detail" });
  main.append(pageHeader(t("canary_title"), t("canary_intro")), detail,
    h("section", { class: "section", "aria-labelledby": "canary-list-h" }, h("h2", { id: "canary-list-h" }, t("canary_list")), listBox));
  let alive = true;
  let timer = null;
  let shown = null;
  let samples = [];

  async function refreshList() {
    try {
      const items = (await get("/api/admin/canaries"))?.items || [];
      if (!alive) return;
      if (!items.length) { replace(listBox, h("p", { class: "empty" }, t("canary_none"))); return; }
      replace(listBox, h("table", { class: "table", "data-testid": "canaries-table" },
        h("thead", {}, h("tr", {}, ["#", t("tier"), t("canary_candidate"), t("canary_percent"), t("status"), t("canary_started_at")]
          .map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, items.map((c) => h("tr", { "data-canary-id": c.id },
          h("td", {}, h("a", { href: `#/ai/canaries?id=${encodeURIComponent(c.id)}` }, `#${c.id}`)),
          h("td", {}, tierLabel(c.tier)), h("td", {}, c.candidate?.name || "—", h("div", { class: "cell-sub mono" }, c.candidate?.model || "")),
          h("td", { class: "num" }, `${fmtNum(c.percent, 2)}%`), h("td", {}, canaryStatus(c.status)), h("td", {}, fmtTime(c.started_at)))))));
    } catch (err) { if (alive) replace(listBox, errorBanner(err)); }
  }

  async function load(id) {
    clearTimeout(timer);
    if (shown !== id) samples = [];
    shown = id;
    try {
      const c = await get(`/api/admin/canaries/${encodeURIComponent(id)}`);
      if (!alive || shown !== id) return;
      if (c.figures) samples.push(c.figures);
      renderDetail(c);
      if (c.status === RUNNING) timer = setTimeout(() => load(id), POLL_MS);
      else refreshList();
    } catch (err) { if (alive) replace(detail, errorBanner(err)); }
  }

  function renderDetail(c) {
    const name = c.candidate?.name || `#${c.candidate?.id}`;
    const limits = c.rollback || {};
    const meta = h("dl", { class: "kv-list inline" },
      h("div", { class: "kv" }, h("dt", {}, t("tier")), h("dd", {}, tierLabel(c.tier))),
      h("div", { class: "kv" }, h("dt", {}, t("canary_candidate")), h("dd", { class: "mono" }, `${name} · ${c.candidate?.model || "—"}`)),
      h("div", { class: "kv" }, h("dt", {}, t("canary_active_was")), h("dd", { class: "mono" }, c.active?.name ? `${c.active.name} · ${c.active.model}` : t("source_file"))),
      h("div", { class: "kv" }, h("dt", {}, t("canary_percent")), h("dd", {}, `${fmtNum(c.percent, 2)}%`)),
      h("div", { class: "kv" }, h("dt", {}, t("canary_limits")), h("dd", { "data-testid": "canary-limits" }, t("canary_limits_line", {
        fallback: pct(limits.max_fallback_rate), error: pct(limits.max_error_rate), p95: ms(limits.max_p95_ms), min: fmtNum(limits.min_calls) }))),
      h("div", { class: "kv" }, h("dt", {}, t("canary_started_at")), h("dd", {}, `${fmtTime(c.started_at)} · ${c.started_by || "—"}`)),
      c.ended_at ? h("div", { class: "kv" }, h("dt", {}, t("canary_ended_at")), h("dd", {}, `${fmtTime(c.ended_at)} · ${c.ended_by || "—"}`)) : null);
    const agreement = c.figures?.agreement || {};
    const buttons = canWrite && c.status === RUNNING ? actions(c, name) : null;
    const panel = h("div", { class: "panel", "data-canary-id": c.id },
      h("div", { class: "section-head" }, h("h2", { tabindex: "-1" }, t("canary_heading", { id: c.id, name })), canaryStatus(c.status)),
      meta,
      c.reason ? h("div", { class: "banner banner-error", role: "alert", "data-testid": "canary-reason" }, c.reason.message) : null,
      sides(c),
      h("p", { class: "muted", "data-testid": "canary-agreement" }, t("canary_agreement_line", {
        value: pct(agreement.intent), nodes: fmtNum(agreement.nodes ?? 0), calls: fmtNum(agreement.calls ?? 0) })),
      series(samples), buttons);
    replace(detail, panel);
  }

  function actions(c, name) {
    const act = (key, confirmKey, path, cls) => {
      const btn = h("button", { type: "button", class: cls, "data-testid": `canary-${path}`, onclick: async () => {
        if (!(await confirmDialog(t(confirmKey, { name })))) return;
        setBusy(btn, true);
        try { await post(`/api/admin/canaries/${encodeURIComponent(c.id)}/${path}`); toast(t(`canary_${path}_done`, { name }), "ok"); }
        catch (err) { toast(`${t("error_generic")}${t("colon")}${err.message}`, "error"); }
        load(c.id);
      } }, t(key));
      return btn;
    };
    return h("div", { class: "dialog-actions" },
      act("canary_stop", "canary_confirm_stop", "stop", "btn btn-danger-outline"),
      act("canary_promote", "canary_confirm_promote", "promote", "btn btn-primary"));
  }

  refreshList();
  const initial = ctx.query.get("id");
  if (initial) load(initial);
  return () => { alive = false; clearTimeout(timer); };
}
