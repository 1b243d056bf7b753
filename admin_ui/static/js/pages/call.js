// #/ai/call?id=<call_id> (viewers): every model call of one phone call, in the order they were
// made (NLU nodes, chat turns, screening), with tokens, cost, latency and codes, and totals.
import { get } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, codeKind, errorBanner, field, h, pageHeader, replace } from "../ui.js";

export function render(main, ctx) {
  const id = ctx.query.get("id") || "";
  const fId = field({ label: t("call_id"), name: "id", value: id, attrs: { autocomplete: "off", spellcheck: "false" } });
  const form = h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); ctx.navigate(`/ai/call?id=${encodeURIComponent(fId.input.value.trim())}`); } },
    fId.row, h("button", { type: "submit", class: "btn" }, t("apply")));
  const box = h("div", { class: "section", "aria-busy": "true" });
  main.append(pageHeader(t("call_title"), t("call_intro")), form, box);
  let alive = true;

  async function load() {
    if (!id) { replace(box, h("p", { class: "muted" }, t("call_enter_id"))); return; }
    try {
      const view = await get(`/api/admin/calls/${encodeURIComponent(id)}`);
      if (alive) show(view);
    } catch (e) { if (alive) replace(box, errorBanner(e)); }
    box.removeAttribute("aria-busy");
  }

  function show(v) {
    const tot = v.totals;
    const cost = (c, cur) => (c != null ? `${fmtNum(c, 6)} ${cur ?? ""}` : "—");
    replace(box,
      h("dl", { class: "kv-list", "data-testid": "call-totals" },
        kv(t("call_id"), h("span", { class: "mono" }, v.call_id)), kv(t("key_campaign"), v.campaign ?? "—"),
        kv(t("call_model_calls"), fmtNum(tot.model_calls)), kv(t("tokens"), fmtNum(tot.tokens)),
        kv(t("usage_cost"), cost(tot.cost, tot.currency)), kv(t("latency"), `${fmtNum(tot.latency_ms, 1)} ms`)),
      h("div", { class: "table-wrap" }, h("table", { class: "table", "data-testid": "call-records" },
        h("caption", { class: "sr-only" }, t("call_title")),
        h("thead", {}, h("tr", {}, [t("time"), t("tier"), t("call_node"), t("code"), t("model"), t("latency"), t("tokens"), t("usage_cost")]
          .map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, v.records.map((r) => h("tr", { "data-record-id": String(r.id) },
          h("td", {}, fmtTime(r.at)), h("td", {}, tierLabel(r.tier)), h("td", { class: "mono" }, r.node_id ?? "—"),
          h("td", {}, badge(r.code, codeKind(r.code))), h("td", {}, r.model ?? "—"),
          h("td", {}, r.latency_ms != null ? `${fmtNum(r.latency_ms, 1)} ms` : "—"),
          h("td", {}, `${fmtNum(r.prompt_tokens)} / ${fmtNum(r.completion_tokens)}${r.reasoning_tokens ? ` (${fmtNum(r.reasoning_tokens)})` : ""}`),
          h("td", {}, cost(r.cost, r.currency))))))));
  }

  load();
  return () => { alive = false; };
}

function kv(label, value) { return h("div", { class: "kv" }, h("dt", {}, label), h("dd", {}, value)); }
