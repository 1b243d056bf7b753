// Upstream health on the models page: this worker's view of every endpoint of the active
// configurations and their fallbacks (GET /api/admin/upstreams), refreshed every few
// seconds while the page is open. Each worker keeps its own view (passive health is per
// worker): behind a load balancer, successive refreshes may come from different workers.
// A drain (operators) is cluster-wide: every worker stops sending the endpoint new requests.
import { get, post } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, confirmDialog, diagnosticBox, errorBanner, h, msText, replace, setBusy, toast } from "../ui.js";

const STATE_KIND = { healthy: "ok", cooling_down: "error", probing: "warn" };
const REFRESH_MS = 5000;

export function upstreamSection({ canEdit = false } = {}) {
  const box = h("div", { class: "table-wrap", "data-testid": "upstreams", "aria-busy": "true" });
  const section = h("section", { class: "section", "aria-labelledby": "upstreams-h" },
    h("div", { class: "section-head" }, h("h2", { id: "upstreams-h" }, t("upstreams_title")),
      h("button", { type: "button", class: "btn btn-sm", onclick: () => refresh() }, t("reload"))),
    h("p", { class: "page-intro" }, t("upstreams_intro")), box);
  let timer = null;
  let busy = false;

  async function refresh() {
    if (busy) return;  // a drain's confirm dialog is open, or a refresh is on its way
    busy = true;
    try {
      const body = await get("/api/admin/upstreams");
      render(Array.isArray(body?.items) ? body.items : []);
    } catch (e) { replace(box, errorBanner(e)); } finally { busy = false; }
    box.removeAttribute("aria-busy");
  }

  function render(items) {
    if (!items.length) { replace(box, h("p", { class: "empty" }, t("upstreams_none"))); return; }
    replace(box, h("table", { class: "table upstreams-table", "data-testid": "upstreams-table" },
      h("caption", { class: "sr-only" }, t("upstreams_title")),
      h("thead", {}, h("tr", {}, [t("configuration"), t("endpoint"), t("state"), t("in_flight"), t("latency"),
        t("error_rate"), t("last_error")].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, items.map(row))));
  }

  function row(u) {
    const role = u.role === "fallback" ? badge(t("role_fallback"), "neutral") : u.role === "active" ? badge(t("active"), "info")
      : badge(t("role_none"), "neutral");
    const source = u.config_id == null ? badge(t("source_file_short"), "neutral", { title: u.config }) : null;
    return h("tr", { "data-endpoint": u.base_url, "data-state": u.state, "data-drained": String(!!u.drained), "data-config": u.config },
      h("th", { scope: "row" },
        h("div", { class: "cell-name" }, u.config_name || u.config),
        h("div", { class: "cell-sub nowrap" }, u.tier ? tierLabel(u.tier) : "", " ", role, " ", source)),
      // The whole URL, broken at any character if it must: two replicas on one host differ in
      // their port or path, which an ellipsis would hide.
      h("td", { class: "mono cell-url" }, u.base_url,
        u.weight !== 1 ? h("div", { class: "cell-sub" }, `${t("weight")} ${u.weight}`) : null),
      h("td", {}, badge(t(`state_${u.state}`), STATE_KIND[u.state] || "neutral", { "data-testid": "upstream-state" }),
        u.drained ? h("div", {}, badge(t("drained"), "warn", { "data-testid": "upstream-drained" })) : null,
        u.drained ? h("div", { class: "cell-sub" }, t("drained_by", { by: u.drained_by ?? t("none"), time: fmtTime(u.drained_at) })) : null,
        u.cooldown_until ? h("div", { class: "cell-sub" }, t("cooldown_until", { time: fmtTime(u.cooldown_until) })) : null,
        // Drain / restore beside the state it changes (no column of its own: the table fits).
        canEdit ? h("div", { class: "cell-action" }, drainButton(u)) : null),
      h("td", { class: "num" }, fmtNum(u.in_flight)),
      latencyCell(u),
      h("td", { class: "num" }, `${fmtNum(Math.round((u.error_rate || 0) * 100))}\u00a0%`),
      h("td", { class: "cell-diag" }, u.last_error ? diagnosticBox(u.last_error) : "—"));
  }

  function drainButton(u) {
    const undo = !!u.drained;
    return h("button", { type: "button", class: `btn btn-sm ${undo ? "" : "btn-danger-outline"}`, "data-testid": undo ? "undrain" : "drain",
      "aria-label": `${undo ? t("undrain") : t("drain")}: ${u.base_url}`, onclick: async (ev) => {
        const btn = ev.currentTarget;
        busy = true;  // the table stays as it is while the operator decides
        const ok = await confirmDialog(t(undo ? "confirm_undrain" : "confirm_drain", { url: u.base_url }),
          { confirmLabel: undo ? t("undrain") : t("drain"), danger: !undo });
        busy = false;
        if (!ok) return;
        setBusy(btn, true);
        try {
          await post(`/api/admin/upstreams/${undo ? "undrain" : "drain"}`, { config: u.config, base_url: u.base_url });
          toast(t(undo ? "undrained_toast" : "drained_toast", { url: u.base_url }), "ok");
        } catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
        refresh();
      } }, undo ? t("undrain") : t("drain"));
  }

  refresh();
  timer = setInterval(refresh, REFRESH_MS);
  return { section, refresh, stop: () => clearInterval(timer) };
}

/** What was observed (the last answer and the median of the recent ones, and when), with
 * the balancer's decaying estimate only as a hint: an idle endpoint's estimate falls to 0. */
function latencyCell(u) {
  if (u.last_latency_ms == null) return h("td", { class: "num" }, u.latency_ms == null ? "—" : h("span", { class: "muted" }, msText(u.latency_ms)));
  return h("td", { class: "num", "data-testid": "upstream-latency", title: t("latency_estimate", { ms: msText(u.latency_ms) }) },
    h("div", { class: "nowrap" }, `${t("latency_last")} ${msText(u.last_latency_ms, 1)}`),
    h("div", { class: "cell-sub nowrap" }, `${t("latency_median")} ${msText(u.median_latency_ms, 1)}`),
    u.last_answered_at ? h("div", { class: "cell-sub nowrap" }, t("latency_at", { time: fmtTime(u.last_answered_at) })) : null);
}

/** Per-endpoint results of a connection test (the configuration's base URL first). */
export function endpointResults(endpoints) {
  if (!Array.isArray(endpoints) || endpoints.length < 2) return null;
  return h("table", { class: "table table-compact", "data-testid": "test-endpoints" },
    h("thead", {}, h("tr", {}, [t("endpoint"), t("status"), t("latency"), t("diagnostic")].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, endpoints.map((e) => h("tr", {},
      h("th", { scope: "row", class: "mono cell-url" }, e.base_url),
      h("td", {}, badge(e.ok ? t("test_ok") : t("test_failed"), e.ok ? "ok" : "error")),
      h("td", { class: "num" }, msText(e.latency_ms)),
      h("td", {}, e.diagnostic ? diagnosticBox(e.diagnostic) : "—")))));
}
