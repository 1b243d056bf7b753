// #/ai/models: active configuration per tier, the list, edit / activate / delete / test / history.
import { del, get, post, put } from "../api.js";
import { fmtNum, fmtTime, labelOf, t, tierLabel } from "../i18n.js";
import { badge, confirmDialog, diagnosticBox, errorBanner, fieldLabel, h, msText, pageHeader, replace, setBusy, toast, valueText } from "../ui.js";
import { TIERS, openEditor } from "./model_form.js";
import { can } from "../roles.js";
import { endpointResults, upstreamSection } from "./upstreams.js";
import { openEvaluate } from "./evaluations.js";
import { canaryBanner, openStartCanary } from "./canaries.js";

// Fields a rollback may restore (never key material, never bookkeeping).
const ROLLBACK_FIELDS = ["tier", "name", "base_url", "model", "api_style", "timeout_s", "max_tokens", "temperature",
  "enable_thinking", "reasoning_effort", "extra_params", "vendor",
  "endpoints", "fallback_ids", "hedge_after_ms", "max_in_flight", "send_priority"];
const KEY_FIELDS = new Set(["api_key", "api_key_masked", "has_api_key", "api_key_encrypted", "key"]);
const WRITABLE = ["tier", "name", "base_url", "model", "api_style", "timeout_s", "max_tokens", "temperature",
  "enable_thinking", "reasoning_effort", "extra_params"];

const items = (body) => (Array.isArray(body) ? body : Array.isArray(body?.items) ? body.items : []);
const show = (v) => valueText(v);

export function render(main, ctx) {
  // Viewers read (keys masked) and see the history; only operators and admins get the buttons
  // that change or call something (the server refuses them to viewers regardless).
  const canEdit = can(ctx?.session?.me, "operator");
  const activeBox = h("div", { class: "tier-cards", "aria-busy": "true" });
  const listBox = h("div", { class: "table-wrap" });
  const detail = h("section", { class: "panel detail-panel", hidden: true, "aria-live": "polite", "data-testid": "detail-panel" });
  const newBtn = h("button", { type: "button", class: "btn btn-primary", onclick: async () => {
    const saved = await openEditor({});
    if (saved) { toast(t("created", { name: saved.name }), "ok"); refresh(); }
  } }, `+ ${t("new_config")}`);
  main.append(pageHeader(t("models_title"), t("models_intro"), canEdit ? newBtn : null),
    h("section", { class: "section", "aria-labelledby": "active-h" }, h("h2", { id: "active-h" }, t("active_configs")), activeBox),
    h("section", { class: "section", "aria-labelledby": "list-h" }, h("h2", { id: "list-h" }, t("configs_list")), listBox),
    detail);
  const upstreams = upstreamSection({ canEdit });
  main.append(upstreams.section);
  // While a canary runs, the page says so above everything else (it changes what serves).
  const bannerBox = h("div", { "data-testid": "canary-banner-box" });
  const head = main.querySelector(".page-header");
  if (head) head.after(bannerBox); else main.prepend(bannerBox);

  let configs = [];
  let alive = true;

  async function refresh() {
    const [active, list] = await Promise.allSettled([get("/api/admin/llm-active"), get("/api/admin/llm-configs")]);
    if (!alive) return;
    activeBox.removeAttribute("aria-busy");
    if (active.status === "fulfilled") renderActive(active.value);
    else replace(activeBox, errorBanner(active.reason));
    if (list.status === "fulfilled") { configs = items(list.value); renderList(); }
    else replace(listBox, errorBanner(list.reason));
    // An open history follows the change just made (activation, edit, rollback).
    if (!detail.hidden && detail.dataset.mode === "history") {
      const open = configs.find((x) => String(x.id) === detail.dataset.configId);
      if (open) history(open, { focus: false }); else detail.hidden = true;
    }
    upstreams.refresh();
    canaryBanner().then((banner) => { if (alive) replace(bannerBox, banner); });
  }

  function renderActive(body) {
    const tiers = body?.tiers && typeof body.tiers === "object" ? body.tiers : {};
    replace(activeBox, TIERS.map((tier) => {
      const entry = tiers[tier] || {};
      const c = entry.config || null;
      const src = entry.source || (c && c.id ? "db" : "file");
      return h("article", { class: "tier-card", "data-tier": tier, "data-testid": `active-${tier}` },
        h("header", {}, h("h3", {}, tierLabel(tier)), badge(t(`source_${src}`) || src, src === "db" ? "info" : "neutral")),
        c ? h("dl", { class: "kv-list compact" },
          h("div", { class: "kv" }, h("dt", {}, t("name")), h("dd", {}, c.name || "—")),
          h("div", { class: "kv" }, h("dt", {}, t("model")), h("dd", { class: "mono" }, c.model || "—")),
          h("div", { class: "kv" }, h("dt", {}, t("base_url")), h("dd", { class: "mono truncate", title: c.base_url || "" }, c.base_url || "—")),
          h("div", { class: "kv" }, h("dt", {}, t("max_tokens")), h("dd", {}, fmtNum(c.max_tokens))),
          h("div", { class: "kv" }, h("dt", {}, t("enable_thinking")), h("dd", {},
            c.enable_thinking === true ? t("thinking_on") : c.enable_thinking === false ? t("thinking_off") : t("thinking_default"))))
          : h("p", { class: "muted" }, t("no_active")));
    }));
    if (body && body.generation !== undefined) activeBox.dataset.generation = String(body.generation);
  }

  function renderList() {
    if (!configs.length) { replace(listBox, h("p", { class: "empty" }, t("no_configs"))); return; }
    const sorted = [...configs].sort((a, b) => TIERS.indexOf(a.tier) - TIERS.indexOf(b.tier) || String(a.name).localeCompare(String(b.name)));
    replace(listBox, h("table", { class: "table", "data-testid": "configs-table" },
      h("caption", { class: "sr-only" }, t("configs_list")),
      h("thead", {}, h("tr", {}, [t("name"), t("tier"), t("model"), t("api_key"), t("status"), t("updated"), t("actions")]
        .map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, sorted.map(row))));
  }

  function row(c) {
    // Each action has its own grid slot, so the buttons line up from row to row (an active
    // configuration leaves "activate" empty instead of shifting the others).
    // Short labels keep the actions column narrow; the full name is the accessible one.
    const LONG = { [t("test_short")]: t("test"), [t("eval_short")]: t("eval_action"), [t("deactivate")]: t("deactivate_long"),
      [t("canary_start_short")]: t("canary_start_long") };
    const act = (slot, label, fn, cls = "btn btn-sm") => h("button", { type: "button", class: `${cls} act-${slot}`,
      "aria-label": `${LONG[label] ?? label}: ${c.name}`, title: LONG[label] ?? null, onclick: (ev) => fn(ev.currentTarget) }, label);
    // Running an evaluation calls a model: an operator's, like test connection.
    const evaluable = canEdit && c.tier === "nlu" && !c.is_active;
    // A canary splits phone calls by call_id: the NLU and chat tiers (a script belongs to no call).
    const canaryable = canEdit && (c.tier === "nlu" || c.tier === "chat") && !c.is_active;
    return h("tr", { "data-config-id": c.id, class: c.is_active ? "row-active" : "" },
      h("th", { scope: "row" }, h("div", { class: "cell-name" }, c.name), h("div", { class: "cell-sub mono truncate", title: c.base_url }, c.base_url),
        poolSummary(c)),
      h("td", { class: "nowrap", title: tierLabel(c.tier) }, labelOf("tier_short_", c.tier)),
      h("td", { class: "mono cell-model" }, c.model, c.vendor ? h("div", { class: "cell-sub" }, c.vendor) : null),
      h("td", { class: "mono" }, c.has_api_key === false || !c.api_key_masked ? h("span", { class: "muted" }, t("key_none")) : c.api_key_masked),
      h("td", {}, c.is_active ? badge(t("active"), "ok") : badge(t("inactive"), "neutral"),
        h("div", { class: "cell-sub", "data-testid": "config-version" }, `${t("version")} ${c.version ?? "?"}`)),
      h("td", {}, h("div", {}, fmtTime(c.updated_at)), c.updated_by ? h("div", { class: "cell-sub" }, c.updated_by) : null),
      h("td", {}, h("div", { class: "cell-actions" },
        canEdit ? act("edit", t("edit"), () => edit(c)) : null,
        canEdit ? act("test", t("test_short"), (b) => test(c, b)) : null,
        act("history", t("history"), () => history(c)),
        // An active configuration's slot sends its tier back to config.toml instead; both
        // labels size the slot, so the buttons line up whichever a row shows.
        !canEdit ? null : sized(c.is_active ? act("activate", t("deactivate"), (b) => deactivate(c, b))
          : act("activate", t("activate"), (b) => activate(c, b)), c.is_active ? t("activate") : t("deactivate")),
        canEdit ? act("delete", t("delete"), () => remove(c), "btn btn-sm btn-danger-outline") : null,
        evaluable ? act("evaluate", t("eval_short"), () => openEvaluate(c, ctx.navigate)) : null,
        canaryable ? act("canary", t("canary_start_short"), () => openStartCanary(c, ctx.navigate)) : null)));
  }

  function sized(button, other) {
    const label = button.textContent;
    replace(button, h("span", {}, label), h("span", { class: "btn-sizer", "aria-hidden": "true" }, other));
    return button;
  }

  async function edit(c) {
    let fresh = c;
    try { fresh = (await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`)) || c; } catch { /* use the list copy */ }
    const saved = await openEditor({ config: fresh });
    if (saved) toast(t("saved", { name: saved.name, version: saved.version ?? "?" }), "ok");
    refresh();  // also after a cancel: a conflict may have shown someone else's newer version
  }

  async function activate(c, btn) {
    if (!(await confirmDialog(t("confirm_activate", { name: c.name, tier: tierLabel(c.tier) })))) return;
    setBusy(btn, true);
    try { await post(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/activate`); toast(t("activated", { name: c.name }), "ok"); }
    catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
    refresh();
  }

  async function deactivate(c, btn) {
    if (!(await confirmDialog(t("confirm_deactivate", { name: c.name, tier: tierLabel(c.tier) })))) return;
    setBusy(btn, true);
    try {
      await post(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/deactivate`);
      toast(t("deactivated", { name: c.name, tier: tierLabel(c.tier) }), "ok");
    } catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
    refresh();
  }

  async function remove(c) {
    if (!(await confirmDialog(t("confirm_delete", { name: c.name }), { confirmLabel: t("delete"), danger: true }))) return;
    try { await del(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`); toast(t("deleted", { name: c.name }), "ok"); }
    catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
    if (detail.dataset.configId === String(c.id)) detail.hidden = true;
    refresh();
  }

  function openDetail(c, mode, title, content, { focus = true } = {}) {
    detail.hidden = false;
    detail.dataset.configId = String(c.id);
    detail.dataset.mode = mode;
    const heading = h("h2", { tabindex: "-1" }, title);
    replace(detail, h("div", { class: "panel-head" }, heading,
      h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => { detail.hidden = true; } }, "×")),
    content);
    if (focus) heading.focus();
    return detail;
  }

  async function test(c, btn) {
    const out = h("div", { class: "test-result", "data-testid": "test-result" }, h("p", { class: "muted" }, t("testing")));
    openDetail(c, "test", t("test_result", { name: c.name }), out);
    setBusy(btn, true, t("testing"));
    try {
      const r = (await post(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/test`)) || {};
      replace(out, ...testResult(r));
      upstreams.refresh();
    } catch (e) {
      replace(out, errorBanner(e), diagnosticBox(e.error?.diagnostic));
    } finally { setBusy(btn, false); }
  }

  async function history(c, { focus = true } = {}) {
    const out = h("div", { class: "revisions", "data-testid": "revisions" }, h("p", { class: "muted" }, t("loading")));
    openDetail(c, "history", t("revisions_title", { name: c.name }), out, { focus });
    try {
      const revs = items(await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/revisions`)).map(normalizeRevision);
      revs.sort((a, b) => (b.version ?? 0) - (a.version ?? 0) || (b.id ?? 0) - (a.id ?? 0));
      if (!revs.length) { replace(out, h("p", { class: "empty" }, t("no_revisions"))); return; }
      replace(out, h("ol", { class: "revision-list" }, revs.map((r) => revisionItem(c, r))));
    } catch (e) { replace(out, errorBanner(e)); }
  }

  function revisionItem(c, r) {
    // A creation has no earlier values to go back to (its "old" side is empty).
    const created = r.action === "create";
    const restorable = created ? []
      : r.changes.filter((x) => ROLLBACK_FIELDS.includes(x.field) && x.hasOld);
    const rb = canEdit && restorable.length ? h("button", { type: "button", class: "btn btn-sm", onclick: (ev) => rollback(c, r, restorable, ev.currentTarget) }, t("rollback")) : null;
    const actionKey = `action_${r.action}`;
    return h("li", { class: "revision", "data-revision-version": r.version ?? "" },
      h("div", { class: "revision-head" },
        h("span", { class: "revision-version" }, r.version != null ? `v${r.version}` : "—"),
        badge(t(actionKey) === actionKey ? String(r.action || "—") : t(actionKey), "neutral"),
        h("span", { class: "revision-actor" }, r.actor || "—"),
        h("time", { datetime: r.at || "" }, fmtTime(r.at)), rb),
      r.changes.length ? h("table", { class: "table table-compact" },
        // A creation has only values: no "old" column of nulls to cross out.
        h("thead", {}, h("tr", {}, (created ? [t("field"), t("rev_value")] : [t("field"), t("old_value"), t("new_value")])
          .map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, r.changes.map((x) => h("tr", {},
          h("th", { scope: "row", class: "mono", "data-field": x.field }, fieldLabel(x.field)),
          KEY_FIELDS.has(x.field) ? h("td", { colspan: created ? 1 : 2, class: "muted" }, created ? t("key_set_on_create") : t("key_changed"))
            : [created ? null : h("td", { class: "mono diff-old" }, x.hasOld ? show(x.old) : "—"),
              h("td", { class: "mono diff-new" }, x.hasNew ? show(x.new) : "—")]))))
        : null);
  }

  async function rollback(c, r, restorable, btn) {
    const names = restorable.map((x) => x.field).join(", ");
    if (!(await confirmDialog(t("confirm_rollback", { name: c.name, fields: names, version: r.version ?? "?" })))) return;
    setBusy(btn, true);
    try {
      const cur = await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`);
      const payload = { version: cur.version };
      for (const k of WRITABLE) if (cur[k] !== undefined) payload[k] = cur[k];
      if (cur.vendor !== undefined && cur.vendor !== null) payload.vendor = cur.vendor;
      for (const x of restorable) payload[x.field] = x.old;  // api_key is never sent: the key is kept
      const saved = await put(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`, payload);
      toast(t("rolled_back", { version: saved?.version ?? "?" }), "ok");
      await refresh();
      const fresh = configs.find((x) => String(x.id) === String(c.id)) || c;
      history(fresh);
    } catch (e) {
      setBusy(btn, false);
      toast(e.status === 409 ? t("version_conflict") : e.code === "api_key_required" ? t("rollback_needs_key")
        : `${t("error_generic")}${t("colon")}${e.message}`, "error");
    }
  }

  function poolSummary(c) {
    const parts = [];
    if (c.endpoints?.length) parts.push(t("pool_replicas", { n: c.endpoints.length + 1 }));
    if (c.fallback_ids?.length) parts.push(t("pool_fallbacks", { names: c.fallback_ids.map((id) => configs.find((x) => x.id === id)?.name || `#${id}`).join(" → ") }));
    if (c.hedge_after_ms != null) parts.push(t("pool_hedge", { ms: c.hedge_after_ms }));
    if (c.max_in_flight != null) parts.push(t("pool_cap", { n: c.max_in_flight }));
    return parts.length ? h("div", { class: "cell-sub", "data-testid": "pool-summary" }, parts.join(" · ")) : null;
  }

  refresh();
  return () => { alive = false; upstreams.stop(); };
}

const CHECK_KIND = { ok: "ok", warn: "warn", fail: "error", info: "info", skipped: "neutral" };

/** A connection test's answer (POST .../test, stored or unsaved): verdict, checks, endpoints. */
export function testResult(r) {
  const checks = Array.isArray(r.checks) ? r.checks : [];
  const notes = checks.filter((x) => x.status === "warn").length;
  return [h("div", { class: "test-summary" },
    badge(!r.ok ? t("test_failed") : notes ? t("test_ok_notes", { n: notes }) : t("test_ok"),
      !r.ok ? "error" : notes ? "warn" : "ok", { "data-testid": "test-status" }),
    h("dl", { class: "kv-list inline" },
      h("div", { class: "kv" }, h("dt", {}, t("latency")), h("dd", {}, msText(r.latency_ms))),
      h("div", { class: "kv" }, h("dt", {}, t("model")), h("dd", { class: "mono" }, r.model ?? "—")),
      checks.length ? null : h("div", { class: "kv" }, h("dt", {}, t("thinking_suppressed")), h("dd", {},
        r.thinking_suppressed === true ? t("yes") : r.thinking_suppressed === false ? t("no") : "—")))),
  checks.length ? checkList(checks) : null,
  diagnosticBox(r.diagnostic), endpointResults(r.endpoints)];
}

/** What the connection test checked, one line each: its verdict and what it means. */
function checkList(checks) {
  return h("ul", { class: "check-list", "data-testid": "test-checks" }, checks.map((x) => {
    const key = x.status === "skipped" ? "chk_skipped_not_run" : `chk_${x.name}_${x.code}`;
    const vars = x.values && typeof x.values === "object" ? x.values : {};
    const text = t(key, vars) === key ? t("chk_see_diagnostic", { code: x.code }) : t(key, vars);
    return h("li", { class: `check check-${x.status}`, "data-check": x.name, "data-status": x.status },
      badge(t(`chk_status_${x.status}`), CHECK_KIND[x.status] || "neutral"),
      h("span", { class: "check-name" }, t(`chk_${x.name}`)),
      h("span", { class: "check-text" }, text));
  }));
}

/** Tolerant revision shape: changes as {field: {old, new}}, [{field, old, new}], or field names. */
export function normalizeRevision(raw) {
  const r = raw && typeof raw === "object" ? raw : {};
  const changes = [];
  const src = r.changes ?? r.diff ?? r.fields_changed ?? r.fields ?? r.changed_fields;
  if (Array.isArray(src)) {
    for (const x of src) {
      if (typeof x === "string") changes.push({ field: x, hasOld: false, hasNew: false });
      else if (x && typeof x === "object") {
        changes.push({ field: String(x.field ?? x.name ?? "?"), old: x.old ?? x.old_value ?? x.from, new: x.new ?? x.new_value ?? x.to,
          hasOld: "old" in x || "old_value" in x || "from" in x, hasNew: "new" in x || "new_value" in x || "to" in x });
      }
    }
  } else if (src && typeof src === "object") {
    for (const [k, v] of Object.entries(src)) {
      if (v && typeof v === "object" && !Array.isArray(v) && ("old" in v || "new" in v)) {
        changes.push({ field: k, old: v.old, new: v.new, hasOld: "old" in v, hasNew: "new" in v });
      } else if (Array.isArray(v) && v.length === 2) {
        changes.push({ field: k, old: v[0], new: v[1], hasOld: true, hasNew: true });
      } else changes.push({ field: k, new: v, hasOld: false, hasNew: true });
    }
  }
  return { id: r.id, version: r.version ?? r.config_version, action: r.action ?? r.kind ?? r.event,
    actor: r.actor ?? r.who ?? r.updated_by ?? r.user ?? r.username, at: r.at ?? r.when ?? r.created_at ?? r.timestamp, changes };
}
