// #/ai/lexicons: the speech guard's lexicons (GET/PUT/DELETE /api/admin/lexicons*). The list
// beside one lexicon (`?name=`): its action, replacement, terms and allowed look-alikes.
// Operators create, edit (optimistic locking on `version`), import a term list (one per
// line, .txt or the first column of a .csv) and delete; everyone exports the terms and tries
// a sentence against the live lexicons (POST /api/admin/lexicons/try).
import { del, get, post, put } from "../api.js";
import { fmtNum, fmtTime, labelOf, t } from "../i18n.js";
import { can } from "../roles.js";
import { badge, confirmDialog, errorBanner, field, h, pageHeader, replace, setBusy, toast } from "../ui.js";

const ACTIONS = ["replace", "drop", "end_turn"];
const ACTION_KIND = { replace: "warn", drop: "neutral", end_turn: "error", mask_pii: "ok" };
const lines = (text) => String(text || "").split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
const url = (name) => `/api/admin/lexicons/${encodeURIComponent(name)}`;

/** Terms of an imported file: one per line; a .csv gives its first column. */
export function parseTermList(text, filename = "") {
  const csv = /\.csv$/i.test(filename);
  return lines(text).map((line) => (csv ? line.split(",")[0].replace(/^"|"$/g, "").trim() : line)).filter(Boolean);
}

export const actionBadge = (a) => badge(labelOf("lex_action_", a), ACTION_KIND[a] || "neutral", { "data-action": a ?? "" });

export function render(main, ctx) {
  const canEdit = can(ctx?.session?.me, "operator");
  const tbody = h("tbody", {});
  const listStatus = h("div", { class: "list-status", role: "status", "aria-live": "polite" });
  const detail = h("section", { class: "panel draft-detail", "aria-live": "polite", "data-testid": "lexicon-detail" },
    h("p", { class: "muted" }, t("lex_pick")));
  const newBtn = canEdit ? h("button", { type: "button", class: "btn btn-primary", "data-testid": "lexicon-new",
    onclick: () => editForm(null) }, t("lex_new")) : null;
  main.append(pageHeader(t("lex_title"), t("lex_intro"), newBtn),
    h("div", { class: "drafts-grid" },
      h("section", { class: "section", "aria-label": t("lex_title") },
        h("div", { class: "table-wrap" }, h("table", { class: "table", "data-testid": "lexicons-table" },
          h("caption", { class: "sr-only" }, t("lex_title")),
          h("thead", {}, h("tr", {}, [t("lex_name"), t("lex_action"), t("lex_terms")]
            .map((x) => h("th", { scope: "col" }, x)))),
          tbody)),
        h("div", { class: "list-foot" }, listStatus)),
      detail),
    tryBox());

  let alive = true;
  let shown = null;
  let items = [];

  async function loadList() {
    try {
      const body = await get("/api/admin/lexicons");
      if (!alive) return;
      items = body?.items || [];
      replace(tbody, items.map(listRow));
      listStatus.textContent = items.length ? t("lex_n", { n: fmtNum(items.length) }) : t("lex_none");
      markShown();
    } catch (e) { if (alive) replace(listStatus, errorBanner(e)); }
  }

  function listRow(x) {
    return h("tr", { "data-lexicon": x.name },
      h("td", {}, h("a", { href: `#/ai/lexicons?name=${encodeURIComponent(x.name)}`, class: "mono",
        onclick: (ev) => { ev.preventDefault(); open(x.name); } }, x.name),
        h("div", { class: "cell-sub" }, `v${x.version} · ${fmtTime(x.updated_at)}${x.updated_by ? ` · ${x.updated_by}` : ""}`)),
      h("td", { class: "nowrap" }, actionBadge(x.action)),
      h("td", { class: "num" }, fmtNum(x.terms.length)));
  }

  function markShown() {
    tbody.querySelectorAll("tr").forEach((tr) => tr.classList.toggle("selected", tr.dataset.lexicon === shown));
  }

  function open(name) { ctx.setQuery({ name }); load(name); }

  async function load(name, focus = true) {
    shown = name;
    markShown();
    try {
      const x = await get(url(name));
      if (alive && shown === name) read(x, focus);
    } catch (e) { if (alive) replace(detail, errorBanner(e)); }
  }

  function exportTerms(x) {
    const blob = new Blob([`${x.terms.join("\n")}\n`], { type: "text/plain;charset=utf-8" });
    const a = h("a", { href: URL.createObjectURL(blob), download: `${x.name}.txt`, hidden: true });
    document.body.append(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  }

  function read(x, focus = true) {
    const head = h("h2", { tabindex: "-1", "data-testid": "lexicon-heading" }, x.name);
    const actions = h("div", { class: "page-actions" },
      h("button", { type: "button", class: "btn btn-sm", "data-testid": "lexicon-export", onclick: () => exportTerms(x) }, t("lex_export")),
      canEdit ? h("button", { type: "button", class: "btn btn-sm", "data-testid": "lexicon-edit", onclick: () => editForm(x) }, t("edit")) : null,
      canEdit ? h("button", { type: "button", class: "btn btn-sm btn-danger-outline", onclick: () => remove(x) }, t("delete")) : null);
    replace(detail,
      h("div", { class: "panel-head" }, head, actions),
      h("dl", { class: "kv-list inline" },
        h("div", { class: "kv" }, h("dt", {}, t("lex_action")), h("dd", {}, actionBadge(x.action))),
        h("div", { class: "kv" }, h("dt", {}, t("version")), h("dd", {}, String(x.version))),
        h("div", { class: "kv" }, h("dt", {}, t("updated")), h("dd", {}, `${fmtTime(x.updated_at)}${x.updated_by ? ` · ${x.updated_by}` : ""}`))),
      x.replacement ? h("p", {}, h("strong", {}, `${t("lex_replacement")}${t("colon")}`), h("span", { class: "sentence", "data-testid": "lexicon-replacement" }, x.replacement)) : null,
      h("h3", {}, t("lex_terms_n", { n: fmtNum(x.terms.length) })),
      h("pre", { class: "script-output", tabindex: "0", "data-testid": "lexicon-terms", "aria-label": t("lex_terms") }, x.terms.join("\n")),
      h("h3", {}, t("lex_allow_n", { n: fmtNum(x.allow.length) })),
      x.allow.length ? h("pre", { class: "script-output", tabindex: "0", "data-testid": "lexicon-allow", "aria-label": t("lex_allow") }, x.allow.join("\n"))
        : h("p", { class: "muted" }, t("none")));
    if (focus) head.focus();
  }

  function editForm(x, conflict = null) {
    const name = x ? null : field({ label: t("lex_name"), name: "name", required: true, hint: t("lex_name_hint"),
      attrs: { maxlength: 64, autocomplete: "off", pattern: "[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}" } });
    const action = field({ label: t("lex_action"), name: "action", value: x?.action || "replace",
      options: ACTIONS.map((a) => ({ value: a, label: labelOf("lex_action_", a) })) });
    const replacement = field({ label: t("lex_replacement"), name: "replacement", value: x?.replacement || "",
      hint: t("lex_replacement_hint"), attrs: { maxlength: 500 } });
    const terms = field({ label: t("lex_terms"), name: "terms", type: "textarea", value: (x?.terms || []).join("\n"),
      required: true, hint: t("lex_terms_hint"), attrs: { rows: 10, class: "mono" } });
    const allow = field({ label: t("lex_allow"), name: "allow", type: "textarea", value: (x?.allow || []).join("\n"),
      hint: t("lex_allow_hint"), attrs: { rows: 4, class: "mono" } });
    const file = h("input", { type: "file", accept: ".txt,.csv,text/plain,text/csv", hidden: true, "data-testid": "lexicon-import-file" });
    file.addEventListener("change", async () => {
      const f = file.files && file.files[0];
      if (!f) return;
      const got = parseTermList(await f.text(), f.name);
      terms.input.value = got.join("\n");
      terms.input.dispatchEvent(new Event("input"));
      toast(t("lex_imported", { n: fmtNum(got.length) }), "ok");
      file.value = "";
    });
    const importBtn = h("button", { type: "button", class: "btn btn-sm", "data-testid": "lexicon-import", onclick: () => file.click() }, t("lex_import"));
    const syncReplacement = () => { replacement.row.hidden = action.input.value !== "replace"; };
    action.input.addEventListener("change", syncReplacement);
    syncReplacement();
    const status = h("div", { class: "form-status", "aria-live": "assertive" }, conflict);
    const save = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
    const byName = { name, action, replacement, terms, allow };
    const form = h("form", { class: "draft-form", novalidate: true, "data-testid": "lexicon-form" },
      name?.row, action.row, replacement.row, terms.row, h("div", { class: "form-actions" }, importBtn, file), allow.row, status,
      h("div", { class: "form-actions" }, h("button", { type: "button", class: "btn", onclick: () => (x ? read(x) : replace(detail, h("p", { class: "muted" }, t("lex_pick")))) }, t("cancel")), save));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      replace(status);
      const lexName = x ? x.name : name.input.value.trim();
      let bad = null;
      if (name) { const ok = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(lexName); name.setError(ok ? "" : t(lexName ? "lex_name_hint" : "required")); bad = ok ? null : name.input; }
      const termList = lines(terms.input.value);
      terms.setError(termList.length ? "" : t("required"));
      bad = bad || (termList.length ? null : terms.input);
      const replace_ = action.input.value === "replace";
      const repl = replacement.input.value.trim();
      replacement.setError(replace_ && !repl ? t("required") : "");
      bad = bad || (replace_ && !repl ? replacement.input : null);
      if (bad) { bad.focus(); return; }
      const body = { terms: termList, allow: lines(allow.input.value), action: action.input.value };
      if (replace_) body.replacement = repl;
      if (x) body.version = x.version;
      setBusy(save, true);
      try {
        const saved = await put(url(lexName), body);
        toast(t("lex_saved", { name: saved.name, version: saved.version }), "ok");
        shown = saved.name;
        ctx.setQuery({ name: saved.name });
        read(saved);
        loadList();
      } catch (e) {
        setBusy(save, false);
        if (e.status === 409) {
          const reload = h("button", { type: "button", class: "btn btn-sm", onclick: async () => {
            try {
              const fresh = await get(url(lexName));
              // Cancelled while it loaded: the lexicon shows its latest version, no form again.
              if (detail.contains(form)) editForm(fresh);
              else if (alive && shown === fresh.name && !detail.querySelector("form")) read(fresh, false);
            } catch (err) { replace(status, errorBanner(err)); }
          } }, t("version_conflict_reload"));
          replace(status, h("div", { class: "banner banner-warn", role: "alert", "data-testid": "lexicon-conflict" }, h("p", {}, t("lex_conflict")), reload));
          reload.focus();
          return;
        }
        const fields = e.status === 422 ? e.fieldMap() : {};
        let shownField = false;
        for (const [key, msg] of Object.entries(fields)) {
          const f = byName[key.split(/[.[]/)[0]];
          if (f) { f.setError(msg); shownField = true; }
        }
        if (!shownField) replace(status, errorBanner(e));
      }
    });
    replace(detail, h("div", { class: "panel-head" }, h("h2", { tabindex: "-1" }, x ? t("lex_edit", { name: x.name }) : t("lex_new"))), form);
    (name || terms).input.focus();
  }

  async function remove(x) {
    if (!(await confirmDialog(t("lex_confirm_delete", { name: x.name }), { confirmLabel: t("delete"), danger: true }))) return;
    try {
      await del(`${url(x.name)}?version=${x.version}`);
      toast(t("lex_deleted", { name: x.name }), "ok");
      shown = null;
      ctx.setQuery({});
      replace(detail, h("p", { class: "muted" }, t("lex_pick")));
      loadList();
    } catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
  }

  function tryBox() {
    const text = field({ label: t("lex_try_sentence"), name: "try", type: "textarea", attrs: { rows: 2, maxlength: 2000 } });
    const mask = h("input", { type: "checkbox", id: "lex-try-mask", "data-testid": "lexicon-try-mask" });
    const out = h("div", { "aria-live": "polite", "data-testid": "lexicon-try-result" });
    const go = h("button", { type: "submit", class: "btn", "data-testid": "lexicon-try" }, t("lex_try"));
    const form = h("form", { class: "section panel", novalidate: true, "aria-label": t("lex_try_title") },
      h("h2", {}, t("lex_try_title")), h("p", { class: "muted" }, t("lex_try_intro")), text.row,
      h("div", { class: "field" }, h("label", { for: "lex-try-mask" }, mask, " ", t("lex_try_mask"))),
      h("div", { class: "form-actions" }, go), out);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const sentence = text.input.value.trim();
      text.setError(sentence ? "" : t("required"));
      if (!sentence) { text.input.focus(); return; }
      setBusy(go, true);
      try {
        const r = await post("/api/admin/lexicons/try", { text: sentence, mask_pii: mask.checked });
        replace(out,
          h("p", {}, h("strong", {}, `${t("lex_try_verdict")}${t("colon")}`),
            r.action ? actionBadge(r.action) : badge(t("lex_try_clean"), "ok", { "data-action": "" }),
            r.lexicon ? h("span", { class: "mono" }, ` ${r.lexicon}`) : null),
          h("p", {}, h("strong", {}, `${t("lex_try_spoken")}${t("colon")}`),
            r.spoken === null ? h("span", { "data-testid": "lexicon-try-spoken" }, t("lex_try_silent"))
              : h("span", { class: "sentence", "data-testid": "lexicon-try-spoken" }, r.spoken)),
          r.hits.length ? h("ul", { "data-testid": "lexicon-try-hits" }, r.hits.map((x) => h("li", { class: "sentence" },
            t("lex_try_hit", { lexicon: x.lexicon, term: x.term, text: x.text })))) : null);
      } catch (e) { replace(out, errorBanner(e)); } finally { setBusy(go, false); }
    });
    return form;
  }

  loadList();
  const initial = ctx.query.get("name");
  if (initial) load(initial, false);
  return () => { alive = false; };
}
