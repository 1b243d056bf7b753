// #/ai/usage (viewers): calls, tokens and cost from the daily summary. A chart of calls and
// cost per day over the period, and a table per group (day, key, campaign, configuration,
// tier). A group's cost is in its currency; several currencies are listed apart.
import { get, qs } from "../api.js";
import { fmtNum, t, tierLabel } from "../i18n.js";
import { errorBanner, field, h, pageHeader, replace } from "../ui.js";

const GROUPS = ["day", "key", "campaign", "config", "tier"];
const SVG = "http://www.w3.org/2000/svg";

export function render(main, ctx) {
  const q = ctx.query;
  const today = new Date();
  const ago = new Date(today.getTime() - 29 * 86400_000);
  const iso = (d) => d.toISOString().slice(0, 10);
  const fGroup = field({ label: t("usage_group_by"), name: "group_by", value: q.get("group_by") || "campaign",
    options: GROUPS.map((g) => ({ value: g, label: t(`usage_by_${g}`) })) });
  const fSince = field({ label: t("usage_since"), name: "since", type: "date", value: q.get("since") || iso(ago) });
  const fUntil = field({ label: t("usage_until"), name: "until", type: "date", value: q.get("until") || iso(today) });
  const chartBox = h("figure", { class: "section usage-chart", "data-testid": "usage-chart" });
  const tableBox = h("div", { class: "table-wrap", "aria-busy": "true" });
  const form = h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); load(); } },
    fGroup.row, fSince.row, fUntil.row, h("button", { type: "submit", class: "btn" }, t("apply")));
  fGroup.input.addEventListener("change", () => load());
  main.append(pageHeader(t("usage_title"), t("usage_intro")), form, chartBox, h("section", { class: "section" }, tableBox));
  let alive = true;

  async function load() {
    const range = { since: fSince.input.value, until: nextDay(fUntil.input.value) };
    ctx.setQuery({ group_by: fGroup.input.value, since: fSince.input.value, until: fUntil.input.value });
    tableBox.setAttribute("aria-busy", "true");
    try {
      const [days, groups] = await Promise.all([
        get(`/api/admin/usage${qs({ group_by: "day", ...range })}`),
        get(`/api/admin/usage${qs({ group_by: fGroup.input.value, ...range })}`)]);
      if (!alive) return;
      chart(everyDay(fSince.input.value, fUntil.input.value, days.items || []));
      table(fGroup.input.value, groups.items || []);
    } catch (e) { if (alive) replace(tableBox, errorBanner(e)); }
    tableBox.removeAttribute("aria-busy");
  }

  function chart(items) {
    if (!items.some((i) => i.calls)) { replace(chartBox, h("p", { class: "muted" }, t("usage_none"))); return; }
    const max = Math.max(...items.map((i) => i.calls), 1);
    const w = 640, hgt = 160, bw = Math.min(40, Math.max(2, Math.floor(w / items.length) - 2));
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", `0 0 ${w} ${hgt + 20}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", t("usage_chart_label"));
    items.forEach((it, i) => {
      const bar = document.createElementNS(SVG, "rect");
      const bh = Math.max(1, Math.round((it.calls / max) * hgt));
      bar.setAttribute("x", String(i * (bw + 2)));
      bar.setAttribute("y", String(hgt - bh));
      bar.setAttribute("width", String(bw));
      bar.setAttribute("height", String(bh));
      bar.setAttribute("class", "usage-bar");
      const tip = document.createElementNS(SVG, "title");
      tip.textContent = `${it.group}: ${t("usage_calls_n", { n: fmtNum(it.calls) })}${it.cost != null ? ` · ${fmtNum(it.cost, 4)} ${it.currency}` : ""}`;
      bar.append(tip);
      svg.append(bar);
    });
    replace(chartBox, svg, h("figcaption", { class: "muted" }, t("usage_chart_caption", { first: items[0].group, last: items[items.length - 1].group, max: fmtNum(max) })));
  }

  function table(groupBy, items) {
    if (!items.length) { replace(tableBox, h("p", { class: "muted", "data-testid": "usage-empty" }, t("usage_none"))); return; }
    const name = (it) => (it.group === null ? h("span", { class: "muted" }, t(`usage_no_${groupBy}`))
      : groupBy === "tier" ? tierLabel(it.group) : it.label ? `${it.label}` : it.group);
    const cost = (it) => (it.cost != null ? `${fmtNum(it.cost, 4)} ${it.currency}`
      : Object.keys(it.costs || {}).length ? Object.entries(it.costs).map(([c, v]) => `${fmtNum(v, 4)} ${c}`).join(" + ") : "—");
    replace(tableBox, h("table", { class: "table", "data-testid": "usage-table" },
      h("caption", { class: "sr-only" }, t("usage_title")),
      h("thead", {}, h("tr", {}, [t(`usage_by_${groupBy}`), t("usage_calls"), t("usage_errors"), t("usage_prompt_tokens"),
        t("usage_completion_tokens"), t("usage_reasoning_tokens"), t("usage_cost"), t("p50"), t("p95")].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, items.map((it) => h("tr", { "data-group": it.group ?? "" },
        h("th", { scope: "row" }, name(it)), h("td", {}, fmtNum(it.calls)), h("td", {}, fmtNum(it.errors)),
        h("td", {}, fmtNum(it.prompt_tokens)), h("td", {}, fmtNum(it.completion_tokens)), h("td", {}, fmtNum(it.reasoning_tokens)),
        h("td", { "data-testid": "usage-cost" }, cost(it)),
        h("td", {}, it.p50_ms != null ? `${fmtNum(it.p50_ms, 1)} ms` : "—"), h("td", {}, it.p95_ms != null ? `${fmtNum(it.p95_ms, 1)} ms` : "—"))))));
  }

  load();
  return () => { alive = false; };
}

/** One item per day of the period, days without calls at 0 (the chart is over time). */
function everyDay(since, until, items) {
  const byDay = new Map(items.map((i) => [i.group, i]));
  const out = [];
  for (let d = new Date(`${since}T00:00:00Z`); d <= new Date(`${until}T00:00:00Z`) && out.length < 400; d = new Date(d.getTime() + 86400_000)) {
    const day = d.toISOString().slice(0, 10);
    out.push(byDay.get(day) || { group: day, calls: 0, cost: null });
  }
  return out.length ? out : items;
}

function nextDay(day) {
  if (!day) return undefined;
  const d = new Date(`${day}T00:00:00Z`);
  return new Date(d.getTime() + 86400_000).toISOString().slice(0, 10);
}
