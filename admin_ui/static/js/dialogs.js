// A modal form dialog (native <dialog>): focus moves in, and back to the opener on close.
import { t } from "./i18n.js";
import { h, nextId } from "./ui.js";

/**
 * formDialog({ title, build }) -> Promise of the value passed to done(value), or null.
 * build(body, done) fills the dialog body; done(value) closes it with that value.
 */
export function formDialog({ title, build, testid }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = nextId("dlg");
    const body = h("div", { class: "dialog-body" });
    const dlg = h("dialog", { class: "dialog", "aria-labelledby": titleId, "data-testid": testid || null });
    let result = null;
    dlg.addEventListener("close", () => {
      dlg.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(result);
    });
    const done = (value) => { result = value; dlg.close(); };
    dlg.append(h("div", { class: "dialog-head" }, h("h2", { id: titleId }, title),
      h("button", { type: "button", class: "btn btn-ghost btn-icon", "aria-label": t("close"), onclick: () => dlg.close() }, "×")),
    body);
    document.body.appendChild(dlg);
    build(body, done);
    dlg.showModal();
    (body.querySelector("[data-autofocus]") || body.querySelector("input, select, textarea, button"))?.focus();
  });
}

/** A strong random password (20 characters from a 62-letter alphabet: ~119 bits). */
export function generatePassword(length = 20) {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  const out = [];
  const buf = new Uint32Array(1);
  while (out.length < length) {
    crypto.getRandomValues(buf);
    // Rejection sampling: no modulo bias.
    if (buf[0] < Math.floor(2 ** 32 / alphabet.length) * alphabet.length) out.push(alphabet[buf[0] % alphabet.length]);
  }
  return out.join("");
}

/** Shows a password once, with a copy button; resolves when closed. */
export function showPasswordOnce(username, password) {
  return formDialog({
    title: t("password_once_title", { name: username }),
    testid: "password-once",
    build(body, done) {
      const value = h("input", { type: "text", readonly: true, class: "mono", value: password, "aria-label": t("new_password"),
        "data-testid": "password-once-value", autocomplete: "off", spellcheck: "false" });
      const copy = h("button", { type: "button", class: "btn", onclick: async () => {
        value.select();
        try { await navigator.clipboard.writeText(password); copy.textContent = t("copied"); } catch { /* selected: Ctrl+C works */ }
      } }, t("copy"));
      body.append(h("p", { class: "banner banner-warn" }, t("password_once_body")),
        h("div", { class: "key-row" }, value, copy),
        h("div", { class: "dialog-actions" }, h("button", { type: "button", class: "btn btn-primary", "data-autofocus": true, onclick: () => done(true) }, t("close"))));
      setTimeout(() => value.select(), 0);
    },
  });
}
