// #/admin/people (admins): the users, their roles and state; create, change role, disable,
// reset password (a generated password shown once), delete. The server ends a user's
// sessions when they lose access and keeps the last enabled admin.
import { del, get, post, put } from "../api.js";
import { fmtTime, t } from "../i18n.js";
import { badge, confirmDialog, errorBanner, field, h, pageHeader, replace, setBusy, toast } from "../ui.js";
import { formDialog, generatePassword, showPasswordOnce } from "../dialogs.js";

const ROLES = ["viewer", "operator", "admin"];
const roleLabel = (r) => t(`role_${r}`);
const roleOptions = () => ROLES.map((r) => ({ value: r, label: roleLabel(r) }));

function explain(e) {
  if (["last_admin", "user_exists", "managed_by_environment"].includes(e?.code)) return t(e.code);
  return `${t("error_generic")}${t("colon")}${e?.message || e}`;
}

export function render(main, ctx) {
  const listBox = h("div", { class: "table-wrap", "aria-busy": "true" });
  const newBtn = h("button", { type: "button", class: "btn btn-primary", onclick: create }, `+ ${t("new_user")}`);
  main.append(pageHeader(t("people_title"), t("people_intro"), newBtn),
    h("section", { class: "section" }, listBox),
    h("section", { class: "section role-legend", "aria-label": t("role") },
      h("dl", { class: "kv-list" }, ROLES.map((r) => h("div", { class: "kv" },
        h("dt", {}, badge(roleLabel(r), r === "admin" ? "info" : "neutral")), h("dd", {}, t(`role_${r}_hint`)))))));
  let alive = true;
  const me = ctx.session.me?.username;

  async function refresh() {
    try {
      const body = await get("/api/admin/users");
      if (alive) renderList(body?.items || []);
    } catch (e) { if (alive) replace(listBox, errorBanner(e)); }
    listBox.removeAttribute("aria-busy");
  }

  function renderList(users) {
    replace(listBox, h("table", { class: "table", "data-testid": "users-table" },
      h("caption", { class: "sr-only" }, t("people_title")),
      h("thead", {}, h("tr", {}, [t("username"), t("role"), t("user_status"), t("created_at"), t("last_login"), t("actions")]
        .map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, users.map(row))));
  }

  function row(u) {
    const env = u.source === "env";
    const act = (label, fn, cls = "btn btn-sm") => h("button", { type: "button", class: cls,
      "aria-label": `${label}: ${u.username}`, onclick: (ev) => fn(ev.currentTarget) }, label);
    return h("tr", { "data-username": u.username, class: u.disabled ? "row-disabled" : "" },
      h("th", { scope: "row" }, h("div", { class: "cell-name" }, u.username, u.username === me ? h("span", { class: "muted" }, ` ${t("you_marker")}`) : null),
        h("div", { class: "cell-sub" }, t(`source_${u.source}`) === `source_${u.source}` ? u.source : t(`source_${u.source}`))),
      h("td", { "data-testid": "user-role" }, badge(roleLabel(u.role), u.role === "admin" ? "info" : "neutral")),
      h("td", {}, u.disabled ? badge(t("disabled"), "error") : badge(t("enabled"), "ok")),
      h("td", {}, fmtTime(u.created_at)),
      h("td", {}, u.last_login_at ? fmtTime(u.last_login_at) : h("span", { class: "muted" }, t("never"))),
      h("td", {}, env ? h("span", { class: "muted" }, t("bootstrap_user")) : h("div", { class: "cell-actions" },
        act(t("change_role"), () => changeRole(u)),
        u.disabled ? act(t("enable"), (b) => setDisabled(u, false, b)) : act(t("disable"), (b) => setDisabled(u, true, b)),
        act(t("reset_password"), (b) => resetPassword(u, b)),
        act(t("delete"), () => remove(u), "btn btn-sm btn-danger-outline"))));
  }

  async function create() {
    const made = await formDialog({ title: t("new_user"), testid: "user-dialog", build: (body, done) => {
      const name = field({ label: t("username"), name: "username", required: true, hint: t("username_hint"),
        attrs: { autocomplete: "off", autocapitalize: "off", spellcheck: "false", maxlength: 64, "data-autofocus": true } });
      const role = field({ label: t("role"), name: "role", value: "viewer", options: roleOptions() });
      const pass = field({ label: t("password"), name: "password", required: true, hint: t("password_hint"), value: generatePassword(),
        attrs: { autocomplete: "off", spellcheck: "false", class: "mono" } });
      const regen = h("button", { type: "button", class: "btn btn-sm", onclick: () => { pass.input.value = generatePassword(); } }, t("generate_password"));
      pass.row.append(h("div", {}, regen));
      const status = h("div", { class: "form-status", role: "alert" });
      const submit = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
      const fields = { username: name, role, password: pass };
      const form = h("form", { novalidate: true }, name.row, role.row, pass.row, status,
        h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn", onclick: () => done(null) }, t("cancel")), submit));
      body.append(form);
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        Object.values(fields).forEach((f) => f.setError(""));
        status.replaceChildren();
        const payload = { username: name.input.value.trim(), role: role.input.value, password: pass.input.value };
        setBusy(submit, true);
        try {
          const user = await post("/api/admin/users", payload);
          done({ user, password: payload.password });
        } catch (e) {
          setBusy(submit, false);
          if (e.code === "user_exists") { name.setError(t("user_exists")); name.input.focus(); return; }
          const map = e.fieldMap ? e.fieldMap() : {};
          const known = Object.entries(map).filter(([k]) => fields[k]);
          known.forEach(([k, msg]) => fields[k].setError(msg));
          if (known.length) fields[known[0][0]].input.focus();
          else status.replaceChildren(errorBanner(e));
        }
      });
    } });
    if (!made) return;
    toast(t("user_created", { name: made.user.username }), "ok");
    await showPasswordOnce(made.user.username, made.password);
    refresh();
  }

  async function changeRole(u) {
    const chosen = await formDialog({ title: `${t("change_role")} · ${u.username}`, testid: "role-dialog", build: (body, done) => {
      const role = field({ label: t("role"), name: "role", value: u.role, options: roleOptions(), attrs: { "data-autofocus": true } });
      const hint = h("p", { class: "field-hint" }, t(`role_${u.role}_hint`));
      role.input.addEventListener("change", () => { hint.textContent = t(`role_${role.input.value}_hint`); });
      const form = h("form", {}, role.row, hint,
        h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn", onclick: () => done(null) }, t("cancel")),
          h("button", { type: "submit", class: "btn btn-primary" }, t("save"))));
      form.addEventListener("submit", (ev) => { ev.preventDefault(); done(role.input.value); });
      body.append(form);
    } });
    if (!chosen || chosen === u.role) return;
    try {
      await put(`/api/admin/users/${encodeURIComponent(u.username)}`, { role: chosen });
      toast(t("role_changed", { name: u.username, role: roleLabel(chosen) }), "ok");
    } catch (e) { toast(explain(e), "error"); }
    refresh();
  }

  async function setDisabled(u, disabled, btn) {
    if (disabled && !(await confirmDialog(t("confirm_disable", { name: u.username }), { confirmLabel: t("disable"), danger: true }))) return;
    setBusy(btn, true);
    try {
      await put(`/api/admin/users/${encodeURIComponent(u.username)}`, { disabled });
      toast(t(disabled ? "user_disabled" : "user_enabled", { name: u.username }), "ok");
    } catch (e) { toast(explain(e), "error"); }
    refresh();
  }

  async function resetPassword(u, btn) {
    if (!(await confirmDialog(t("confirm_reset", { name: u.username }), { confirmLabel: t("reset_password") }))) return;
    const password = generatePassword();
    setBusy(btn, true);
    try {
      await put(`/api/admin/users/${encodeURIComponent(u.username)}`, { password });
      setBusy(btn, false);
      await showPasswordOnce(u.username, password);
    } catch (e) { setBusy(btn, false); toast(explain(e), "error"); }
    refresh();
  }

  async function remove(u) {
    if (!(await confirmDialog(t("confirm_delete_user", { name: u.username }), { confirmLabel: t("delete"), danger: true }))) return;
    try {
      await del(`/api/admin/users/${encodeURIComponent(u.username)}`);
      toast(t("user_deleted", { name: u.username }), "ok");
    } catch (e) { toast(explain(e), "error"); }
    refresh();
  }

  refresh();
  return () => { alive = false; };
}
