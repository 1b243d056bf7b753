// Create / edit dialog for one model configuration. The key is write-only: only
// `api_key_masked` is ever shown; untouched means "keep" (no `api_key` sent). The vendor
// select lists the server's dialect rows (GET /api/admin/vendors), so a new vendor needs no
// change here. A stored key never follows the base URL to another host (scheme, host or
// port): the server answers 422 api_key_required, so the form asks for the key as soon as
// the host changes (a replica on a new host too). The pool (replicas, fallbacks, hedging,
// in-flight cap) is its own section (pool_fields.js).
import { get, post, put } from "../api.js";
import { t, tierLabel } from "../i18n.js";
import { h, field, nextId, replace, setBusy, errorBanner } from "../ui.js";
import { testResult } from "./models.js";
import { poolSection } from "./pool_fields.js";

export const TIERS = ["nlu", "chat", "script"];
const EFFORTS = ["none", "minimal", "low", "medium", "high"];

function thinkingValue(v) { return v === true ? "true" : v === false ? "false" : ""; }

// The server's vendor rows, fetched once per page load; a failed fetch is retried next time.
let vendorRows = null;
function loadVendors() {
  vendorRows = vendorRows || get("/api/admin/vendors").then((r) => r.items, (e) => { vendorRows = null; throw e; });
  return vendorRows;
}

function vendorOptions(vendors, current) {
  const opts = [{ value: "", label: t("vendor_auto") },
    ...vendors.map((v) => ({ value: v.name, label: v.display_name === v.name ? v.name : `${v.display_name} (${v.name})` }))];
  // A stored name the server no longer knows stays visible (saving it is refused with a 422).
  if (current && !vendors.some((v) => v.name === current)) opts.push({ value: current, label: current });
  return opts;
}

/** "scheme//host:port" of an http(s) URL, default ports folded (as the server compares), or null. */
function originOf(url) {
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? `${u.protocol}//${u.hostname}:${u.port}` : null;
  } catch { return null; }
}

/** Opens the editor. config = null creates. Resolves with the saved config, or null. */
export async function openEditor({ config = null, tier = "nlu" } = {}) {
  let vendors = [];
  let vendorError = null;
  try { vendors = await loadVendors(); } catch (e) { vendorError = e; }
  // Fallback candidates: every stored configuration (the form offers those of the same tier).
  let configs = [];
  try { configs = (await get("/api/admin/llm-configs"))?.items || []; } catch { /* offered none */ }
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = nextId("editor");
    const body = h("div", { class: "dialog-body" });
    const dlg = h("dialog", { class: "dialog dialog-wide", "aria-labelledby": titleId });
    let result = null;
    dlg.addEventListener("close", () => {
      dlg.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(result);
    });
    const done = (saved) => { result = saved; dlg.close(); };
    dlg.append(h("div", { class: "dialog-head" },
      h("h2", { id: titleId }, config ? `${t("edit_config")} · ${config.name}` : t("new_config")),
      h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => dlg.close() }, "×")),
    body);
    document.body.appendChild(dlg);
    buildForm(body, config, tier, done, vendors, configs);
    if (vendorError) body.prepend(errorBanner(vendorError));
    dlg.showModal();
    body.querySelector("input[name=name]")?.focus();
  });
}

function buildForm(body, config, defaultTier, done, vendors, configs = []) {
  const c = config || {};
  const editing = !!config;
  const f = {};
  f.tier = field({ label: t("tier"), name: "tier", value: c.tier || defaultTier,
    options: TIERS.map((x) => ({ value: x, label: tierLabel(x) })) });
  f.name = field({ label: t("name"), name: "name", value: c.name, required: true, attrs: { maxlength: 100, autocomplete: "off" } });
  f.base_url = field({ label: t("base_url"), name: "base_url", value: c.base_url, required: true, type: "url",
    attrs: { placeholder: "https://api.example.com/v1", autocomplete: "off", spellcheck: "false" } });
  const modelsListId = nextId("models");
  f.model = field({ label: t("model"), name: "model", value: c.model, required: true,
    attrs: { autocomplete: "off", spellcheck: "false", list: modelsListId } });
  f.vendor = field({ label: t("vendor"), name: "vendor", value: c.vendor || "", options: vendorOptions(vendors, c.vendor),
    hint: editing ? null : t("vendor_preset_hint") });
  f.api_style = field({ label: t("api_style"), name: "api_style", value: c.api_style || "chat-completions",
    options: [{ value: "chat-completions", label: "chat-completions (/v1/chat/completions)" },
      { value: "responses", label: "responses (/v1/responses)" }] });
  f.timeout_s = field({ label: t("timeout_s"), name: "timeout_s", type: "number", value: c.timeout_s ?? 30,
    attrs: { min: "0.1", max: "600", step: "0.1", inputmode: "decimal" } });
  f.max_tokens = field({ label: t("max_tokens"), name: "max_tokens", type: "number", value: c.max_tokens ?? 300,
    attrs: { min: "1", step: "1", inputmode: "numeric" } });
  f.temperature = field({ label: t("temperature"), name: "temperature", type: "number", value: c.temperature ?? "",
    attrs: { min: "0", max: "2", step: "0.05", inputmode: "decimal" } });
  f.enable_thinking = field({ label: t("enable_thinking"), name: "enable_thinking", value: thinkingValue(c.enable_thinking),
    options: [{ value: "", label: t("thinking_default") }, { value: "false", label: t("thinking_off") },
      { value: "true", label: t("thinking_on") }] });
  f.reasoning_effort = field({ label: t("reasoning_effort"), name: "reasoning_effort", value: c.reasoning_effort || "",
    options: [{ value: "", label: t("reasoning_default") }, ...EFFORTS.map((v) => ({ value: v, label: v })),
      ...(c.reasoning_effort && !EFFORTS.includes(c.reasoning_effort) ? [{ value: c.reasoning_effort, label: c.reasoning_effort }] : [])] });
  f.extra_params = field({ label: t("extra_params"), name: "extra_params", type: "textarea", hint: t("extra_params_hint"),
    value: JSON.stringify(c.extra_params && typeof c.extra_params === "object" ? c.extra_params : {}, null, 2),
    attrs: { rows: 4, spellcheck: "false", class: "mono" } });

  // Price per million tokens (the call log's cost); all three empty = unpriced.
  const pr = c.price || {};
  const priceIn = field({ label: t("price_input"), name: "price_input", type: "number", value: pr.input_per_mtok ?? "",
    attrs: { min: "0", step: "any", inputmode: "decimal" } });
  const priceOut = field({ label: t("price_output"), name: "price_output", type: "number", value: pr.output_per_mtok ?? "",
    attrs: { min: "0", step: "any", inputmode: "decimal" } });
  const currency = field({ label: t("price_currency"), name: "price_currency", value: pr.currency ?? "",
    attrs: { maxlength: 3, autocomplete: "off", spellcheck: "false" } });
  const priceHint = h("p", { class: "field-hint" }, t("price_hint"));
  f.price = { row: h("div", {}, h("div", { class: "grid-3" }, priceIn.row, priceOut.row, currency.row), priceHint),
    input: priceIn.input, setError: (m) => priceIn.setError(m) };

  // API key: masked display + replace / clear (edit), or a password input (create).
  let keyMode = editing ? "keep" : "set";
  let hostMoved = false;  // editing a config with a key, and base_url now names another host
  const storedOrigin = editing && c.has_api_key !== false && c.api_key_masked ? originOf(c.base_url || "") : null;
  const keyInput = field({ label: editing ? t("key_new") : t("api_key"), name: "api_key", type: "password",
    attrs: { autocomplete: "new-password", spellcheck: "false" } });
  const keyArea = h("div", { class: "key-area" });
  f.api_key = { row: keyArea, input: keyInput.input, setError: keyInput.setError };
  const renderKey = () => {
    // Nothing to keep on create, or on a configuration that has no key yet.
    if (!editing) { replace(keyArea, keyInput.row, h("p", { class: "field-hint", "data-testid": "key-hint" }, t("key_hint_new"))); return; }
    const hasKey = c.has_api_key !== false && !!c.api_key_masked;
    const maskedId = nextId("masked");
    const masked = h("output", { id: maskedId, class: "key-masked mono", "data-testid": "api-key-masked" },
      c.has_api_key === false || !c.api_key_masked ? t("key_none") : c.api_key_masked);
    const btn = (label, mode, cls = "btn btn-sm") => h("button", { type: "button", class: cls, onclick: () => {
      keyMode = mode; renderKey(); if (mode === "set") keyInput.input.focus();
      else keyArea.querySelector("button")?.focus();
    } }, label);
    const clearBtn = c.has_api_key !== false && c.api_key_masked ? btn(t("key_clear"), "clear", "btn btn-sm btn-danger-outline") : null;
    // Once the host moved, "keep" is no choice: a new key, or none.
    const buttons = keyMode === "keep" ? [btn(hasKey ? t("key_replace") : t("key_set"), "set"), clearBtn]
      : !hostMoved ? btn(hasKey ? t("key_keep") : t("key_skip"), "keep")
        : keyMode === "set" ? clearBtn : btn(t("key_replace"), "set");
    const display = h("div", { class: "field" }, h("span", { class: "label", id: `${maskedId}-l` }, t("api_key")),
      h("div", { class: "key-row", role: "group", "aria-labelledby": `${maskedId}-l` }, masked, buttons));
    replace(keyArea, display,
      hostMoved && keyMode !== "clear" ? h("p", { class: "banner banner-warn", role: "status", "data-testid": "key-host-changed" }, t("key_host_changed")) : null,
      keyMode === "set" ? keyInput.row : null,
      keyMode === "clear" ? h("p", { class: "banner banner-warn", role: "status" }, t("key_will_clear")) : null,
      keyMode === "keep" ? h("p", { class: "field-hint", "data-testid": "key-hint" }, hasKey ? t("key_hint") : t("key_hint_none")) : null);
  };
  renderKey();
  // Moving to another host switches to "enter a key" and says why; moving back restores "keep".
  f.base_url.input.addEventListener("input", () => {
    if (!storedOrigin) return;
    // An unfinished or invalid URL is no move yet: the server names what is wrong with it.
    const now = originOf(f.base_url.input.value);
    const moved = now !== null && now !== storedOrigin;
    if (moved === hostMoved) return;
    hostMoved = moved;
    if (moved && keyMode === "keep") keyMode = "set";
    else if (!moved && keyMode === "set" && !keyInput.input.value) keyMode = "keep";
    renderKey();
  });

  // Presets: a vendor chosen on a new configuration fills in its base URL, while the field is
  // empty or still holds the previous vendor's preset (never over what the operator typed).
  const presets = new Set(vendors.map((v) => v.base_url).filter(Boolean));
  f.vendor.input.addEventListener("change", () => {
    const row = vendors.find((v) => v.name === f.vendor.input.value);
    const now = f.base_url.input.value.trim();
    if (!row?.base_url || (now && !presets.has(now))) return;
    f.base_url.input.value = row.base_url;
    f.base_url.input.dispatchEvent(new Event("input"));
  });

  // Fetch models: the server asks `<base_url>/models` (the key stays on the server).
  const modelsList = h("datalist", { id: modelsListId });
  const modelsStatus = h("p", { class: "field-hint", role: "status", "data-testid": "models-status" });
  const fetchBtn = h("button", { type: "button", class: "btn btn-sm", "data-testid": "fetch-models", onclick: async () => {
    replace(modelsStatus);
    const base = f.base_url.input.value.trim();
    if (!base) { f.base_url.setError(t("required")); f.base_url.input.focus(); return; }
    setBusy(fetchBtn, true, t("fetching_models"));
    try {
      const r = await post("/api/admin/llm-configs/models", { base_url: base, ...keyFields() });
      const models = Array.isArray(r?.models) ? r.models : [];
      replace(modelsList, models.map((m) => h("option", { value: m })));
      if (r?.ok) modelsStatus.textContent = models.length ? t("models_found", { n: models.length }) : t("models_none");
      else replace(modelsStatus, r?.reason === "not_a_model_list" ? t("models_not_a_list") : `${t("models_failed")}${t("colon")}${r?.diagnostic?.message ?? ""}`);
      if (models.length) f.model.input.focus();
    } catch (e) {
      if (e.code === "api_key_required") showErrors({ api_key: t("key_required_host") });
      else if (e.status === 422) showErrors(e.fieldMap());
      else replace(modelsStatus, errorBanner(e));
    } finally { setBusy(fetchBtn, false); }
  } }, t("fetch_models"));
  f.model.row.append(modelsList, h("div", { class: "field-inline" }, fetchBtn), modelsStatus);

  const pool = poolSection(c.tier ? c : { ...c, tier: defaultTier }, configs);
  Object.assign(f, pool.fields);
  f.tier.input.addEventListener("change", () => pool.setTier(f.tier.input.value));

  const active = editing ? null : h("div", { class: "field field-check" },
    h("input", { type: "checkbox", id: "new-is-active", name: "is_active" }),
    h("label", { for: "new-is-active" }, t("is_active")));

  const status = h("div", { class: "form-status", "aria-live": "assertive" });
  const save = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
  const testOut = h("div", { class: "test-result form-test", "aria-live": "polite", "data-testid": "form-test-result", hidden: true });
  const testBtn = h("button", { type: "button", class: "btn", "data-testid": "form-test", onclick: () => testForm() }, t("test_form"));
  const form = h("form", { class: "config-form", novalidate: true },
    h("div", { class: "grid-2" }, f.name.row, f.tier.row),
    f.base_url.row,
    h("div", { class: "grid-2" }, f.model.row, f.vendor.row),
    keyArea,
    h("div", { class: "grid-3" }, f.api_style.row, f.timeout_s.row, f.max_tokens.row),
    h("div", { class: "grid-3" }, f.temperature.row, f.enable_thinking.row, f.reasoning_effort.row),
    f.extra_params.row, f.price.row, pool.row, active, status, testOut,
    h("div", { class: "dialog-actions" }, testBtn,
      h("button", { type: "button", class: "btn", onclick: () => done(null) }, t("cancel")), save));

  const clearErrors = () => { Object.values(f).forEach((x) => x.setError("")); replace(status); };
  const showErrors = (map) => {
    let first = null;
    for (const [name, msg] of Object.entries(map)) {
      const key = name.split(".")[0];
      const target = f[key];
      if (target) { target.setError(msg || t("required")); first = first || target.input; }
    }
    const unknown = Object.keys(map).filter((n) => !f[n.split(".")[0]]);
    status.append(h("div", { class: "banner banner-error", role: "alert" }, t("validation_failed"),
      unknown.length ? h("ul", {}, unknown.map((n) => h("li", {}, `${n}: ${map[n]}`))) : null));
    (first || status).focus?.();
  };

  /** The key part of a request: typed, cleared, or left out (the stored one, server-side). */
  function keyFields() {
    const out = editing ? { config_id: c.id } : {};
    if (keyMode === "set" && keyInput.input.value) out.api_key = keyInput.input.value;
    if (keyMode === "clear") out.api_key = "";
    return out;
  }

  /** {errors} the browser can tell already, else {payload} as saving sends it (a test
   * needs no name yet). */
  function collect({ forTest = false } = {}) {
    const v = (k) => f[k].input.value.trim();
    const local = {};
    for (const k of forTest ? ["base_url", "model"] : ["name", "base_url", "model"]) if (!v(k)) local[k] = t("required");
    let extra = {};
    try {
      extra = v("extra_params") ? JSON.parse(v("extra_params")) : {};
      if (!extra || typeof extra !== "object" || Array.isArray(extra)) throw new Error("not an object");
    } catch { local.extra_params = t("invalid_json"); }
    if (hostMoved && keyMode === "keep") { keyMode = "set"; renderKey(); }
    if (keyMode === "set" && editing && !keyInput.input.value) local.api_key = hostMoved ? t("key_required_host") : t("required");
    const poolValues = pool.read();
    Object.assign(local, poolValues.errors);
    if (Object.keys(local).length) return { errors: local };
    const num = (k) => (v(k) === "" ? null : Number(v(k)));
    const payload = {
      tier: v("tier"), name: v("name"), base_url: v("base_url"), model: v("model"), api_style: v("api_style"),
      timeout_s: num("timeout_s"), max_tokens: num("max_tokens") === null ? null : Math.trunc(num("max_tokens")),
      temperature: num("temperature"),
      enable_thinking: v("enable_thinking") === "" ? null : v("enable_thinking") === "true",
      reasoning_effort: v("reasoning_effort") || null, extra_params: extra, ...poolValues.payload,
    };
    if (v("vendor") || c.vendor) payload.vendor = v("vendor") || null;
    const pv = [priceIn, priceOut, currency].map((x) => x.input.value.trim());
    if (pv.some(Boolean)) {
      payload.price = { input_per_mtok: pv[0] === "" ? null : Number(pv[0]),
        output_per_mtok: pv[1] === "" ? null : Number(pv[1]), currency: pv[2].toUpperCase() };
    } else if (c.price) payload.price = null;
    return { payload };
  }

  // Test connection on what the form holds now, saved or not (nothing is stored).
  async function testForm() {
    clearErrors();
    const { errors, payload } = collect({ forTest: true });
    if (errors) { showErrors(errors); return; }
    const values = { ...payload };
    delete values.fallback_ids;  // a test calls this configuration's endpoints only
    testOut.hidden = false;
    replace(testOut, h("h3", {}, t("test_form_title")), h("p", { class: "muted" }, t("testing")));
    setBusy(testBtn, true, t("testing"));
    try {
      const r = (await post("/api/admin/llm-configs/test", { ...values, ...keyFields() })) || {};
      replace(testOut, h("h3", {}, t("test_form_title")), ...testResult(r));
    } catch (e) {
      replace(testOut);
      testOut.hidden = true;
      if (e.code === "api_key_required") showErrors({ api_key: t("key_required_host") });
      else if (e.status === 422) showErrors(Object.keys(e.fieldMap()).length ? e.fieldMap() : { body: e.message });
      else { testOut.hidden = false; replace(testOut, errorBanner(e)); }
    } finally { setBusy(testBtn, false); }
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearErrors();
    const { errors, payload } = collect();
    if (errors) { showErrors(errors); return; }
    if (keyMode === "set" && keyInput.input.value) payload.api_key = keyInput.input.value;
    if (keyMode === "clear") payload.api_key = "";
    if (!editing) payload.is_active = !!active.querySelector("input").checked;
    else payload.version = c.version;
    setBusy(save, true);
    try {
      const saved = editing ? await put(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`, payload)
        : await post("/api/admin/llm-configs", payload);
      keyInput.input.value = "";
      done(saved || { ...c, ...payload });
    } catch (e) {
      setBusy(save, false);
      if (e.status === 422 && e.code === "api_key_required") {  // the server saw the host change
        hostMoved = true;
        if (keyMode === "keep") { keyMode = "set"; renderKey(); }
        showErrors({ api_key: t("key_required_host") });
        return;
      }
      if (e.status === 422) { showErrors(Object.keys(e.fieldMap()).length ? e.fieldMap() : { body: e.message }); return; }
      if (e.status === 409 && editing) {
        const reload = h("button", { type: "button", class: "btn btn-sm", onclick: async () => {
          try {
            const fresh = await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`);
            replace(body);
            buildForm(body, fresh, defaultTier, done, vendors, configs);
            body.querySelector("input[name=name]")?.focus();
          } catch (err) { replace(status, errorBanner(err)); }
        } }, t("version_conflict_reload"));
        replace(status, h("div", { class: "banner banner-warn", role: "alert", "data-testid": "version-conflict" },
          h("p", {}, t("version_conflict")), reload));
        reload.focus();
        return;
      }
      replace(status, errorBanner(e));
    }
  });
  body.append(form);
}
