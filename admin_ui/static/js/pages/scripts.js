// #/ai/scripts: the script drafts (GET/PUT/DELETE /api/admin/scripts*). The list, newest
// first and keyset-paged; one draft read beside it (`?id=N`, also from the playground's
// result): its script, brief, status, model, usage and the model's reasoning. Operators edit
// (title, brief, script; optimistic locking on `version`) and delete; viewers read.
import { del, get, put, qs } from "../api.js";
import { fmtNum, fmtTime, labelOf, t } from "../i18n.js";
import { can } from "../roles.js";
import { badge, confirmDialog, errorBanner, field, h, pageHeader, replace, setBusy, toast } from "../ui.js";

const PAGE = 50;
const STATUS_KIND = { complete: "ok", truncated: "warn" };
const chars = (text) => [...String(text ?? "")].length;

export function render(main, ctx) {
  const canEdit = can(ctx?.session?.me, "operator");
  const tbody = h("tbody", {});
  const listStatus = h("div", { class: "list-status", role: "status", "aria-live": "polite" });
  const olderBtn = h("button", { type: "button", class: "btn", hidden: true, onclick: () => loadList(true) }, t("older_drafts"));
  const detail = h("section", { class: "panel draft-detail", "aria-live": "polite", "data-testid": "draft-detail" },
    h("p", { class: "muted" }, t("draft_pick")));
  main.append(pageHeader(t("drafts_title"), t("drafts_intro")),
    h("div", { class: "drafts-grid" },
      h("section", { class: "section", "aria-label": t("drafts_title") },
        h("div", { class: "table-wrap" }, h("table", { class: "table", "data-testid": "drafts-table" },
          h("caption", { class: "sr-only" }, t("drafts_title")),
          h("thead", {}, h("tr", {}, ["#", t("draft_title"), t("status")]
            .map((x) => h("th", { scope: "col" }, x)))),
          tbody)),
        h("div", { class: "list-foot" }, listStatus, olderBtn)),
      detail));

  let alive = true;
  let nextBefore = null;
  let shown = null;

  async function loadList(more) {
    setBusy(olderBtn, more);
    try {
      const body = await get(`/api/admin/scripts${qs({ limit: PAGE, before_id: more ? nextBefore : "" })}`);
      if (!alive) return;
      if (!more) replace(tbody);
      (body?.items || []).forEach((d) => tbody.append(listRow(d)));
      nextBefore = body?.next_before_id ?? null;
      olderBtn.hidden = nextBefore === null;
      const n = tbody.children.length;
      listStatus.textContent = n ? `${t("n_drafts", { n: fmtNum(n) })}${olderBtn.hidden ? ` · ${t("end_of_drafts")}` : ""}` : t("drafts_none");
      markShown();
    } catch (e) { if (alive) replace(listStatus, errorBanner(e)); } finally { setBusy(olderBtn, false); }
  }

  function listRow(d) {
    return h("tr", { "data-draft-id": d.id },
      h("td", { class: "num" }, h("a", { href: `#/ai/scripts?id=${encodeURIComponent(d.id)}`,
        onclick: (ev) => { ev.preventDefault(); open(d.id); } }, `#${d.id}`)),
      // The list stays narrow beside the draft: model and usage are in the draft itself.
      h("td", {}, h("div", { class: "cell-name" }, d.title),
        h("div", { class: "cell-sub" }, `${t("draft_chars", { n: fmtNum(chars(d.script)) })} · ${fmtTime(d.updated_at)}`
          + (d.updated_by ? ` · ${d.updated_by}` : ""))),
      h("td", { class: "nowrap" }, statusBadge(d.status)));
  }

  function markShown() {
    tbody.querySelectorAll("tr").forEach((tr) => tr.classList.toggle("selected", tr.dataset.draftId === String(shown)));
  }

  function open(id) {
    ctx.setQuery({ id });
    load(id);
  }

  async function load(id, { focus = true } = {}) {
    shown = id;
    markShown();
    if (!id) return;
    try {
      const d = await get(`/api/admin/scripts/${encodeURIComponent(id)}`);
      if (alive && String(shown) === String(id)) read(d, focus);
    } catch (e) { if (alive) replace(detail, errorBanner(e)); }
  }

  function heading(d) {
    return h("h2", { tabindex: "-1", "data-testid": "draft-heading" }, t("draft_heading", { id: d.id, title: d.title }));
  }

  function read(d, focus = true) {
    const u = d.usage || {};
    const head = heading(d);
    const edit = canEdit ? h("button", { type: "button", class: "btn btn-sm", onclick: () => editForm(d) }, t("edit")) : null;
    const remove = canEdit ? h("button", { type: "button", class: "btn btn-sm btn-danger-outline", onclick: () => removeDraft(d) }, t("delete")) : null;
    const reasoning = d.reasoning ? h("details", { class: "draft-reasoning" },
      h("summary", {}, t("draft_show_reasoning", { n: fmtNum(chars(d.reasoning)) })),
      h("pre", { class: "script-output muted" }, d.reasoning)) : null;
    replace(detail,
      h("div", { class: "panel-head" }, head, h("div", { class: "page-actions" }, edit, remove)),
      h("dl", { class: "kv-list inline" },
        h("div", { class: "kv" }, h("dt", {}, t("status")), h("dd", {}, statusBadge(d.status))),
        h("div", { class: "kv" }, h("dt", {}, t("model")), h("dd", { class: "mono" }, d.model ?? t("none"))),
        h("div", { class: "kv" }, h("dt", {}, t("version")), h("dd", {}, String(d.version))),
        h("div", { class: "kv" }, h("dt", {}, t("updated")), h("dd", {}, `${fmtTime(d.updated_at)}${d.updated_by ? ` · ${d.updated_by}` : ""}`)),
        h("div", { class: "kv" }, h("dt", {}, t("usage")), h("dd", {}, t("usage_line", {
          prompt: u.prompt_tokens ?? t("none"), completion: u.completion_tokens ?? t("none"), reasoning: u.reasoning_tokens ?? t("none") })))),
      h("h3", {}, t("brief")), h("p", { class: "draft-brief", "data-testid": "draft-brief" }, d.brief),
      h("h3", {}, t("draft_script")),
      h("pre", { class: "script-output", tabindex: "0", "data-testid": "draft-script", "aria-label": t("draft_script") }, d.script),
      reasoning);
    if (focus) head.focus();
  }

  function editForm(d, conflict = null) {
    const title = field({ label: t("draft_title"), name: "title", value: d.title, required: true, attrs: { maxlength: 200, autocomplete: "off" } });
    const brief = field({ label: t("brief"), name: "brief", type: "textarea", value: d.brief, required: true, attrs: { rows: 3, maxlength: 4000 } });
    const script = field({ label: t("draft_script"), name: "script", type: "textarea", value: d.script, required: true,
      attrs: { rows: 18, class: "mono draft-script-input" } });
    const status = h("div", { class: "form-status", "aria-live": "assertive" }, conflict);
    const save = h("button", { type: "submit", class: "btn btn-primary" }, t("save"));
    const form = h("form", { class: "draft-form", novalidate: true, "data-testid": "draft-form" }, title.row, brief.row, script.row, status,
      h("div", { class: "form-actions" }, h("button", { type: "button", class: "btn", onclick: () => read(d) }, t("cancel")), save));
    const byName = { title, brief, script };
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      replace(status);
      let bad = null;
      for (const f of Object.values(byName)) {
        const empty = !f.input.value.trim();
        f.setError(empty ? t("required") : "");
        bad = bad || (empty ? f.input : null);
      }
      if (bad) { bad.focus(); return; }
      const body = { version: d.version };
      if (title.input.value.trim() !== d.title) body.title = title.input.value.trim();
      if (brief.input.value.trim() !== d.brief) body.brief = brief.input.value.trim();
      if (script.input.value !== d.script) body.script = script.input.value;
      setBusy(save, true);
      try {
        const saved = await put(`/api/admin/scripts/${encodeURIComponent(d.id)}`, body);
        toast(t("draft_saved", { title: saved.title, version: saved.version }), "ok");
        read(saved);
        const row = tbody.querySelector(`tr[data-draft-id="${CSS.escape(String(saved.id))}"]`);
        if (row) { row.replaceWith(listRow(saved)); markShown(); }
      } catch (e) {
        setBusy(save, false);
        if (e.status === 409) {
          const reload = h("button", { type: "button", class: "btn btn-sm", onclick: async () => {
            try {
              const fresh = await get(`/api/admin/scripts/${encodeURIComponent(d.id)}`);
              // Cancelled while it loaded: the draft shows its latest version, no form again.
              if (detail.contains(form)) editForm(fresh);
              else if (alive && String(shown) === String(fresh.id) && !detail.querySelector("form")) read(fresh, false);
            } catch (err) { replace(status, errorBanner(err)); }
          } }, t("version_conflict_reload"));
          replace(status, h("div", { class: "banner banner-warn", role: "alert", "data-testid": "draft-conflict" }, h("p", {}, t("draft_conflict")), reload));
          reload.focus();
          return;
        }
        const fields = e.status === 422 ? e.fieldMap() : {};
        let shownField = false;
        for (const [name, msg] of Object.entries(fields)) if (byName[name]) { byName[name].setError(msg); shownField = true; }
        if (!shownField) replace(status, errorBanner(e));
      }
    });
    replace(detail, h("div", { class: "panel-head" }, h("h2", { tabindex: "-1" }, t("draft_edit"))), form);
    title.input.focus();
  }

  async function removeDraft(d) {
    if (!(await confirmDialog(t("confirm_delete_draft", { title: d.title }), { confirmLabel: t("delete"), danger: true }))) return;
    try {
      await del(`/api/admin/scripts/${encodeURIComponent(d.id)}`);
      toast(t("draft_deleted", { title: d.title }), "ok");
      shown = null;
      ctx.setQuery({});
      replace(detail, h("p", { class: "muted" }, t("draft_pick")));
      loadList(false);
    } catch (e) { toast(`${t("error_generic")}${t("colon")}${e.message}`, "error"); }
  }

  loadList(false);
  const initial = ctx.query.get("id");
  if (initial) load(initial, { focus: false });
  return () => { alive = false; };
}

export const statusBadge = (s) => badge(labelOf("draft_status_", s), STATUS_KIND[s] || "neutral", { "data-status": s ?? "" });
