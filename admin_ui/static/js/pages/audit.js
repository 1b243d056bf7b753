// #/admin/audit (admins): who changed what, when and from where. Filters kept in the URL,
// newest first, keyset-paged ("older"), each event's detail one click away.
import { get, qs } from "../api.js";
import { fmtNum, fmtTime, has, labelOf, t, tierLabel } from "../i18n.js";
import { badge, errorBanner, field, fieldLabel, h, jsonBlock, pageHeader, replace, setBusy } from "../ui.js";
import { parseLocalTime } from "./diagnostics.js";

const FAMILIES = ["config", "upstream", "user", "auth", "draft", "evaluation", "lexicon"];
const ACTIONS = ["config.create", "config.update", "config.activate", "config.deactivate", "config.delete",
  "upstream.drain", "upstream.undrain",
  "user.create", "user.update", "user.delete",
  "auth.login", "auth.login_failed", "auth.logout", "auth.password_change", "auth.password_change_failed",
  "draft.create", "draft.update", "draft.delete", "evaluation.start", "evaluation.cancel"];

function actionKind(action) {
  if (/failed$/.test(action)) return "error";
  if (/\.delete$/.test(action)) return "warn";
  if (/^auth\./.test(action)) return "neutral";
  return "info";
}

/** An action's name in the console's language ("config.update" -> "修改模型配置"); unknown ones as they are. */
export const actionLabel = (action) => labelOf("act_", String(action ?? "").replace(/\./g, "_"));
// The actor of a failed login whose name was no user's (the server records "(unknown)").
const actorLabel = (actor) => (actor === "(unknown)" ? t("actor_unknown") : actor);

// Details whose values are markers saying *that* a secret changed ("set", "reset", ...).
const MARKED = new Set(["api_key", "password", "extra_params"]);
const detailKey = (k) => (has(`detail_${k}`) ? t(`detail_${k}`) : fieldLabel(k));

function detailValue(k, v) {
  if (v === null || v === undefined || (Array.isArray(v) && !v.length)) return t("none");
  if (typeof v === "boolean") return t(v ? "yes" : "no");
  if (Array.isArray(v)) return v.map((x) => (k === "fields" ? detailKey(x) : detailValue(k, x))).join(t("list_sep"));
  if (typeof v === "object") return JSON.stringify(v);
  const s = String(v);
  if (k === "role") return labelOf("role_", s);
  if (k === "tier") return tierLabel(s);
  if (k === "reason") return labelOf("reason_", s);
  if (k === "status") return labelOf("draft_status_", s);
  if (k === "action") return labelOf("lex_action_", s);
  if (MARKED.has(k)) return labelOf("marker_", s);
  return s;
}

/** One line saying what changed, in the console's language: "角色：只读 → 操作员；结束的会话：1". */
export function summarize(detail) {
  if (!detail || typeof detail !== "object") return "";
  const parts = [];
  const part = (k, v) => parts.push(`${detailKey(k)}${t("colon")}${v}`);
  const changes = detail.changes && typeof detail.changes === "object" ? detail.changes : null;
  const flat = changes ? { ...changes } : { ...detail };
  if (changes) ["name", "tier"].forEach((k) => { if (detail[k] !== undefined) part(k, detailValue(k, detail[k])); });
  for (const [k, v] of Object.entries(flat)) {
    if (v && typeof v === "object" && !Array.isArray(v) && ("old" in v || "new" in v)) part(k, `${detailValue(k, v.old)} → ${detailValue(k, v.new)}`);
    else part(k, detailValue(k, v));
  }
  return parts.join(t("detail_sep"));
}

export function render(main, ctx) {
  const q = ctx.query;
  const fActor = field({ label: t("actor"), name: "actor", value: q.get("actor") || "", attrs: { autocomplete: "off", spellcheck: "false" } });
  const fAction = field({ label: t("action"), name: "action", value: q.get("action") || "", options: [
    { value: "", label: t("action_all") },
    ...FAMILIES.map((f) => ({ value: f, label: t("action_family_all", { family: t(`action_family_${f}`) }) })),
    ...ACTIONS.map((a) => ({ value: a, label: actionLabel(a) }))] });
  const fTarget = field({ label: t("target"), name: "target", value: q.get("target") || "", attrs: { autocomplete: "off", spellcheck: "false", placeholder: "config:7" } });
  // Text fields in one fixed format, as on the diagnostics page: a datetime-local input shows
  // the browser's own (often mm/dd/yyyy), whatever language the console speaks.
  const timeAttrs = { placeholder: "YYYY-MM-DD HH:mm", autocomplete: "off", spellcheck: "false", inputmode: "numeric" };
  const fSince = field({ label: t("since"), name: "since", value: q.get("since") || "", attrs: timeAttrs });
  const fUntil = field({ label: t("until"), name: "until", value: q.get("until") || "", attrs: timeAttrs });
  const fLimit = field({ label: t("limit"), name: "limit", value: q.get("limit") || "50", options: ["20", "50", "100", "200"].map((x) => ({ value: x, label: x })) });
  const filters = [fActor, fAction, fTarget, fSince, fUntil, fLimit];
  const applyBtn = h("button", { type: "submit", class: "btn btn-primary" }, t("apply"));
  const form = h("form", { class: "filters", "aria-label": t("filters"), role: "search" }, filters.map((x) => x.row),
    h("div", { class: "filter-actions" }, applyBtn,
      h("button", { type: "button", class: "btn", onclick: () => { filters.forEach((x) => { x.input.value = x === fLimit ? "50" : ""; }); form.requestSubmit(); } }, t("reset"))));
  const tbody = h("tbody", {});
  const table = h("table", { class: "table audit-table", "data-testid": "audit-table" },
    h("caption", { class: "sr-only" }, t("audit_title")),
    h("thead", {}, h("tr", {}, [t("time"), t("actor"), t("action"), t("target"), t("details"), t("ip")].map((x) => h("th", { scope: "col" }, x)))),
    tbody);
  const listStatus = h("div", { class: "list-status", role: "status", "aria-live": "polite" });
  const olderBtn = h("button", { type: "button", class: "btn", hidden: true, onclick: () => load(true) }, t("older_events"));
  main.append(pageHeader(t("audit_title"), t("audit_intro")), form,
    h("div", { class: "table-wrap" }, table), h("div", { class: "list-foot" }, listStatus, olderBtn));

  let alive = true;
  let nextBefore = null;

  const iso = (input) => parseLocalTime(input.value)?.toISOString() ?? "";
  function values() {
    return { actor: fActor.input.value.trim(), action: fAction.input.value, target: fTarget.input.value.trim(),
      since: iso(fSince.input), until: iso(fUntil.input), limit: fLimit.input.value };
  }
  function persist() {
    ctx.setQuery({ actor: fActor.input.value.trim(), action: fAction.input.value, target: fTarget.input.value.trim(),
      since: fSince.input.value, until: fUntil.input.value, limit: fLimit.input.value === "50" ? "" : fLimit.input.value });
  }

  async function load(more) {
    const btn = more ? olderBtn : applyBtn;
    setBusy(btn, true);
    try {
      const body = await get(`/api/admin/audit${qs({ ...values(), before_id: more ? nextBefore : "" })}`);
      if (!alive) return;
      if (!more) replace(tbody);
      (body?.items || []).forEach((e) => tbody.append(...eventRows(e)));
      nextBefore = body?.next_before_id ?? null;
      olderBtn.hidden = nextBefore === null;
      const n = tbody.querySelectorAll("tr.audit-row").length;
      listStatus.textContent = n ? `${t("n_records", { n: fmtNum(n) })}${olderBtn.hidden ? ` · ${t("end_of_events")}` : ""}` : t("no_events");
    } catch (e) {
      if (alive) replace(listStatus, errorBanner(e));
    } finally { setBusy(btn, false); }
  }

  function eventRows(e) {
    const detailRow = h("tr", { class: "detail-row", hidden: true },
      h("td", { colspan: 6 }, h("div", { class: "record-detail", "data-testid": "audit-detail" },
        h("h3", {}, t("event_detail", { id: e.id })),
        h("dl", { class: "kv-list inline" },
          h("div", { class: "kv" }, h("dt", {}, t("via")), h("dd", {}, t(`via_${e.via}`))),
          h("div", { class: "kv" }, h("dt", {}, t("ip")), h("dd", { class: "mono" }, e.ip ?? "—"))),
        jsonBlock(e.detail))));
    const toggle = h("button", { type: "button", class: "link-btn", "aria-expanded": "false", onclick: () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(open));
      detailRow.hidden = !open;
    } }, h("time", { datetime: e.at || "" }, fmtTime(e.at)));
    const summary = summarize(e.detail);
    return [h("tr", { class: "audit-row", "data-event-id": e.id, "data-action": e.action },
      h("td", { class: "nowrap" }, toggle),
      h("td", {}, h("div", { class: "cell-name" }, actorLabel(e.actor)), h("div", { class: "cell-sub" }, t(`via_${e.via}`))),
      h("td", {}, badge(actionLabel(e.action), actionKind(e.action), { title: e.action, "data-testid": "audit-action" })),
      h("td", { class: "mono" }, e.target ?? "—"),
      h("td", { class: "cell-message" }, h("div", { class: "truncate-2", title: summary }, summary || "—")),
      h("td", { class: "mono" }, e.ip ?? "—")), detailRow];
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const bad = [fSince, fUntil].filter((f) => f.input.value.trim() !== "" && parseLocalTime(f.input.value) === null);
    [fSince, fUntil].forEach((f) => f.setError(bad.includes(f) ? t("since_invalid") : ""));
    if (bad.length) { bad[0].input.focus(); return; }
    persist();
    load(false);
  });
  load(false);
  return () => { alive = false; };
}
