// The pool part of the model form: replicas (endpoints), fallback configurations in order,
// hedging and the per-endpoint in-flight cap. Replicas share the configuration's key, model
// and dialect; a replica on a host the stored key was never sent to needs the key again (the
// server answers 422 api_key_required, as for base_url).
import { t, tierLabel } from "../i18n.js";
import { field, h, nextId, replace } from "../ui.js";

/**
 * poolSection(c, configs): c = the configuration edited ({} for a new one), configs = every
 * stored configuration (fallback candidates). Returns {row, fields, read(tier)}; read()
 * returns the payload part, or {errors} for what the browser can tell already.
 */
export function poolSection(c, configs) {
  const endpoints = (c.endpoints || []).map((e) => ({ base_url: e.base_url, weight: e.weight ?? 1 }));
  let fallbacks = [...(c.fallback_ids || [])];
  const epBox = h("div", { class: "pool-endpoints", "data-testid": "pool-endpoints" });
  const fbBox = h("div", { class: "pool-fallbacks", "data-testid": "pool-fallbacks" });
  const epError = h("p", { class: "field-error", hidden: true });
  const fbError = h("p", { class: "field-error", hidden: true });
  const setErr = (el) => (msg) => { el.textContent = msg || ""; el.hidden = !msg; };
  let tierNow = c.tier || "nlu";

  const renderEndpoints = () => {
    replace(epBox, endpoints.length ? h("ol", { class: "pool-list" }, endpoints.map((e, i) => {
      const urlId = nextId("ep-url");
      const wId = nextId("ep-w");
      const url = h("input", { id: urlId, type: "url", value: e.base_url, class: "mono", autocomplete: "off",
        spellcheck: "false", placeholder: "http://gpu-02.internal/v1", "data-testid": `endpoint-url-${i}`,
        oninput: (ev) => { e.base_url = ev.target.value; } });
      const weight = h("input", { id: wId, type: "number", value: e.weight, min: "0.01", step: "any", inputmode: "decimal",
        class: "pool-weight", "data-testid": `endpoint-weight-${i}`, oninput: (ev) => { e.weight = ev.target.value; } });
      return h("li", { class: "pool-item" },
        h("label", { for: urlId, class: "sr-only" }, `${t("endpoint")} ${i + 2}`), url,
        h("label", { for: wId, class: "pool-weight-label" }, t("weight")), weight,
        h("button", { type: "button", class: "btn btn-sm btn-ghost", "aria-label": `${t("remove")}: ${e.base_url || i + 2}`,
          onclick: () => { endpoints.splice(i, 1); renderEndpoints(); } }, "×"));
    })) : h("p", { class: "field-hint" }, t("endpoints_none")),
    h("button", { type: "button", class: "btn btn-sm", "data-testid": "add-endpoint", onclick: () => {
      endpoints.push({ base_url: "", weight: 1 }); renderEndpoints();
      epBox.querySelector(`[data-testid=endpoint-url-${endpoints.length - 1}]`)?.focus();
    } }, `+ ${t("add_endpoint")}`), epError);
  };

  const candidates = () => configs.filter((x) => x.tier === tierNow && String(x.id) !== String(c.id));
  const nameOf = (id) => configs.find((x) => String(x.id) === String(id))?.name || `#${id}`;
  const renderFallbacks = () => {
    const pick = candidates().filter((x) => !fallbacks.some((id) => String(id) === String(x.id)));
    const selId = nextId("fb");
    const select = h("select", { id: selId, "data-testid": "fallback-select" },
      h("option", { value: "" }, t("fallback_choose")), pick.map((x) => h("option", { value: x.id }, `${x.name} · ${x.model}`)));
    replace(fbBox, fallbacks.length ? h("ol", { class: "pool-list" }, fallbacks.map((id, i) =>
      h("li", { class: "pool-item", "data-fallback-id": id },
        h("span", { class: "pool-fb-name" }, nameOf(id)),
        h("button", { type: "button", class: "btn btn-sm btn-ghost", "aria-label": `${t("move_up")}: ${nameOf(id)}`, disabled: i === 0,
          onclick: () => { fallbacks.splice(i - 1, 0, fallbacks.splice(i, 1)[0]); renderFallbacks(); } }, "↑"),
        h("button", { type: "button", class: "btn btn-sm btn-ghost", "aria-label": `${t("remove")}: ${nameOf(id)}`,
          onclick: () => { fallbacks.splice(i, 1); renderFallbacks(); } }, "×"))))
      : h("p", { class: "field-hint" }, t("fallbacks_none", { tier: tierLabel(tierNow) })),
    pick.length ? h("div", { class: "pool-add" }, h("label", { for: selId, class: "sr-only" }, t("add_fallback")), select,
      h("button", { type: "button", class: "btn btn-sm", "data-testid": "add-fallback", onclick: () => {
        if (select.value) { fallbacks.push(Number(select.value)); renderFallbacks(); }
      } }, `+ ${t("add_fallback")}`)) : null, fbError);
  };
  renderEndpoints();
  renderFallbacks();

  const hedge = field({ label: t("hedge_after_ms"), name: "hedge_after_ms", type: "number", value: c.hedge_after_ms ?? "",
    hint: t("hedge_hint"), attrs: { min: "10", max: "60000", step: "1", inputmode: "numeric", placeholder: t("off") } });
  const cap = field({ label: t("max_in_flight"), name: "max_in_flight", type: "number", value: c.max_in_flight ?? "",
    hint: t("max_in_flight_hint"), attrs: { min: "1", step: "1", inputmode: "numeric", placeholder: t("unbounded") } });
  const prioId = nextId("prio");
  const prioInput = h("input", { type: "checkbox", id: prioId, name: "send_priority", checked: !!c.send_priority });
  const prio = h("div", { class: "field field-check" }, prioInput,
    h("label", { for: prioId }, t("send_priority")),
    h("p", { class: "field-hint" }, t("send_priority_hint")));
  const epLabel = nextId("ep-l");
  const fbLabel = nextId("fb-l");
  const row = h("fieldset", { class: "pool-section", "data-testid": "pool-section" },
    h("legend", {}, t("pool")),
    h("p", { class: "field-hint" }, t("pool_hint")),
    h("div", { class: "field", role: "group", "aria-labelledby": epLabel },
      h("span", { class: "label", id: epLabel }, t("endpoints")), epBox),
    h("div", { class: "field", role: "group", "aria-labelledby": fbLabel },
      h("span", { class: "label", id: fbLabel }, t("fallback_ids")), fbBox),
    h("div", { class: "grid-2" }, hedge.row, cap.row), prio);

  const fields = {
    endpoints: { input: epBox, setError: setErr(epError) },
    fallback_ids: { input: fbBox, setError: setErr(fbError) },
    hedge_after_ms: hedge, max_in_flight: cap,
    send_priority: { input: prioInput, setError: () => {} },
  };
  return {
    row, fields,
    setTier(tier) { if (tier !== tierNow) { tierNow = tier; fallbacks = []; renderFallbacks(); } },
    read() {
      const errors = {};
      const eps = endpoints.filter((e) => String(e.base_url).trim() !== "")
        .map((e) => ({ base_url: String(e.base_url).trim(), weight: Number(e.weight) }));
      if (eps.some((e) => !(e.weight > 0))) errors.endpoints = t("weight_positive");
      const int = (f) => (f.input.value.trim() === "" ? null : Math.trunc(Number(f.input.value)));
      return { errors, payload: { endpoints: eps, fallback_ids: [...fallbacks],
        hedge_after_ms: int(hedge), max_in_flight: int(cap), send_priority: prioInput.checked } };
    },
  };
}
