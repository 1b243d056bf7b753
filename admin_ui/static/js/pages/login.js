// #/login: username + password -> POST /api/auth/login (204 + HttpOnly cookie).
import { post } from "../api.js";
import { t } from "../i18n.js";
import { h, field, setBusy } from "../ui.js";

export function render(main, ctx) {
  const user = field({ label: t("username"), name: "username", required: true,
    attrs: { autocomplete: "username", autocapitalize: "off", spellcheck: "false", "data-autofocus": true } });
  const pass = field({ label: t("password"), name: "password", type: "password", required: true,
    attrs: { autocomplete: "current-password" } });
  const status = h("div", { class: "form-status", role: "alert", "aria-live": "assertive" });
  const submit = h("button", { type: "submit", class: "btn btn-primary btn-block" }, t("login_submit"));
  const titleId = "login-title";

  const form = h("form", { class: "login-form", "aria-labelledby": titleId, novalidate: true }, user.row, pass.row, status, submit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    status.textContent = "";
    const username = user.input.value.trim();
    const password = pass.input.value;
    user.setError(username ? "" : t("required"));
    pass.setError(password ? "" : t("required"));
    if (!username || !password) {
      status.textContent = t("login_missing");
      (username ? pass.input : user.input).focus();
      return;
    }
    setBusy(submit, true, t("login_busy"));
    try {
      await post("/api/auth/login", { username, password }, { quiet401: true });
      pass.input.value = "";
      await ctx.onLogin();
    } catch (e) {
      setBusy(submit, false);
      if (e.status === 401 || e.status === 403) status.textContent = t("login_failed");
      else if (e.code === "network_error") status.textContent = t("network_error");
      else status.textContent = e.message || t("error_generic");
      pass.input.select();
      pass.input.focus();
    }
  });

  main.append(h("section", { class: "login-card" },
    h("div", { class: "login-brand", "aria-hidden": "true" }, t("app_title")),
    h("h1", { id: titleId, class: "page-title", tabindex: "-1" }, t("login_title")),
    h("p", { class: "page-intro" }, t("login_subtitle")),
    form));
}
