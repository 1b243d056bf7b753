// #/admin/service-keys (admins): one key per dialer cluster or campaign, with its tiers and
// limits. A new key is shown once (only its hash is stored); changes and revocations hold on
// every worker within a second.
import { del, get, post, put } from "../api.js";
import { fmtNum, fmtTime, t, tierLabel } from "../i18n.js";
import { badge, confirmDialog, errorBanner, field, h, pageHeader, replace, setBusy, toast } from "../ui.js";
import { formDialog } from "../dialogs.js";

const TIERS = ["nlu", "chat", "script"];
const LIMITS = ["rpm", "max_in_flight", "daily_tokens"];

export function render(main) {
  const listBox = h("div", { class: "table-wrap", "aria-busy": "true" });
  const newBtn = h("button", { type: "button", class: "btn btn-primary", "data-testid": "new-key", onclick: () => edit(null) }, `+ ${t("new_service_key")}`);
  main.append(pageHeader(t("service_keys_title"), t("service_keys_intro"), newBtn), h("section", { class: "section" }, listBox));
  let alive = true;

  async function refresh() {
    try {
      const body = await get("/api/admin/service-keys");
      if (alive) renderList(body?.items || []);
    } catch (e) { if (alive) replace(listBox, errorBanner(e)); }
    listBox.removeAttribute("aria-busy");
  }

  function renderList(keys) {
    if (!keys.length) { replace(listBox, h("p", { class: "muted", "data-testid": "keys-empty" }, t("service_keys_none"))); return; }
    replace(listBox, h("table", { class: "table", "data-testid": "keys-table" },
      h("caption", { class: "sr-only" }, t("service_keys_title")),
      h("thead", {}, h("tr", {}, [t("name"), t("key_tiers"), t("key_campaign"), t("key_limits"), t("key_expires"), t("user_status"), t("key_last_used"), t("actions")]
        .map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, keys.map(row))));
  }

  function row(k) {
    const act = (label, fn, cls = "btn btn-sm") => h("button", { type: "button", class: cls, "aria-label": `${label}: ${k.name}`, onclick: (ev) => fn(ev.currentTarget) }, label);
    const limits = LIMITS.filter((l) => k[l] != null).map((l) => `${t(`key_${l}`)} ${fmtNum(k[l])}`);
    return h("tr", { "data-key-id": String(k.id), class: k.enabled ? "" : "row-disabled" },
      h("th", { scope: "row" }, h("div", { class: "cell-name" }, k.name), h("div", { class: "cell-sub mono" }, `${k.prefix}…`)),
      h("td", {}, k.tiers.map(tierLabel).join(", ")),
      h("td", {}, k.campaign ?? "—"),
      h("td", { "data-testid": "key-limits" }, limits.length ? limits.join(" · ") : h("span", { class: "muted" }, t("key_unlimited"))),
      h("td", {}, k.expires_at ? fmtTime(k.expires_at) : h("span", { class: "muted" }, t("never"))),
      h("td", {}, k.enabled ? badge(t("enabled"), "ok") : badge(t("disabled"), "error")),
      h("td", {}, k.last_used_at ? fmtTime(k.last_used_at) : h("span", { class: "muted" }, t("never"))),
      h("td", {}, h("div", { class: "cell-actions" },
        act(t("edit"), () => edit(k)),
        act(k.enabled ? t("disable") : t("enable"), (b) => setEnabled(k, !k.enabled, b)),
        act(t("revoke_key"), () => revoke(k), "btn btn-sm btn-danger-outline"))));
  }

  async function setEnabled(k, enabled, button) {
    setBusy(button, true);
    try { await put(`/api/admin/service-keys/${k.id}`, { enabled, version: k.version }); await refresh(); }
    catch (e) { setBusy(button, false); toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
  }

  async function revoke(k) {
    if (!(await confirmDialog(t("revoke_key_confirm", { name: k.name }), { confirmLabel: t("revoke_key"), danger: true }))) return;
    try { await del(`/api/admin/service-keys/${k.id}`); toast(t("key_revoked", { name: k.name }), "ok"); await refresh(); }
    catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
  }

  async function edit(k) {
    const saved = await formDialog({ title: k ? `${t("edit")} · ${k.name}` : t("new_service_key"), testid: "key-dialog", build: (body, done) => {
      const f = {
        name: field({ label: t("name"), name: "name", value: k?.name, required: true, attrs: { maxlength: 128, autocomplete: "off", "data-autofocus": true } }),
        campaign: field({ label: t("key_campaign"), name: "campaign", value: k?.campaign ?? "", hint: t("key_campaign_hint"), attrs: { maxlength: 64, autocomplete: "off", spellcheck: "false" } }),
      };
      const boxes = TIERS.map((tier) => {
        const id = `key-tier-${tier}`;
        const box = h("input", { type: "checkbox", id, name: "tiers", value: tier, checked: k ? k.tiers.includes(tier) : true });
        return { tier, box, row: h("span", { class: "field-check" }, box, h("label", { for: id }, tierLabel(tier))) };
      });
      const tiersErr = h("p", { class: "field-error", hidden: true });
      f.tiers = { row: h("fieldset", { class: "field" }, h("legend", {}, t("key_tiers")), boxes.map((b) => b.row), tiersErr),
        input: boxes[0].box, setError: (m) => { tiersErr.textContent = m || ""; tiersErr.hidden = !m; } };
      for (const l of LIMITS) f[l] = field({ label: t(`key_${l}`), name: l, type: "number", value: k?.[l] ?? "", hint: t(`key_${l}_hint`), attrs: { min: "1", step: "1", inputmode: "numeric" } });
      f.expires_at = field({ label: t("key_expires"), name: "expires_at", type: "datetime-local", value: k?.expires_at ? toLocalInput(k.expires_at) : "" });
      const status = h("div", { class: "form-status", role: "alert" });
      const submit = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
      const form = h("form", { novalidate: true }, f.name.row, f.tiers.row, f.campaign.row,
        h("div", { class: "grid-3" }, LIMITS.map((l) => f[l].row)), f.expires_at.row, status,
        h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn", onclick: () => done(null) }, t("cancel")), submit));
      body.append(form);
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        Object.values(f).forEach((x) => x.setError(""));
        status.replaceChildren();
        const num = (l) => (f[l].input.value.trim() === "" ? null : Number(f[l].input.value));
        const when = f.expires_at.input.value;
        const payload = { name: f.name.input.value.trim(), tiers: boxes.filter((b) => b.box.checked).map((b) => b.tier),
          campaign: f.campaign.input.value.trim() || null, expires_at: when ? new Date(when).toISOString() : null };
        for (const l of LIMITS) payload[l] = num(l);
        if (k) payload.version = k.version;
        setBusy(submit, true);
        try {
          done(k ? await put(`/api/admin/service-keys/${k.id}`, payload) : await post("/api/admin/service-keys", payload));
        } catch (e) {
          setBusy(submit, false);
          const known = Object.entries(e.fieldMap ? e.fieldMap() : {}).map(([n, m]) => [n.split(".")[0], m]).filter(([n]) => f[n]);
          known.forEach(([n, m]) => f[n].setError(m));
          if (known.length) f[known[0][0]].input.focus(); else status.replaceChildren(errorBanner(e));
        }
      });
    } });
    if (!saved) return;
    if (saved.key) await showKeyOnce(saved);
    else toast(t("key_saved", { name: saved.name }), "ok");
    await refresh();
  }

  refresh();
  return () => { alive = false; };
}

function toLocalInput(iso) {
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** The new key, shown this once with a copy button. */
function showKeyOnce(created) {
  return formDialog({ title: t("key_once_title", { name: created.name }), testid: "key-once", build(body, done) {
    const value = h("input", { type: "text", readonly: true, class: "mono", value: created.key, "aria-label": t("key_once_title", { name: created.name }),
      "data-testid": "key-once-value", autocomplete: "off", spellcheck: "false" });
    const copy = h("button", { type: "button", class: "btn", onclick: async () => {
      value.select();
      try { await navigator.clipboard.writeText(created.key); copy.textContent = t("copied"); } catch { /* selected: Ctrl+C works */ }
    } }, t("copy"));
    body.append(h("p", { class: "banner banner-warn" }, t("key_once_body")), h("div", { class: "key-row" }, value, copy),
      h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn btn-primary", "data-autofocus": true, onclick: () => done(true) }, t("close"))));
    setTimeout(() => value.select(), 0);
  } });
}
