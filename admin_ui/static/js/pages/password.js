// "Change my password": POST /api/auth/password {current_password, new_password} -> 204;
// the server ends the user's other sessions. Open to every console user.
import { post } from "../api.js";
import { t } from "../i18n.js";
import { errorBanner, field, h, setBusy, toast } from "../ui.js";
import { formDialog } from "../dialogs.js";

export function openPasswordDialog() {
  return formDialog({ title: t("change_password"), testid: "password-dialog", build });
}

function build(body, done) {
  const current = field({ label: t("current_password"), name: "current_password", type: "password", required: true,
    attrs: { autocomplete: "current-password", "data-autofocus": true } });
  const fresh = field({ label: t("new_password"), name: "new_password", type: "password", required: true,
    hint: t("password_hint"), attrs: { autocomplete: "new-password", minlength: 12 } });
  const again = field({ label: t("confirm_password"), name: "confirm_password", type: "password", required: true,
    attrs: { autocomplete: "new-password" } });
  const status = h("div", { class: "form-status", role: "alert" });
  const submit = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
  const form = h("form", { novalidate: true }, current.row, fresh.row, again.row, status,
    h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn", onclick: () => done(null) }, t("cancel")), submit));
  body.append(form);
  const byName = { current_password: current, new_password: fresh };

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    [current, fresh, again].forEach((f) => f.setError(""));
    status.replaceChildren();
    let bad = false;
    for (const f of [current, fresh, again]) if (!f.input.value) { f.setError(t("required")); bad = true; }
    if (!bad && fresh.input.value.length < 12) { fresh.setError(t("password_hint")); bad = true; }
    if (!bad && fresh.input.value !== again.input.value) { again.setError(t("passwords_differ")); bad = true; }
    if (bad) { form.querySelector("[aria-invalid=true]")?.focus(); return; }
    setBusy(submit, true);
    try {
      await post("/api/auth/password", { current_password: current.input.value, new_password: fresh.input.value });
      toast(t("password_changed"), "ok");
      done(true);
    } catch (e) {
      setBusy(submit, false);
      if (e.code === "wrong_password") { current.setError(t("wrong_password")); current.input.focus(); return; }
      const fields = e.fieldMap ? e.fieldMap() : {};
      let shown = false;
      for (const [name, msg] of Object.entries(fields)) if (byName[name]) { byName[name].setError(msg); shown = true; }
      if (!shown) status.replaceChildren(errorBanner(e.code === "managed_by_environment" ? { message: t("managed_by_environment") } : e));
    }
  });
}
