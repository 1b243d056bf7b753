// #/ai/global-intents: what a customer can say at any node that overrides it (GET/PUT
// /api/admin/nlu/global-intents). Viewers read the list and try a sentence; operators edit the
// whole list (optimistic locking on `version`: a stale save shows the conflict and a reload).
// "Try a sentence" asks the server's rules (POST .../try) what they answer and why: the
// phrase that hit, or the negation or context that stopped it; while editing, for the form.
import { get, post, put } from "../api.js";
import { fmtTime, labelOf, t } from "../i18n.js";
import { can } from "../roles.js";
import { badge, errorBanner, field, h, pageHeader, replace, setBusy, toast } from "../ui.js";

const URL = "/api/admin/nlu/global-intents";
const ACTIONS = ["end_call", "transfer", "flag"];
const ACTION_KIND = { end_call: "error", transfer: "info", flag: "warn" };
const actionBadge = (a) => badge(labelOf("gi_action_", a), ACTION_KIND[a] || "neutral", { "data-action": a });

export function render(main, ctx) {
  const canEdit = can(ctx?.session?.me, "operator");
  const body = h("section", { class: "section", "data-testid": "global-intents", "aria-live": "polite" });
  const tryResult = h("div", { class: "gi-try-result", "data-testid": "gi-try-result", role: "status", "aria-live": "polite" });
  const sentence = field({ label: t("gi_try_label"), name: "utterance", attrs: { maxlength: 4000, autocomplete: "off", "data-testid": "gi-try-input" } });
  const tryBtn = h("button", { type: "submit", class: "btn", "data-testid": "gi-try" }, t("gi_try"));
  const tryForm = h("form", { class: "gi-try", novalidate: true }, sentence.row, h("div", { class: "form-actions" }, tryBtn), tryResult);
  main.append(pageHeader(t("gi_title"), t("gi_intro")),
    h("section", { class: "section panel", "aria-labelledby": "gi-try-h" }, h("h2", { id: "gi-try-h" }, t("gi_try_title")),
      h("p", { class: "page-intro" }, t("gi_try_intro")), tryForm),
    body);

  let alive = true;
  let list = null;
  let draft = null;  // () => items of the form being edited, or null

  async function load() {
    try {
      list = await get(URL);
      if (alive) read();
    } catch (e) { if (alive) replace(body, errorBanner(e)); }
  }

  function read() {
    draft = null;
    const edit = canEdit ? h("button", { type: "button", class: "btn btn-sm", "data-testid": "gi-edit", onclick: () => editForm(list) }, t("edit")) : null;
    const who = list.version ? t("gi_saved_by", { version: list.version, by: list.updated_by ?? t("none"), time: fmtTime(list.updated_at) }) : t("gi_defaults");
    replace(body,
      h("div", { class: "section-head" }, h("h2", {}, t("gi_list")), edit),
      h("p", { class: "muted", "data-testid": "gi-version" }, who),
      list.items.length ? h("div", { class: "table-wrap" }, h("table", { class: "table", "data-testid": "gi-table" },
        h("caption", { class: "sr-only" }, t("gi_list")),
        h("thead", {}, h("tr", {}, [t("name"), t("gi_action"), t("status"), t("gi_phrases")].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, list.items.map((i) => h("tr", { "data-intent": i.name },
          h("th", { scope: "row" }, h("div", { class: "cell-name mono" }, i.name), h("div", { class: "cell-sub" }, i.description)),
          h("td", {}, actionBadge(i.action)),
          h("td", {}, badge(i.enabled ? t("gi_enabled") : t("gi_disabled"), i.enabled ? "ok" : "neutral")),
          h("td", {}, h("details", {}, h("summary", {}, t("gi_n_phrases", { n: i.phrases.length })),
            h("p", { class: "mono gi-phrases" }, i.phrases.join(" · ")))))))))
        : h("p", { class: "empty" }, t("gi_none")));
  }

  function intentFields(i) {
    const name = field({ label: t("name"), name: "name", value: i.name, required: true, attrs: { maxlength: 64, class: "mono" } });
    const action = field({ label: t("gi_action"), name: "action", value: i.action, options: ACTIONS.map((a) => ({ value: a, label: labelOf("gi_action_", a) })) });
    const enabled = h("input", { type: "checkbox", checked: i.enabled !== false });
    const description = field({ label: t("gi_description"), name: "description", value: i.description, attrs: { maxlength: 500 } });
    const phrases = field({ label: t("gi_phrases"), name: "phrases", type: "textarea", value: (i.phrases || []).join("\n"),
      hint: t("gi_phrases_hint"), attrs: { rows: 6, class: "mono" } });
    const box = h("fieldset", { class: "gi-intent", "data-testid": "gi-intent-form" },
      h("legend", {}, i.name || t("gi_new")), name.row, action.row,
      h("label", { class: "check" }, enabled, " ", t("gi_enabled")), description.row, phrases.row);
    const remove = h("button", { type: "button", class: "btn btn-sm btn-danger-outline", onclick: () => { box.remove(); forms.delete(entry); } }, t("delete"));
    box.append(remove);
    const entry = { box, value: () => ({ name: name.input.value.trim(), action: action.input.value, enabled: enabled.checked,
      description: description.input.value.trim(), phrases: phrases.input.value.split("\n").map((p) => p.trim()).filter(Boolean) }) };
    return entry;
  }

  const forms = new Set();

  function editForm(current, conflict = null) {
    forms.clear();
    const holder = h("div", { class: "gi-intents" });
    const add = (i) => { const e = intentFields(i); forms.add(e); holder.append(e.box); };
    current.items.forEach(add);
    const status = h("div", { class: "form-status", "aria-live": "assertive" }, conflict);
    const save = h("button", { type: "submit", class: "btn btn-primary", "data-testid": "gi-save" }, t("save"));
    const form = h("form", { novalidate: true, "data-testid": "gi-form" }, holder,
      h("button", { type: "button", class: "btn btn-sm", "data-testid": "gi-add", onclick: () => add({ name: "", action: "flag", enabled: true, phrases: [] }) }, t("gi_add")),
      status, h("div", { class: "form-actions" }, h("button", { type: "button", class: "btn", onclick: () => read() }, t("cancel")), save));
    draft = () => [...forms].map((e) => e.value());
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      replace(status);
      setBusy(save, true);
      try {
        list = await put(URL, { items: draft(), version: current.version });
        toast(t("gi_saved", { version: list.version }), "ok");
        read();
      } catch (e) {
        setBusy(save, false);
        if (e.status === 409) {
          const reload = h("button", { type: "button", class: "btn btn-sm", onclick: async () => {
            try {
              list = await get(URL);
              // Cancelled while it loaded: the list shows the latest, the form is not reopened.
              if (alive) { if (body.contains(form)) editForm(list); else if (!draft) read(); }
            } catch (err) { replace(status, errorBanner(err)); }
          } }, t("version_conflict_reload"));
          replace(status, h("div", { class: "banner banner-warn", role: "alert", "data-testid": "gi-conflict" }, h("p", {}, t("gi_conflict")), reload));
          reload.focus();
          return;
        }
        replace(status, errorBanner(e));  // the server's words name the intent and phrase
      }
    });
    replace(body, h("div", { class: "section-head" }, h("h2", { tabindex: "-1" }, t("gi_edit"))), form);
  }

  tryForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const utterance = sentence.input.value;
    if (!utterance.trim()) { sentence.setError(t("required")); sentence.input.focus(); return; }
    setBusy(tryBtn, true);
    try {
      const got = await post(`${URL}/try`, draft ? { utterance, items: draft() } : { utterance });
      showTried(utterance, got);
    } catch (e) { replace(tryResult, errorBanner(e)); } finally { setBusy(tryBtn, false); }
  });

  function showTried(utterance, got) {
    const hit = got.global_intent;
    const head = hit
      ? h("p", { class: "gi-hit", "data-testid": "gi-hit", "data-intent": hit.intent },
        t("gi_hit", { intent: hit.intent, phrase: hit.phrase, text: hit.text }), " ", actionBadge(hit.action))
      : h("p", { class: "gi-miss", "data-testid": "gi-miss" }, t(got.stopped.length ? "gi_miss_stopped" : "gi_miss"));
    const stops = got.stopped.map((s) => h("li", { "data-testid": "gi-stop", "data-reason": s.reason },
      t(s.reason === "negated" ? "gi_stop_negated" : "gi_stop_context",
        { intent: s.intent, phrase: s.phrase, text: utterance.slice(s.start, s.end), cue: s.cue })));
    const others = got.hits.filter((x) => !hit || x.intent !== hit.intent).map((x) => h("li", {}, t("gi_also", { intent: x.intent, phrase: x.phrase })));
    replace(tryResult, head, stops.length || others.length ? h("ul", { class: "gi-stops" }, stops, others) : null,
      draft ? h("p", { class: "muted" }, t("gi_try_draft")) : null);
  }

  load();
  return () => { alive = false; };
}
