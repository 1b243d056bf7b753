// #/ai/evaluations: shadow evaluations. Start one from a configuration row (openEvaluate),
// watch its progress (polled every second while it runs, cancellable), read the comparison
// (eval_report.js), and the list of past evaluations. `?id=N` shows one.
import { get, post, qs } from "../api.js";
import { fmtNum, fmtTime, t } from "../i18n.js";
import { badge, errorBanner, field, h, nextId, pageHeader, replace, setBusy, toast } from "../ui.js";
import { pct, renderReport } from "./eval_report.js";

const POLL_MS = 1000;
const STATUS_KIND = { running: "info", done: "ok", cancelled: "warn", failed: "error" };

export const statusBadge = (s) => badge(t(`eval_status_${s}`) || s, STATUS_KIND[s] || "neutral", { "data-testid": "eval-status" });

/** The "evaluate against recent traffic" dialog for a stored nlu configuration. */
export function openEvaluate(config, navigate) {
  const opener = document.activeElement;
  const titleId = nextId("eval");
  const node = field({ label: t("eval_node"), name: "node_id", value: "", hint: t("eval_node_hint"),
    attrs: { autocomplete: "off", spellcheck: "false", maxlength: 200 } });
  const limit = field({ label: t("eval_limit"), name: "limit", type: "number", value: "500", hint: t("eval_limit_hint"),
    attrs: { min: 1, max: 100000, step: 1, inputmode: "numeric" } });
  const since = field({ label: t("since"), name: "since", type: "datetime-local", value: "", hint: t("eval_since_hint") });
  const fields = { node_id: node, limit, since };
  const status = h("div", { class: "form-status", "aria-live": "assertive" });
  const start = h("button", { type: "submit", class: "btn btn-primary" }, t("eval_start"));
  const dlg = h("dialog", { class: "dialog", "aria-labelledby": titleId, "data-testid": "eval-dialog" });
  const form = h("form", { class: "dialog-body", novalidate: true },
    h("p", { class: "muted" }, t("eval_dialog_intro", { name: config.name, model: config.model })),
    node.row, h("div", { class: "grid-2" }, limit.row, since.row), status,
    h("div", { class: "dialog-actions" },
      h("button", { type: "button", class: "btn", onclick: () => dlg.close() }, t("cancel")), start));
  dlg.append(h("div", { class: "dialog-head" }, h("h2", { id: titleId }, t("eval_dialog_title")),
    h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => dlg.close() }, "×")), form);
  dlg.addEventListener("close", () => { dlg.remove(); if (opener && opener.isConnected) opener.focus(); });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    Object.values(fields).forEach((f) => f.setError(""));
    replace(status);
    const n = Number(limit.input.value);
    if (!Number.isInteger(n) || n < 1) { limit.setError(t("eval_limit_invalid")); limit.input.focus(); return; }
    const body = { candidate_id: config.id, limit: n };
    if (node.input.value.trim()) body.node_id = node.input.value.trim();
    const when = since.input.value ? new Date(since.input.value) : null;
    if (when && !Number.isNaN(when.getTime())) body.since = when.toISOString();
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
  node.input.focus();
}

export function render(main, ctx) {
  const detail = h("section", { class: "section", "aria-live": "polite", "data-testid": "eval-detail" });
  const listBox = h("div", { class: "table-wrap", "data-testid": "eval-list" });
  main.append(pageHeader(t("eval_title"), t("eval_intro")), detail,
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
      h("div", { class: "kv" }, h("dt", {}, t("eval_limit")), h("dd", {}, fmtNum(e.filter?.limit))),
      e.filter?.since ? h("div", { class: "kv" }, h("dt", {}, t("since")), h("dd", {}, fmtTime(e.filter.since))) : null,
      h("div", { class: "kv" }, h("dt", {}, t("eval_started_at")), h("dd", {}, fmtTime(e.created_at))),
      e.created_by ? h("div", { class: "kv" }, h("dt", {}, t("eval_by")), h("dd", {}, e.created_by)) : null);
    const panel = h("div", { class: "panel" }, head, meta);
    if (e.reason) panel.append(h("div", { class: "banner banner-error", role: "alert" }, e.reason));
    if (e.status === "running") panel.append(progress(e));
    else if (e.summary?.calls) panel.append(renderReport(e));
    else panel.append(h("p", { class: "muted eval-empty" }, t("eval_nothing_replayed")));
    replace(detail, panel);
  }

  function progress(e) {
    const done = e.progress?.done ?? 0;
    const total = e.progress?.total || 0;
    const share = total ? Math.min(100, Math.round((done / total) * 100)) : 0;
    const cancel = h("button", { type: "button", class: "btn btn-danger-outline", onclick: async (ev) => {
      setBusy(ev.currentTarget, true, t("eval_cancelling"));
      try { await post(`/api/admin/evaluations/${encodeURIComponent(e.id)}/cancel`); toast(t("eval_cancelled_toast"), "ok"); }
      catch (err) { toast(`${t("error_generic")}: ${err.message}`, "error"); }
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
