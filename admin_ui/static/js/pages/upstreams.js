// Upstream health on the models page: this worker's view of every endpoint of the active
// configurations and their fallbacks (GET /api/admin/upstreams), refreshed every few
// seconds while the page is open. Each worker keeps its own view (passive health is per
// worker): behind a load balancer, successive refreshes may come from different workers.
import { get } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, diagnosticBox, errorBanner, h, replace } from "../ui.js";

const STATE_KIND = { healthy: "ok", cooling_down: "error", probing: "warn" };
const REFRESH_MS = 5000;

export function upstreamSection() {
  const box = h("div", { class: "table-wrap", "data-testid": "upstreams", "aria-busy": "true" });
  const section = h("section", { class: "section", "aria-labelledby": "upstreams-h" },
    h("div", { class: "section-head" }, h("h2", { id: "upstreams-h" }, t("upstreams_title")),
      h("button", { type: "button", class: "btn btn-sm", onclick: () => refresh() }, t("reload"))),
    h("p", { class: "page-intro" }, t("upstreams_intro")), box);
  let timer = null;

  async function refresh() {
    try {
      const body = await get("/api/admin/upstreams");
      render(Array.isArray(body?.items) ? body.items : []);
    } catch (e) { replace(box, errorBanner(e)); }
    box.removeAttribute("aria-busy");
  }

  function render(items) {
    if (!items.length) { replace(box, h("p", { class: "empty" }, t("upstreams_none"))); return; }
    replace(box, h("table", { class: "table", "data-testid": "upstreams-table" },
      h("caption", { class: "sr-only" }, t("upstreams_title")),
      h("thead", {}, h("tr", {}, [t("configuration"), t("endpoint"), t("state"), t("in_flight"), t("latency"),
        t("error_rate"), t("last_error")].map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, items.map(row))));
  }

  function row(u) {
    const role = u.role === "fallback" ? badge(t("role_fallback"), "neutral") : u.role === "active" ? badge(t("active"), "info") : null;
    return h("tr", { "data-endpoint": u.base_url, "data-state": u.state },
      h("th", { scope: "row" }, h("div", { class: "cell-name" }, u.config_name || u.config),
        h("div", { class: "cell-sub" }, u.tier ? tierLabel(u.tier) : "", " ", role)),
      h("td", { class: "mono truncate", title: u.base_url }, u.base_url,
        u.weight !== 1 ? h("div", { class: "cell-sub" }, `${t("weight")} ${u.weight}`) : null),
      h("td", {}, badge(t(`state_${u.state}`), STATE_KIND[u.state] || "neutral", { "data-testid": "upstream-state" }),
        u.cooldown_until ? h("div", { class: "cell-sub" }, t("cooldown_until", { time: fmtTime(u.cooldown_until) })) : null),
      h("td", {}, fmtNum(u.in_flight)),
      h("td", {}, u.latency_ms == null ? "—" : `${fmtNum(Math.round(u.latency_ms))} ms`),
      h("td", {}, `${fmtNum(Math.round((u.error_rate || 0) * 100))} %`),
      h("td", { class: "cell-diag" }, u.last_error ? diagnosticBox(u.last_error) : "—"));
  }

  refresh();
  timer = setInterval(refresh, REFRESH_MS);
  return { section, refresh, stop: () => clearInterval(timer) };
}

/** Per-endpoint results of a connection test (the configuration's base URL first). */
export function endpointResults(endpoints) {
  if (!Array.isArray(endpoints) || endpoints.length < 2) return null;
  return h("table", { class: "table table-compact", "data-testid": "test-endpoints" },
    h("thead", {}, h("tr", {}, [t("endpoint"), t("status"), t("latency"), t("diagnostic")].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, endpoints.map((e) => h("tr", {},
      h("th", { scope: "row", class: "mono" }, e.base_url),
      h("td", {}, badge(e.ok ? t("test_ok") : t("test_failed"), e.ok ? "ok" : "error")),
      h("td", {}, e.latency_ms == null ? "—" : `${fmtNum(e.latency_ms)} ms`),
      h("td", {}, e.diagnostic ? diagnosticBox(e.diagnostic) : "—")))));
}
