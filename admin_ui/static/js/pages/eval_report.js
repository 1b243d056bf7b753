// An evaluation's comparison: agreement, the two sides' latency and codes, a latency chart of
// both, the nodes, and the disagreements with the customers' utterances (keyset-paged).
import { get, qs } from "../api.js";
import { fmtNum, t } from "../i18n.js";
import { badge, codeBadge, errorBanner, h, replace, setBusy } from "../ui.js";

const PAGE = 50;

/** 0.9623 -> "96.2%", null -> "—". */
export function pct(x) {
  return x === null || x === undefined ? "—" : `${fmtNum(x * 100, 1)}%`;
}

const ms = (x) => (x === null || x === undefined ? "—" : `${fmtNum(x, 1)} ms`);

function agreementCard(label, value, sub, testid) {
  const kind = value === null || value === undefined ? "neutral" : value >= 0.95 ? "ok" : value >= 0.85 ? "warn" : "error";
  return h("article", { class: `summary-card eval-card eval-${kind}`, "data-testid": testid },
    h("header", {}, h("h3", {}, label)),
    h("p", { class: "eval-big" }, pct(value)), sub ? h("p", { class: "muted" }, sub) : null);
}

function codes(map) {
  const entries = Object.entries(map || {});
  return entries.length ? h("div", { class: "eval-codes" }, entries.map(([code, n]) => h("span", { class: "eval-code" }, codeBadge(code), ` ${fmtNum(n)}`))) : "—";
}

function sideBySide(s) {
  const rows = [
    [t("p50"), ms(s.recorded?.p50_ms), ms(s.candidate?.p50_ms)],
    [t("eval_p95"), ms(s.recorded?.p95_ms), ms(s.candidate?.p95_ms)],
    [t("eval_fallbacks"), fmtNum(s.recorded?.fallbacks), fmtNum(s.candidate?.fallbacks)],
    [t("code"), codes(s.recorded?.codes), codes(s.candidate?.codes)],
    [t("tokens"), "—", s.candidate?.tokens ? `${fmtNum(s.candidate.tokens.prompt_tokens)} / ${fmtNum(s.candidate.tokens.completion_tokens)}`
      + (s.candidate.tokens.reasoning_tokens ? ` / ${fmtNum(s.candidate.tokens.reasoning_tokens)}` : "") : "—"],
  ];
  return h("table", { class: "table table-compact", "data-testid": "eval-sides" },
    h("caption", { class: "sr-only" }, t("eval_sides")),
    h("thead", {}, h("tr", {}, ["", t("eval_recorded"), t("eval_candidate")].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map(([name, a, b]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, a), h("td", {}, b)))));
}

/** Grouped bars per latency bucket: recorded (grey) beside candidate (blue); values as text too. */
function latencyChart(hist) {
  const bounds = hist?.bounds_ms || [];
  const rec = hist?.recorded || [];
  const cand = hist?.candidate || [];
  const labels = [...bounds.map((b) => `≤${b}`), `>${bounds[bounds.length - 1] ?? 0}`];
  const width = 560;
  const height = 190;
  const top = 22;
  const base = 150;
  const slot = (width - 40) / labels.length;
  const max = Math.max(1, ...rec, ...cand);
  const title = t("eval_latency_chart");
  const summaryText = labels.map((l, i) => `${l} ms: ${t("eval_recorded")} ${rec[i] ?? 0}, ${t("eval_candidate")} ${cand[i] ?? 0}`).join("; ");
  const svg = h("svg:svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", class: "chart eval-chart", role: "img",
    "aria-label": `${title}: ${summaryText}`, preserveAspectRatio: "xMinYMin meet", "data-testid": "eval-latency-chart" },
  h("svg:title", {}, title),
  h("svg:rect", { x: 40, y: 4, width: 10, height: 10, class: "bar-recorded" }),
  h("svg:text", { x: 54, y: 13, class: "chart-label" }, t("eval_recorded")),
  h("svg:rect", { x: 160, y: 4, width: 10, height: 10, class: "bar-candidate" }),
  h("svg:text", { x: 174, y: 13, class: "chart-label" }, t("eval_candidate")),
  h("svg:line", { x1: 30, y1: base, x2: width - 6, y2: base, class: "chart-axis" }));
  labels.forEach((label, i) => {
    const x = 34 + i * slot;
    const bw = Math.max(4, slot / 2 - 4);
    [[rec[i] ?? 0, "bar-recorded", 0], [cand[i] ?? 0, "bar-candidate", bw + 2]].forEach(([n, cls, dx]) => {
      const hgt = n ? Math.max(2, Math.round((n / max) * (base - top - 12))) : 0;
      svg.append(h("svg:rect", { x: x + dx, y: base - hgt, width: bw, height: hgt, rx: 2, class: cls }));
      if (n) svg.append(h("svg:text", { x: x + dx + bw / 2, y: base - hgt - 3, "text-anchor": "middle", class: "chart-small" }, String(n)));
    });
    svg.append(h("svg:text", { x: x + slot / 2 - 2, y: base + 16, "text-anchor": "middle", class: "chart-small" }, label));
  });
  svg.append(h("svg:text", { x: width / 2, y: base + 34, "text-anchor": "middle", class: "chart-label" }, t("eval_latency_axis")));
  return svg;
}

function nodesTable(s) {
  const nodes = s.by_node || [];
  if (!nodes.length) return null;
  return h("table", { class: "table table-compact", "data-testid": "eval-nodes" },
    h("caption", { class: "sr-only" }, t("eval_by_node")),
    h("thead", {}, h("tr", {}, [t("node_id"), t("calls"), t("eval_intent_agreement"), t("eval_slot_agreement"),
      `${t("eval_recorded")} P50`, `${t("eval_candidate")} P50`, t("eval_fallbacks")].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, nodes.map((n) => h("tr", { "data-node": n.node_id ?? "" },
      h("th", { scope: "row", class: "mono" }, n.node_id ?? "—"),
      h("td", { class: "num" }, `${fmtNum(n.agreeing)} / ${fmtNum(n.calls)}`),
      h("td", { class: "num" }, pct(n.intent_agreement)), h("td", { class: "num" }, pct(n.slot_agreement)),
      h("td", { class: "num" }, ms(n.recorded?.p50_ms)), h("td", { class: "num" }, ms(n.candidate?.p50_ms)),
      h("td", { class: "num" }, `${fmtNum(n.recorded?.fallbacks)} → ${fmtNum(n.candidate?.fallbacks)}`)))));
}

function decision(side, withCode) {
  const slots = side?.slots && typeof side.slots === "object" ? Object.entries(side.slots) : [];
  const failed = withCode && side?.code && side.code !== "ok";
  const intent = side?.intent ?? JSON.stringify(null);  // shown as the JSON the model gave
  return h("div", { class: "eval-decision" },
    h("span", { class: "mono eval-intent" }, intent),
    side?.global_intent ? badge(`${t("eval_global_intent")}${t("colon")}${side.global_intent}`, "info") : null,
    side?.fallback ? badge(t("eval_fallback"), "warn") : null,
    failed ? codeBadge(side.code) : null,
    slots.length ? h("div", { class: "cell-sub mono" }, slots.map(([k, v]) => `${k}=${v === null ? "null" : JSON.stringify(v)}`).join(" · ")) : null);
}

function disagreementRow(d) {
  return h("tr", { "data-call-id": d.call_id ?? "" },
    h("td", { class: "mono" }, d.call_id ?? "—", h("div", { class: "cell-sub" }, d.node_id ?? "")),
    h("td", { class: "eval-utterance" }, d.utterance ?? ""),
    h("td", { class: d.intent_agrees === false ? "eval-diff" : "" }, decision(d.recorded, true)),
    h("td", { class: d.intent_agrees === false || d.slots_agree === false ? "eval-diff" : "" }, decision(d.candidate, true)));
}

function disagreements(e) {
  // Viewers get no disagreements: they quote customers' words (operators and admins).
  if (e.disagreements == null && e.status !== "running") {
    return h("section", { class: "eval-block" }, h("h3", {}, t("eval_disagreements")),
      h("p", { class: "muted", "data-testid": "eval-dis-hidden" }, t("eval_dis_operators_only")));
  }
  const nodes = (e.summary?.by_node || []).map((n) => n.node_id).filter((n) => n !== null);
  const tbody = h("tbody", {}, (e.disagreements || []).map(disagreementRow));
  let next = e.disagreements_next ?? null;
  let node = "";
  const status = h("span", { class: "list-status", role: "status" });
  const more = h("button", { type: "button", class: "btn", hidden: next === null, onclick: () => load(true) }, t("eval_more"));
  const count = () => { status.textContent = tbody.children.length ? t("eval_dis_count", { n: fmtNum(tbody.children.length) }) : t("eval_no_disagreements"); };
  async function load(append) {
    setBusy(more, true);
    try {
      const page = await get(`/api/admin/evaluations/${encodeURIComponent(e.id)}/disagreements${qs({ node_id: node, limit: PAGE, after: append ? next : "" })}`);
      if (!append) replace(tbody);
      (page.items || []).forEach((d) => tbody.append(disagreementRow(d)));
      next = page.next_after ?? null;
      more.hidden = next === null;
      count();
    } catch (err) { replace(status, errorBanner(err)); } finally { setBusy(more, false); }
  }
  const filter = nodes.length > 1 ? h("label", { class: "eval-node-filter" }, `${t("node_id")} `,
    h("select", { onchange: (ev) => { node = ev.target.value; load(false); } },
      h("option", { value: "" }, t("all")), nodes.map((n) => h("option", { value: n }, n)))) : null;
  count();
  return h("section", { class: "eval-block", "aria-labelledby": `dis-${e.id}` },
    h("div", { class: "section-head" }, h("h3", { id: `dis-${e.id}` }, t("eval_disagreements")), filter),
    h("div", { class: "table-wrap" }, h("table", { class: "table", "data-testid": "eval-disagreements" },
      h("caption", { class: "sr-only" }, t("eval_disagreements")),
      h("thead", {}, h("tr", {}, [t("call_id"), t("utterance"), t("eval_recorded"), t("eval_candidate")].map((x) => h("th", { scope: "col" }, x)))),
      tbody)),
    h("div", { class: "list-foot" }, status, more));
}

export function renderReport(e) {
  const s = e.summary || {};
  return h("div", { class: "eval-report", "data-testid": "eval-report" },
    h("div", { class: "summary-grid eval-cards" },
      agreementCard(t("eval_intent_agreement"), s.intent_agreement, t("eval_agreeing", { n: fmtNum(s.agreeing), calls: fmtNum(s.calls) }), "eval-intent-agreement"),
      agreementCard(t("eval_slot_agreement"), s.slot_agreement, s.skipped ? t("eval_skipped", { n: fmtNum(s.skipped) }) : null, "eval-slot-agreement"),
      h("article", { class: "summary-card" }, h("header", {}, h("h3", {}, t("eval_sides"))), sideBySide(s))),
    h("section", { class: "eval-block" }, h("h3", {}, t("eval_latency_chart")), latencyChart(s.latency_histogram)),
    h("section", { class: "eval-block" }, h("h3", {}, t("eval_by_node")), nodesTable(s) || h("p", { class: "muted" }, t("no_data"))),
    disagreements(e));
}
