// #/ai/evaluations: shadow evaluations. Start one from a configuration row (openEvaluate),
// watch its progress (polled every second while it runs, cancellable), read the comparison
// (eval_report.js), and the list of past evaluations. `?id=N` shows one.
import { get, post, qs } from "../api.js";
import { fmtNum, fmtTime, t } from "../i18n.js";
import { badge, confirmDialog, errorBanner, field, h, nextId, pageHeader, replace, setBusy, toast } from "../ui.js";
import { can } from "../roles.js";
import { parseLocalTime } from "./diagnostics.js";
import { pct, renderReport } from "./eval_report.js";
import { openStartCanary } from "./canaries.js";

const POLL_MS = 1000;
const STATUS_KIND = { running: "info", done: "ok", cancelled: "warn", failed: "error" };

export const statusBadge = (s) => badge(t(`eval_status_${s}`) || s, STATUS_KIND[s] || "neutral", { "data-testid": "eval-status" });

/** The nodes with recorded calls, busiest first ([] when they cannot be read). */
async function recordedNodes() {
  try { return (await get("/api/admin/evaluations/nodes"))?.items || []; } catch { return []; }
}

/** The "evaluate against recent traffic" dialog: for a stored nlu configuration (from its
 * row), or with a choice of the inactive ones (from this page). */
export async function openEvaluate(config, navigate) {
  const opener = document.activeElement;
  const titleId = nextId("eval");
  let candidates = [];
  if (!config) {
    try {
      candidates = ((await get("/api/admin/llm-configs"))?.items || []).filter((c) => c.tier === "nlu" && !c.is_active);
    } catch { candidates = []; }
  }
  const nodes = await recordedNodes();
  const cand = config ? null : field({ label: t("eval_candidate_label"), name: "candidate_id", hint: t("eval_candidate_hint"),
    value: candidates[0]?.id ?? "", options: candidates.map((c) => ({ value: c.id, label: `${c.name} · ${c.model}` })) });
  // The nodes that have recorded calls to replay; a free field when none could be read.
  const node = nodes.length
    ? field({ label: t("eval_node"), name: "node_id", value: "", options: [{ value: "", label: t("eval_node_all") },
      ...nodes.map((n) => ({ value: n.node_id, label: t("eval_node_option", { node: n.node_id, n: fmtNum(n.calls) }) }))] })
    : field({ label: t("eval_node"), name: "node_id", value: "", hint: t("eval_node_hint"),
      attrs: { autocomplete: "off", spellcheck: "false", maxlength: 200 } });
  const limit = field({ label: t("eval_limit"), name: "limit", type: "number", value: "500", hint: t("eval_limit_hint"),
    attrs: { min: 1, max: 100000, step: 1, inputmode: "numeric" } });
  const since = field({ label: t("since"), name: "since", value: "", hint: t("eval_since_hint"),
    attrs: { placeholder: "YYYY-MM-DD HH:mm", autocomplete: "off", spellcheck: "false", inputmode: "numeric" } });
  const fields = { node_id: node, limit, since, ...(cand ? { candidate_id: cand } : {}) };
  const status = h("div", { class: "form-status", "aria-live": "assertive" });
  const start = h("button", { type: "submit", class: "btn btn-primary", disabled: !config && !candidates.length }, t("eval_start"));
  const dlg = h("dialog", { class: "dialog", "aria-labelledby": titleId, "data-testid": "eval-dialog" });
  const form = h("form", { class: "dialog-body", novalidate: true },
    config ? h("p", { class: "muted" }, t("eval_dialog_intro", { name: config.name, model: config.model }))
      : candidates.length ? cand.row : h("p", { class: "banner banner-warn" }, t("eval_candidate_none")),
    node.row, h("div", { class: "grid-2" }, limit.row, since.row), status,
    h("div", { class: "dialog-actions" },
      h("button", { type: "button", class: "btn", onclick: () => dlg.close() }, t("cancel")), start));
  dlg.append(h("div", { class: "dialog-head" }, h("h2", { id: titleId }, config ? t("eval_dialog_title") : t("eval_new")),
    h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => dlg.close() }, "×")), form);
  dlg.addEventListener("close", () => { dlg.remove(); if (opener && opener.isConnected) opener.focus(); });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    Object.values(fields).forEach((f) => f.setError(""));
    replace(status);
    const n = Number(limit.input.value);
    if (!Number.isInteger(n) || n < 1) { limit.setError(t("eval_limit_invalid")); limit.input.focus(); return; }
    const when = since.input.value.trim() ? parseLocalTime(since.input.value) : null;
    if (since.input.value.trim() && !when) { since.setError(t("since_invalid")); since.input.focus(); return; }
    const body = { candidate_id: config ? config.id : Number(cand.input.value), limit: n };
    if (node.input.value.trim()) body.node_id = node.input.value.trim();
    if (when) body.since = when.toISOString();
    setBusy(start, true, t("eval_starting"));
    try {
      const started = await post("/api/admin/evaluations", body);
      dlg.close();
      toast(t("eval_started", { id: started.id }), "ok");
      navigate(`/ai/evaluations?id=${encodeURIComponent(started.id)}`);
    } catch (e) {
      setBusy(start, false);
      const known = e.status === 422 ? e.fieldMap() : {};
      let shown = false;
      for (const [name, msg] of Object.entries(known)) if (fields[name]) { fields[name].setError(msg); shown = true; }
      const text = e.code === "no_traffic" ? t("eval_no_traffic")
        : e.code === "evaluation_running" ? t("eval_running_here", { id: e.error?.evaluation_id ?? "?" }) : null;
      if (text || !shown) {
        const link = e.code === "evaluation_running" && e.error?.evaluation_id
          ? h("a", { href: `#/ai/evaluations?id=${encodeURIComponent(e.error.evaluation_id)}`, onclick: () => dlg.close() }, t("eval_open")) : null;
        replace(status, text ? h("div", { class: "banner banner-error", role: "alert" }, text, " ", link) : errorBanner(e));
      }
    }
  });
  document.body.appendChild(dlg);
  dlg.showModal();
  (cand && candidates.length ? cand.input : node.input).focus();
}

export function render(main, ctx) {
  const canStart = can(ctx?.session?.me, "operator");  // replays call a model
  const detail = h("section", { class: "section", "aria-live": "polite", "data-testid": "eval-detail" });
  const listBox = h("div", { class: "table-wrap", "data-testid": "eval-list" });
  const newBtn = canStart ? h("button", { type: "button", class: "btn btn-primary", "data-testid": "eval-new",
    onclick: () => openEvaluate(null, ctx.navigate) }, `+ ${t("eval_new")}`) : null;
  main.append(pageHeader(t("eval_title"), t("eval_intro"), newBtn), detail,
    h("section", { class: "section", "aria-labelledby": "eval-list-h" }, h("h2", { id: "eval-list-h" }, t("eval_past")), listBox));
  let alive = true;
  let timer = null;
  let shown = null;

  async function refreshList() {
    try {
      const body = await get(`/api/admin/evaluations${qs({ limit: 50 })}`);
      if (alive) renderList(body?.items || []);
    } catch (e) { if (alive) replace(listBox, errorBanner(e)); }
  }

  function renderList(items) {
    if (!items.length) { replace(listBox, h("p", { class: "empty" }, t("eval_none"))); return; }
    replace(listBox, h("table", { class: "table" },
      h("caption", { class: "sr-only" }, t("eval_past")),
      h("thead", {}, h("tr", {}, ["#", t("eval_candidate"), t("status"), t("eval_progress"), t("eval_intent_agreement"),
        t("eval_slot_agreement"), t("eval_started_at")].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, items.map((e) => h("tr", { "data-evaluation-id": e.id, class: String(e.id) === String(shown) ? "selected" : "" },
        h("td", {}, h("a", { href: `#/ai/evaluations?id=${encodeURIComponent(e.id)}`, onclick: (ev) => { ev.preventDefault(); open(e.id); } },
          `#${e.id}`)),
        h("td", {}, h("div", { class: "cell-name" }, e.candidate?.name || `#${e.candidate_id}`), h("div", { class: "cell-sub mono" }, e.candidate?.model || "")),
        h("td", {}, statusBadge(e.status)),
        h("td", { class: "num", "data-progress": "" }, `${fmtNum(e.progress?.done)} / ${fmtNum(e.progress?.total)}`),
        h("td", { class: "num" }, pct(e.summary?.intent_agreement)),
        h("td", { class: "num" }, pct(e.summary?.slot_agreement)),
        h("td", {}, fmtTime(e.created_at), e.created_by ? h("div", { class: "cell-sub" }, e.created_by) : null))))));
  }

  function open(id) {
    ctx.setQuery({ id });
    load(id);
  }

  async function load(id) {
    clearTimeout(timer);
    shown = id;
    if (!id) { replace(detail); return; }
    try {
      const e = await get(`/api/admin/evaluations/${encodeURIComponent(id)}`);
      if (!alive || shown !== id) return;
      renderDetail(e);
      const cell = listBox.querySelector(`tr[data-evaluation-id="${CSS.escape(String(e.id))}"] [data-progress]`);
      if (cell) cell.textContent = `${fmtNum(e.progress?.done)} / ${fmtNum(e.progress?.total)}`;
      if (e.status === "running") timer = setTimeout(() => load(id), POLL_MS);
      else refreshList();
    } catch (err) {
      if (alive) replace(detail, errorBanner(err));
    }
  }

  function renderDetail(e) {
    const head = h("div", { class: "section-head" },
      h("h2", { tabindex: "-1" }, t("eval_heading", { id: e.id, name: e.candidate?.name || `#${e.candidate_id}` })),
      statusBadge(e.status));
    const meta = h("dl", { class: "kv-list inline" },
      h("div", { class: "kv" }, h("dt", {}, t("model")), h("dd", { class: "mono" }, e.candidate?.model || "—")),
      h("div", { class: "kv" }, h("dt", {}, t("eval_node")), h("dd", {}, e.filter?.node_id || t("all"))),
      // How many calls were replayed (what the numbers below stand on), the asked limit beside.
      h("div", { class: "kv" }, h("dt", {}, t("calls")), h("dd", { "data-testid": "eval-replayed" },
        t("eval_replayed_limit", { n: fmtNum(e.summary?.calls ?? e.progress?.done ?? 0), limit: fmtNum(e.filter?.limit) }))),
      e.filter?.since ? h("div", { class: "kv" }, h("dt", {}, t("since")), h("dd", {}, fmtTime(e.filter.since))) : null,
      h("div", { class: "kv" }, h("dt", {}, t("eval_started_at")), h("dd", {}, fmtTime(e.created_at))),
      e.created_by ? h("div", { class: "kv" }, h("dt", {}, t("eval_by")), h("dd", {}, e.created_by)) : null);
    const panel = h("div", { class: "panel" }, head, meta);
    if (canStart && e.status === "done" && e.summary?.calls) panel.append(activateAction(e));
    if (e.reason) panel.append(h("div", { class: "banner banner-error", role: "alert" }, e.reason));
    if (e.status === "running") panel.append(progress(e));
    else if (e.summary?.calls) panel.append(renderReport(e));
    else panel.append(h("p", { class: "muted eval-empty" }, t("eval_nothing_replayed")));
    replace(detail, panel);
  }

  /** "Activate this candidate": the decision the report is for, one step away. */
  function activateAction(e) {
    const name = e.candidate?.name || `#${e.candidate_id}`;
    const out = h("div", { class: "eval-activate" });
    const btn = h("button", { type: "button", class: "btn btn-primary", "data-testid": "eval-activate", onclick: async () => {
      if (!(await confirmDialog(t("eval_confirm_activate", { name })))) return;
      setBusy(btn, true);
      try {
        await post(`/api/admin/llm-configs/${encodeURIComponent(e.candidate_id)}/activate`);
        toast(t("eval_activated", { name }), "ok");
        replace(out, badge(t("eval_candidate_active"), "ok"));
      } catch (err) { setBusy(btn, false); toast(`${t("error_generic")}${t("colon")}${err.message}`, "error"); }
    } }, t("eval_activate"));
    // The safer next step: a share of live calls first (canary rollout).
    const canary = h("button", { type: "button", class: "btn", "data-testid": "eval-canary", onclick: () => openStartCanary(
      { id: e.candidate_id, name, model: e.candidate?.model || "" }, ctx.navigate) }, t("canary_start"));
    replace(out, btn, " ", canary);
    // Already the active one (activated earlier): say so instead of offering it again.
    get("/api/admin/llm-active").then((a) => {
      if (String(a?.tiers?.nlu?.config?.id) === String(e.candidate_id)) replace(out, badge(t("eval_candidate_active"), "ok"));
    }, () => {});
    return out;
  }

  function progress(e) {
    const done = e.progress?.done ?? 0;
    const total = e.progress?.total || 0;
    const share = total ? Math.min(100, Math.round((done / total) * 100)) : 0;
    const cancel = h("button", { type: "button", class: "btn btn-danger-outline", onclick: async (ev) => {
      setBusy(ev.currentTarget, true, t("eval_cancelling"));
      try { await post(`/api/admin/evaluations/${encodeURIComponent(e.id)}/cancel`); toast(t("eval_cancelled_toast"), "ok"); }
      catch (err) { toast(`${t("error_generic")}${t("colon")}${err.message}`, "error"); }
      load(e.id);
    } }, t("eval_cancel"));
    const fill = h("span", {});
    fill.style.width = `${share}%`;  // CSSOM, not a style attribute: the console's CSP allows no inline styles
    return h("div", { class: "eval-progress-box" },
      h("div", { class: "eval-progress", role: "progressbar", "aria-label": t("eval_progress"), "aria-valuemin": 0,
        "aria-valuemax": total, "aria-valuenow": done, "data-testid": "eval-progress" }, fill),
      h("div", { class: "eval-progress-foot" },
        h("span", { class: "progress-line" }, t("eval_progress_line", { done: fmtNum(done), total: fmtNum(total), pct: String(share) })),
        cancel));
  }

  refreshList();
  const initial = ctx.query.get("id");
  if (initial) load(initial);
  return () => { alive = false; clearTimeout(timer); };
}
