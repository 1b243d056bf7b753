// #/ai/diagnostics: summary per tier and code (with a small SVG chart) and the keyset-paged record list.
import { del, get, qs } from "../api.js";
import { fmtNum, fmtTime, getLang, labelOf, t, tierLabel } from "../i18n.js";
import { can } from "../roles.js";
import { TRUNCATION_CODES, badge, codeBadge, codeKind, codeLabel, confirmDialog, errorBanner, field, fieldLabel, h, msText, pageHeader, replace, setBusy, toast, valueText } from "../ui.js";

const TIERS = ["nlu", "chat", "script"];
export const CODES = ["ok", "truncated_by_reasoning", "truncated", "empty_output", "invalid_json", "schema_mismatch",
  "timeout", "deadline_exceeded", "upstream_error", "connect_error", "response_too_large", "cancelled"];
const DETAIL_FIELDS = ["at", "tier", "code", "model", "vendor", "config_id", "endpoint", "attempts", "call_id", "node_id",
  "source", "finish_reason", "max_tokens", "completion_tokens", "reasoning_tokens", "prompt_tokens", "latency_ms", "ttft_ms", "status"];

export function render(main, ctx) {
  const q = ctx.query;
  let windowSel = q.get("window") === "24h" ? "24h" : "1h";
  const summaryBox = h("div", { class: "summary-grid", "aria-live": "polite", "data-testid": "diag-summary" });
  const winBtns = ["1h", "24h"].map((w) => h("button", { type: "button", class: "seg-btn", "aria-pressed": String(w === windowSel),
    onclick: () => { windowSel = w; winBtns.forEach((b, i) => b.setAttribute("aria-pressed", String(["1h", "24h"][i] === w))); persist(); loadSummary(); } },
  t(`window_${w}`)));

  // Filters
  const fTier = field({ label: t("tier"), name: "tier", value: q.get("tier") || "",
    options: [{ value: "", label: t("all") }, ...TIERS.map((x) => ({ value: x, label: tierLabel(x) }))] });
  const fCode = field({ label: t("code"), name: "code", value: q.get("code") || "",
    options: [{ value: "", label: t("all") }, ...CODES.map((x) => ({ value: x, label: codeLabel(x) }))] });
  const fModel = field({ label: t("model"), name: "model", value: q.get("model") || "", attrs: { autocomplete: "off", spellcheck: "false" } });
  const fCall = field({ label: t("call_id"), name: "call_id", value: q.get("call_id") || "", attrs: { autocomplete: "off", spellcheck: "false" } });
  // A text field in one fixed format: a datetime-local input shows the browser's own
  // (often mm/dd/yyyy), whatever language the console speaks.
  const fSince = field({ label: t("since"), name: "since", value: q.get("since") || "",
    attrs: { placeholder: "YYYY-MM-DD HH:mm", autocomplete: "off", spellcheck: "false", inputmode: "numeric" } });
  const fLimit = field({ label: t("limit"), name: "limit", value: q.get("limit") || "50",
    options: ["20", "50", "100", "200"].map((x) => ({ value: x, label: x })) });
  const filters = [fTier, fCode, fModel, fCall, fSince, fLimit];
  const applyBtn = h("button", { type: "submit", class: "btn btn-primary" }, t("apply"));
  const form = h("form", { class: "filters", "aria-label": t("filters"), role: "search" },
    filters.map((x) => x.row),
    h("div", { class: "filter-actions" }, applyBtn,
      h("button", { type: "button", class: "btn", onclick: () => { filters.forEach((x) => { x.input.value = x === fLimit ? "50" : ""; }); form.requestSubmit(); } }, t("reset")),
      // A download of the current filter (the page size aside), in the console's language.
      h("a", { class: "btn", href: "/api/admin/diagnostics/export", download: "", "data-testid": "diag-export", title: t("export_csv_hint"),
        onclick: (ev) => { ev.currentTarget.href = `/api/admin/diagnostics/export${qs({ ...filterValues(), limit: "", lang: getLang() })}`; } }, t("export_csv"))));

  const listStatus = h("div", { class: "list-status", role: "status", "aria-live": "polite" });
  const tbody = h("tbody", {});
  const table = h("table", { class: "table diag-table", "data-testid": "diag-table" },
    h("caption", { class: "sr-only" }, t("records")),
    h("thead", {}, h("tr", {}, [t("time"), t("tier"), t("code"), t("model"), t("call_id"), t("latency"), t("tokens"), t("message")]
      .map((x, i) => h("th", { scope: "col", class: i === 3 ? "col-model" : null }, x)))),
    tbody);
  const olderBtn = h("button", { type: "button", class: "btn", hidden: true, onclick: () => loadRecords(true) }, t("older"));

  main.append(pageHeader(t("diag_title"), t("diag_intro")),
    h("section", { class: "section", "aria-labelledby": "sum-h" },
      h("div", { class: "section-head" }, h("h2", { id: "sum-h" }, t("summary")),
        h("div", { class: "segmented", role: "group", "aria-label": t("summary") }, winBtns)),
      summaryBox),
    h("section", { class: "section", "aria-labelledby": "rec-h" },
      h("h2", { id: "rec-h" }, t("records")), form,
      h("div", { class: "table-wrap" }, table), h("div", { class: "list-foot" }, listStatus, olderBtn)));

  let alive = true;
  let nextBefore = null;
  let selected = null;

  function filterValues() {
    const since = parseLocalTime(fSince.input.value);
    return { tier: fTier.input.value, code: fCode.input.value, model: fModel.input.value.trim(), call_id: fCall.input.value.trim(),
      since: since ? since.toISOString() : "", limit: fLimit.input.value };
  }
  function persist() {
    ctx.setQuery({ window: windowSel === "1h" ? "" : windowSel, tier: fTier.input.value, code: fCode.input.value,
      model: fModel.input.value.trim(), call_id: fCall.input.value.trim(), since: fSince.input.value,
      limit: fLimit.input.value === "50" ? "" : fLimit.input.value });
  }

  async function loadSummary() {
    summaryBox.setAttribute("aria-busy", "true");
    try {
      const body = await get(`/api/admin/diagnostics/summary${qs({ window: windowSel })}`);
      if (alive) renderSummary(summaryBox, body);
    } catch (e) { if (alive) replace(summaryBox, errorBanner(e)); }
    summaryBox.removeAttribute("aria-busy");
  }

  async function loadRecords(more = false) {
    setBusy(more ? olderBtn : applyBtn, true);
    try {
      const body = await get(`/api/admin/diagnostics${qs({ ...filterValues(), before_id: more ? nextBefore : "" })}`);
      if (!alive) return;
      const rows = Array.isArray(body?.items) ? body.items : Array.isArray(body) ? body : [];
      if (!more) { replace(tbody); selected = null; }
      rows.forEach((r) => tbody.append(recordRow(r)));
      nextBefore = body?.next_before_id ?? null;
      olderBtn.hidden = nextBefore === null || nextBefore === undefined;
      const n = tbody.children.length;
      listStatus.textContent = n ? `${t("n_records", { n: fmtNum(n) })}${olderBtn.hidden ? ` · ${t("end_of_records")}` : ""}` : t("no_records");
    } catch (e) {
      if (alive) replace(listStatus, errorBanner(e));
    } finally { setBusy(more ? olderBtn : applyBtn, false); }
  }

  function recordRow(r) {
    const trunc = TRUNCATION_CODES.has(r.code);
    const open = h("button", { type: "button", class: "link-btn", "aria-expanded": "false", title: t("details"),
      onclick: (ev) => showDetail(r, ev.currentTarget) }, h("span", { class: "sr-only" }, `${t("details")} #${r.id} `),
    h("time", { datetime: r.at || "" }, fmtTime(r.at)));
    const tokens = [r.completion_tokens, r.reasoning_tokens, r.max_tokens].some((x) => x != null)
      ? [`${r.completion_tokens ?? "—"} / ${r.max_tokens ?? "—"}`,
        r.reasoning_tokens ? h("div", { class: "cell-sub", title: "reasoning_tokens" }, t("reasoning_short", { n: r.reasoning_tokens })) : null] : "—";
    return h("tr", { class: `diag-row code-${codeKind(r.code)}${trunc ? " row-truncated" : ""}`, "data-record-id": r.id, "data-code": r.code || "" },
      h("td", { class: "cell-time" }, open),
      h("td", { class: "nowrap" }, labelOf("tier_short_", r.tier)),
      h("td", {}, trunc ? badge(`⚠ ${codeLabel(r.code)}`, "warn", { class: "badge badge-strong", title: `${t("truncation_badge")} · ${r.code}`, "data-code": r.code }) : codeBadge(r.code),
        h("div", { class: "cell-sub mono narrow-only" }, r.model ?? "")),
      h("td", { class: "mono col-model" }, r.model ?? "—"),
      h("td", { class: "mono" }, r.call_id ? h("a", { href: `#/ai/call?id=${encodeURIComponent(r.call_id)}`, "data-testid": "call-link" }, r.call_id) : "—",
        r.node_id ? h("div", { class: "cell-sub" }, r.node_id) : null),
      h("td", { class: "num" }, msText(r.latency_ms)),
      h("td", { class: "num" }, tokens),
      h("td", { class: "cell-message" }, h("div", { class: "truncate-2" }, r.message ?? ""),
        trunc && r.advice ? h("div", { class: "cell-advice" }, `${t("advice")}${t("colon")}${r.advice}`) : null));
  }

  // Admins may erase every stored row of a call (DELETE /api/admin/calls/{call_id}).
  const canErase = can(ctx?.session?.me, "admin");
  function eraseButton(callId) {
    const btn = h("button", { type: "button", class: "btn btn-danger", "data-testid": "diag-erase",
      onclick: async () => {
        if (!(await confirmDialog(t("erase_call_confirm", { call_id: callId }), { confirmLabel: t("erase_call"), danger: true }))) return;
        setBusy(btn, true);
        try {
          await del(`/api/admin/calls/${encodeURIComponent(callId)}`);
          toast(t("erase_call_done", { call_id: callId }), "ok");
          loadRecords(false);
        } catch (err) { toast(err.message, "error"); } finally { setBusy(btn, false); }
      } }, t("erase_call"));
    return h("div", { class: "panel-actions" }, btn);
  }

  function closeDetail() {
    tbody.querySelectorAll("tr.detail-row").forEach((x) => x.remove());
    tbody.querySelectorAll("tr.selected").forEach((x) => x.classList.remove("selected"));
    if (selected) selected.setAttribute("aria-expanded", "false");
  }

  function showDetail(r, btn) {
    const wasOpen = btn.getAttribute("aria-expanded") === "true";
    closeDetail();
    if (wasOpen) { selected = null; return; }
    selected = btn;
    btn.setAttribute("aria-expanded", "true");
    const tr = btn.closest("tr");
    tr.classList.add("selected");
    const trunc = TRUNCATION_CODES.has(r.code);
    const heading = h("h3", { tabindex: "-1" }, t("record_detail", { id: r.id ?? "?" }));
    const extra = Object.keys(r).filter((k) => !DETAIL_FIELDS.includes(k) && !["id", "message", "advice"].includes(k));
    const close = () => { closeDetail(); btn.focus(); };
    const panel = h("div", { class: "record-detail", id: `rec-${r.id}-detail`, "data-testid": "diag-detail",
      onkeydown: (ev) => { if (ev.key === "Escape") close(); } },
    h("div", { class: "panel-head" }, heading,
      h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: close }, "×")),
    h("div", { class: "record-detail-grid" },
      h("div", { class: `diag-box diag-${codeKind(r.code)}` },
        h("div", { class: "diag-head" }, codeBadge(r.code), trunc ? badge(t("truncation_badge"), "warn") : null),
        r.message ? h("p", { class: "diag-message" }, r.message) : null,
        r.advice ? h("p", { class: "diag-advice", "data-testid": "diag-advice" }, h("strong", {}, `${t("advice")}${t("colon")}`), r.advice) : null,
        trunc ? h("p", { class: "diag-numbers" }, t("truncation_explain", { completion: r.completion_tokens ?? "—", max: r.max_tokens ?? "—", reasoning: r.reasoning_tokens ?? "—" })) : null),
      h("dl", { class: "kv-list kv-cols" }, [...DETAIL_FIELDS, ...extra].filter((k) => r[k] !== undefined).map((k) => h("div", { class: `kv${["max_tokens", "completion_tokens", "reasoning_tokens", "finish_reason"].includes(k) && trunc ? " kv-strong" : ""}` },
        h("dt", { title: k }, fieldLabel(k)), h("dd", { class: "mono" }, detailValue(k, r[k])))))),
    canErase && r.call_id ? eraseButton(r.call_id) : null);
    btn.setAttribute("aria-controls", panel.id);
    tr.after(h("tr", { class: `detail-row${trunc ? " row-truncated" : ""}` }, h("td", { colspan: 8 }, panel)));
    heading.focus();
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const bad = fSince.input.value.trim() !== "" && parseLocalTime(fSince.input.value) === null;
    fSince.setError(bad ? t("since_invalid") : "");
    if (bad) { fSince.input.focus(); return; }
    persist();
    loadSummary();  // the cards are read again with the list: 查询 means "now"
    loadRecords(false);
  });
  loadSummary();
  loadRecords(false);
  return () => { alive = false; };
}

/**
 * "YYYY-MM-DD", "YYYY-MM-DD HH:mm[:ss]" (also with "T" or "/"), in the browser's time zone,
 * as a Date; null when it is not such a time.
 */
export function parseLocalTime(text) {
  const m = String(text || "").trim().match(/^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/);
  if (!m) return null;
  const [y, mo, d, hh = "0", mi = "0", ss = "0"] = m.slice(1);
  const at = new Date(Number(y), Number(mo) - 1, Number(d), Number(hh), Number(mi), Number(ss));
  // new Date() rolls 2026-02-31 over into March: such a date was not a date.
  if (at.getFullYear() !== Number(y) || at.getMonth() !== Number(mo) - 1 || at.getDate() !== Number(d)
    || at.getHours() !== Number(hh) || at.getMinutes() !== Number(mi)) return null;
  return at;
}

/** A record field's value as the detail panel shows it: times and codes in the console's language. */
function detailValue(k, v) {
  if (v === null || v === undefined) return valueText(v);
  if (k === "at") return fmtTime(v);
  if (k === "code") return `${codeLabel(v)} (${v})`;
  if (k === "tier") return tierLabel(v);
  if (k === "source") return labelOf("record_source_", v);
  if (k === "latency_ms" || k === "ttft_ms") return msText(v, 1);
  if (k === "speech" && typeof v === "object") return speechText(v);
  return valueText(v);
}

/** What a chat turn's speech guard and filler did: counts only, never the term. */
export function speechText(v) {
  const counts = (o, label) => Object.entries(o || {}).map(([name, n]) => `${label(name)} ×${n}`).join(t("list_sep"));
  const parts = [counts(v.guard, (a) => labelOf("lex_action_", a))];
  const lexicons = counts(v.lexicons, (name) => name);
  if (lexicons) parts.push(t("speech_lexicons", { list: lexicons }));
  if (v.filler) parts.push(t("speech_filler"));
  return parts.filter(Boolean).join(t("detail_sep")) || t("none");
}

/** Tolerant summary shape: tiers as {tier: {...}} or [{tier, ...}]; codes as {code: n} or [{code, count}]. */
export function normalizeSummary(body) {
  const out = [];
  let tiers = body?.tiers ?? body?.per_tier ?? body;
  if (Array.isArray(tiers)) tiers = Object.fromEntries(tiers.filter(Boolean).map((x) => [x.tier ?? x.name, x]));
  if (!tiers || typeof tiers !== "object") return out;
  for (const name of [...TIERS, ...Object.keys(tiers).filter((k) => !TIERS.includes(k))]) {
    const s = tiers[name];
    if (!s || typeof s !== "object") { if (TIERS.includes(name)) out.push({ tier: name, count: 0, codes: [], lat: {} }); continue; }
    let codes = s.codes ?? s.by_code ?? {};
    codes = Array.isArray(codes) ? codes.map((c) => [c.code, Number(c.count ?? c.n ?? 0)]) : Object.entries(codes).map(([k, v]) => [k, Number(typeof v === "object" ? v?.count ?? 0 : v)]);
    codes.sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
    // Completed calls' latency where the server says it: a barge-in is no slow model.
    const lat = s.completed_latency_ms ?? s.latency_ms ?? s.latency ?? {};
    const count = Number(s.count ?? s.total ?? codes.reduce((a, [, n]) => a + n, 0));
    const cancelled = Number(s.cancelled ?? (codes.find(([c]) => c === "cancelled")?.[1] ?? 0));
    out.push({ tier: name, count, codes, lat, ttft: s.ttft_ms ?? {}, cancelled, completedOnly: !!s.completed_latency_ms });
  }
  return out;
}

function pctRow(label, values, testid) {
  return h("div", { class: "pct-block", "data-testid": testid },
    h("p", { class: "pct-label" }, label),
    h("dl", { class: "pct-row" }, ["p50", "p90", "p99"].map((p) => h("div", {}, h("dt", {}, t(p)), h("dd", {}, msText(values?.[p]))))));
}

function renderSummary(box, body) {
  const tiers = normalizeSummary(body);
  if (!tiers.length) { replace(box, h("p", { class: "empty" }, t("no_data"))); return; }
  replace(box, tiers.map((s) => h("article", { class: "summary-card", "data-tier": s.tier },
    h("header", {}, h("h3", {}, tierLabel(s.tier)), h("span", { class: "summary-count" }, h("strong", { "data-testid": "summary-count" }, fmtNum(s.count)), ` ${t("calls")}`)),
    s.cancelled ? h("p", { class: "summary-sub", "data-testid": "summary-cancelled" }, t("calls_cancelled", { n: fmtNum(s.cancelled) })) : null,
    pctRow(s.completedOnly && s.cancelled ? t("latency_completed") : t("latency_all"), s.lat, "summary-latency"),
    s.ttft && s.ttft.p50 != null ? pctRow(t("ttft_ms"), s.ttft, "summary-ttft") : null,
    s.codes.length ? codeChart(s) : h("p", { class: "muted" }, t("no_data")))));
}

/** Horizontal bar chart of counts per code: inline SVG, colours by severity, text labels for values. */
function codeChart(s) {
  const rowH = 22;
  const labelW = 150;
  const width = 330;
  const barMax = width - labelW - 50;
  const max = Math.max(1, ...s.codes.map(([, n]) => n));
  const height = s.codes.length * rowH + 4;
  const title = t("codes_chart", { tier: tierLabel(s.tier) });
  const svg = h("svg:svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", class: "chart", role: "img",
    "aria-label": `${title}${t("colon")}${s.codes.map(([c, n]) => `${codeLabel(c)} ${n}`).join(", ")}`, preserveAspectRatio: "xMinYMin meet" },
  h("svg:title", {}, title));
  s.codes.forEach(([code, n], i) => {
    const y = i * rowH + 2;
    const w = Math.max(2, Math.round((n / max) * barMax));
    svg.append(
      h("svg:text", { x: labelW - 8, y: y + 14, "text-anchor": "end", class: "chart-label", "data-code": code }, h("svg:title", {}, code), codeLabel(code)),
      h("svg:rect", { x: labelW, y: y + 3, width: w, height: rowH - 8, rx: 3, class: `bar bar-${codeKind(code)}` }),
      h("svg:text", { x: labelW + w + 6, y: y + 14, class: "chart-value" }, fmtNum(n)));
  });
  return svg;
}
