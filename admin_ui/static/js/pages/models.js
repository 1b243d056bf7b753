// #/ai/models: active configuration per tier, the list, edit / activate / delete / test / history.
import { del, get, post, put } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, confirmDialog, diagnosticBox, errorBanner, h, pageHeader, replace, setBusy, toast } from "../ui.js";
import { TIERS, openEditor } from "./model_form.js";
import { openEvaluate } from "./evaluations.js";

// Fields a rollback may restore (never key material, never bookkeeping).
const ROLLBACK_FIELDS = ["tier", "name", "base_url", "model", "api_style", "timeout_s", "max_tokens", "temperature",
  "enable_thinking", "reasoning_effort", "extra_params", "vendor"];
const KEY_FIELDS = new Set(["api_key", "api_key_masked", "has_api_key", "api_key_encrypted", "key"]);
const WRITABLE = ["tier", "name", "base_url", "model", "api_style", "timeout_s", "max_tokens", "temperature",
  "enable_thinking", "reasoning_effort", "extra_params"];

const items = (body) => (Array.isArray(body) ? body : Array.isArray(body?.items) ? body.items : []);
const show = (v) => (v === null || v === undefined ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));

export function render(main, ctx) {
  const activeBox = h("div", { class: "tier-cards", "aria-busy": "true" });
  const listBox = h("div", { class: "table-wrap" });
  const detail = h("section", { class: "panel detail-panel", hidden: true, "aria-live": "polite", "data-testid": "detail-panel" });
  const newBtn = h("button", { type: "button", class: "btn btn-primary", onclick: async () => {
    const saved = await openEditor({});
    if (saved) { toast(t("created", { name: saved.name }), "ok"); refresh(); }
  } }, `+ ${t("new_config")}`);
  main.append(pageHeader(t("models_title"), t("models_intro"), newBtn),
    h("section", { class: "section", "aria-labelledby": "active-h" }, h("h2", { id: "active-h" }, t("active_configs")), activeBox),
    h("section", { class: "section", "aria-labelledby": "list-h" }, h("h2", { id: "list-h" }, t("configs_list")), listBox),
    detail);

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
          h("div", { class: "kv" }, h("dt", {}, "max_tokens"), h("dd", {}, fmtNum(c.max_tokens))),
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
    const act = (label, fn, cls = "btn btn-sm") => h("button", { type: "button", class: cls,
      "aria-label": `${label === t("test_short") ? t("test") : label}: ${c.name}`, onclick: (ev) => fn(ev.currentTarget) }, label);
    return h("tr", { "data-config-id": c.id, class: c.is_active ? "row-active" : "" },
      h("th", { scope: "row" }, h("div", { class: "cell-name" }, c.name), h("div", { class: "cell-sub mono truncate", title: c.base_url }, c.base_url)),
      h("td", {}, tierLabel(c.tier)),
      h("td", { class: "mono" }, c.model, c.vendor ? h("div", { class: "cell-sub" }, c.vendor) : null),
      h("td", { class: "mono" }, c.has_api_key === false || !c.api_key_masked ? h("span", { class: "muted" }, t("key_none")) : c.api_key_masked),
      h("td", {}, c.is_active ? badge(t("active"), "ok") : badge(t("inactive"), "neutral"),
        h("div", { class: "cell-sub", "data-testid": "config-version" }, `${t("version")} ${c.version ?? "?"}`)),
      h("td", {}, h("div", {}, fmtTime(c.updated_at)), c.updated_by ? h("div", { class: "cell-sub" }, c.updated_by) : null),
      h("td", { class: "cell-actions" },
        act(t("edit"), () => edit(c)),
        c.is_active ? null : act(t("activate"), (b) => activate(c, b)),
        act(t("test_short"), (b) => test(c, b)),
        c.tier === "nlu" && !c.is_active ? act(t("eval_action"), () => openEvaluate(c, ctx.navigate)) : null,
        act(t("history"), () => history(c)),
        act(t("delete"), () => remove(c), "btn btn-sm btn-danger-outline")));
  }

  async function edit(c) {
    let fresh = c;
    try { fresh = (await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`)) || c; } catch { /* use the list copy */ }
    const saved = await openEditor({ config: fresh });
    if (saved) { toast(t("saved", { name: saved.name, version: saved.version ?? "?" }), "ok"); refresh(); }
  }

  async function activate(c, btn) {
    if (!(await confirmDialog(t("confirm_activate", { name: c.name, tier: tierLabel(c.tier) })))) return;
    setBusy(btn, true);
    try { await post(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/activate`); toast(t("activated", { name: c.name }), "ok"); }
    catch (e) { toast(`${t("error_generic")}: ${e.message}`, "error"); }
    refresh();
  }

  async function remove(c) {
    if (!(await confirmDialog(t("confirm_delete", { name: c.name }), { confirmLabel: t("delete"), danger: true }))) return;
    try { await del(`/api/admin/llm-configs/${encodeURIComponent(c.id)}`); toast(t("deleted", { name: c.name }), "ok"); }
    catch (e) { toast(`${t("error_generic")}: ${e.message}`, "error"); }
    if (detail.dataset.configId === String(c.id)) detail.hidden = true;
    refresh();
  }

  function openDetail(c, title, ...content) {
    detail.hidden = false;
    detail.dataset.configId = String(c.id);
    const heading = h("h2", { tabindex: "-1" }, title);
    replace(detail, h("div", { class: "panel-head" }, heading,
      h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => { detail.hidden = true; } }, "×")),
    ...content);
    heading.focus();
    return detail;
  }

  async function test(c, btn) {
    const out = h("div", { class: "test-result", "data-testid": "test-result" }, h("p", { class: "muted" }, t("testing")));
    openDetail(c, t("test_result", { name: c.name }), out);
    setBusy(btn, true, t("testing"));
    try {
      const r = (await post(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/test`)) || {};
      replace(out, h("div", { class: "test-summary" },
        badge(r.ok ? t("test_ok") : t("test_failed"), r.ok ? "ok" : "error", { "data-testid": "test-status" }),
        h("dl", { class: "kv-list inline" },
          h("div", { class: "kv" }, h("dt", {}, t("latency")), h("dd", {}, r.latency_ms == null ? "—" : `${fmtNum(r.latency_ms)} ms`)),
          h("div", { class: "kv" }, h("dt", {}, t("model")), h("dd", { class: "mono" }, r.model ?? "—")),
          h("div", { class: "kv" }, h("dt", {}, t("thinking_suppressed")), h("dd", {},
            r.thinking_suppressed === true ? t("yes") : r.thinking_suppressed === false ? t("no") : "—")))),
        diagnosticBox(r.diagnostic));
    } catch (e) {
      replace(out, errorBanner(e), diagnosticBox(e.error?.diagnostic));
    } finally { setBusy(btn, false); }
  }

  async function history(c) {
    const out = h("div", { class: "revisions", "data-testid": "revisions" }, h("p", { class: "muted" }, t("loading")));
    openDetail(c, t("revisions_title", { name: c.name }), out);
    try {
      const revs = items(await get(`/api/admin/llm-configs/${encodeURIComponent(c.id)}/revisions`)).map(normalizeRevision);
      revs.sort((a, b) => (b.version ?? 0) - (a.version ?? 0) || (b.id ?? 0) - (a.id ?? 0));
      if (!revs.length) { replace(out, h("p", { class: "empty" }, t("no_revisions"))); return; }
      replace(out, h("ol", { class: "revision-list" }, revs.map((r) => revisionItem(c, r))));
    } catch (e) { replace(out, errorBanner(e)); }
  }

  function revisionItem(c, r) {
    const restorable = r.changes.filter((x) => ROLLBACK_FIELDS.includes(x.field) && x.hasOld);
    const rb = restorable.length ? h("button", { type: "button", class: "btn btn-sm", onclick: (ev) => rollback(c, r, restorable, ev.currentTarget) }, t("rollback")) : null;
    const actionKey = `action_${r.action}`;
    return h("li", { class: "revision", "data-revision-version": r.version ?? "" },
      h("div", { class: "revision-head" },
        h("span", { class: "revision-version" }, r.version != null ? `v${r.version}` : "—"),
        badge(t(actionKey) === actionKey ? String(r.action || "—") : t(actionKey), "neutral"),
        h("span", { class: "revision-actor" }, r.actor || "—"),
        h("time", { datetime: r.at || "" }, fmtTime(r.at)), rb),
      r.changes.length ? h("table", { class: "table table-compact" },
        h("thead", {}, h("tr", {}, [t("field"), t("old_value"), t("new_value")].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, r.changes.map((x) => h("tr", {},
          h("th", { scope: "row", class: "mono" }, x.field),
          KEY_FIELDS.has(x.field) ? h("td", { colspan: 2, class: "muted" }, t("key_changed"))
            : [h("td", { class: "mono diff-old" }, x.hasOld ? show(x.old) : "—"), h("td", { class: "mono diff-new" }, x.hasNew ? show(x.new) : "—")]))))
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
        : `${t("error_generic")}: ${e.message}`, "error");
    }
  }

  refresh();
  return () => { alive = false; };
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
