// #/ai/playground: tabs for NLU decision, streamed chat and script generation.
import { post } from "../api.js";
import { t } from "../i18n.js";
import { diagnosticBox, errorBanner, field, h, jsonBlock, nextId, pageHeader, randomId, replace, setBusy } from "../ui.js";
import { renderChat, renderScript } from "./pg_stream.js";
import { configPicker, contextTurns, curlButton } from "./pg_tools.js";

const TABS = ["nlu", "chat", "script"];
const SLOT_TYPES = ["string", "number", "integer", "boolean", "enum"];

export function render(main, ctx) {
  const cleanups = [];
  const initial = TABS.includes(ctx.query.get("tab")) ? ctx.query.get("tab") : "nlu";
  const tabs = {};
  const panels = {};
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": t("pg_title") });
  for (const name of TABS) {
    const id = nextId("tab");
    tabs[name] = h("button", { type: "button", role: "tab", id, class: "tab", "aria-controls": `${id}-panel`, "data-tab": name,
      onclick: () => select(name, true) }, t(`tab_${name}`));
    panels[name] = h("section", { role: "tabpanel", id: `${id}-panel`, "aria-labelledby": id, class: "tab-panel", tabindex: "0" });
    tablist.append(tabs[name]);
  }
  tablist.addEventListener("keydown", (ev) => {
    const i = TABS.indexOf(ev.target.dataset.tab);
    if (i < 0) return;
    let j = null;
    if (ev.key === "ArrowRight") j = (i + 1) % TABS.length;
    else if (ev.key === "ArrowLeft") j = (i + TABS.length - 1) % TABS.length;
    else if (ev.key === "Home") j = 0;
    else if (ev.key === "End") j = TABS.length - 1;
    if (j === null) return;
    ev.preventDefault();
    select(TABS[j], true);
    tabs[TABS[j]].focus();
  });
  function select(name, persist) {
    for (const n of TABS) {
      const on = n === name;
      tabs[n].setAttribute("aria-selected", String(on));
      tabs[n].tabIndex = on ? 0 : -1;
      panels[n].hidden = !on;
    }
    if (persist) ctx.setQuery({ tab: name === "nlu" ? "" : name });
  }

  main.append(pageHeader(t("pg_title"), t("pg_intro")), tablist, ...TABS.map((n) => panels[n]));
  renderNlu(panels.nlu);
  cleanups.push(renderChat(panels.chat));
  cleanups.push(renderScript(panels.script));
  select(initial, false);
  return () => cleanups.forEach((fn) => fn && fn());
}

function renderNlu(panel) {
  const intentRows = h("div", { class: "rows", "data-testid": "intent-rows" });
  const slotRows = h("div", { class: "rows", "data-testid": "slot-rows" });
  const fallback = field({ label: t("fallback_intent"), name: "fallback_intent", value: "", options: [{ value: "", label: t("fallback_none") }] });
  const utter = field({ label: t("utterance"), name: "utterance", type: "textarea", value: t("sample_utterance"), required: true, attrs: { rows: 2 } });
  const nodeId = field({ label: t("node_id"), name: "node_id", value: "playground" });
  const config = configPicker("nlu");
  const deadline = field({ label: t("pg_deadline"), name: "deadline_ms", type: "number", value: "",
    hint: t("pg_deadline_hint"), attrs: { min: 50, max: 120000, step: 50, inputmode: "numeric" } });
  const context = field({ label: t("pg_context"), name: "context", type: "textarea", value: "",
    hint: t("pg_context_hint"), attrs: { rows: 3 } });
  const instructions = field({ label: t("pg_instructions"), name: "instructions", type: "textarea", value: "",
    attrs: { rows: 2 } });
  const status = h("div", { class: "form-status", role: "alert" });
  const result = h("div", { class: "result", "aria-live": "polite", "data-testid": "nlu-result" },
    h("p", { class: "empty result-empty" }, t("nlu_result_empty")));
  const submit = h("button", { type: "submit", class: "btn btn-primary" }, t("decide"));
  const curl = curlButton(() => { const body = buildBody(); return body && [{ path: "/api/nlu/decide", body }]; });

  const refreshFallback = () => {
    const cur = fallback.input.value;
    const names = [...intentRows.querySelectorAll("input[name=intent_name]")].map((x) => x.value.trim()).filter(Boolean);
    replace(fallback.input, h("option", { value: "" }, t("fallback_none")), names.map((n) => h("option", { value: n, selected: n === cur }, n)));
  };
  const removeBtn = (row, label) => h("button", { type: "button", class: "btn btn-ghost btn-sm", "aria-label": `${t("remove")} ${label}`,
    onclick: () => { const next = row.nextElementSibling || row.previousElementSibling; row.remove(); refreshFallback(); next?.querySelector("input")?.focus(); } }, t("remove"));

  function addIntent(name = "", desc = "", focus = false) {
    const n = field({ label: t("intent_name"), name: "intent_name", value: name, attrs: { autocomplete: "off" } });
    const d = field({ label: t("intent_desc"), name: "intent_desc", value: desc, attrs: { autocomplete: "off" } });
    n.input.addEventListener("input", refreshFallback);
    const row = h("div", { class: "row-item" }, n.row, d.row);
    row.append(removeBtn(row, t("intents")));
    intentRows.append(row);
    refreshFallback();
    if (focus) n.input.focus();
  }
  function addSlot(name = "", type = "string", values = "", desc = "", focus = false) {
    const n = field({ label: t("slot_name"), name: "slot_name", value: name, attrs: { autocomplete: "off" } });
    const ty = field({ label: t("slot_type"), name: "slot_type", value: type, options: SLOT_TYPES.map((x) => ({ value: x, label: x })) });
    const v = field({ label: t("slot_values"), name: "slot_values", value: values, attrs: { autocomplete: "off" } });
    const d = field({ label: t("slot_desc"), name: "slot_desc", value: desc, attrs: { autocomplete: "off" } });
    // The enum values get a line of their own under the slot, so the description keeps its width.
    const sync = () => { v.row.hidden = ty.input.value !== "enum"; row.classList.toggle("has-values", !v.row.hidden); };
    const row = h("div", { class: "row-item row-slot" }, n.row, ty.row, d.row, v.row);
    row.append(removeBtn(row, t("slots")));
    ty.input.addEventListener("change", sync);
    sync();
    slotRows.append(row);
    if (focus) n.input.focus();
  }
  addIntent("agree", t("sample_intent_agree"));
  addIntent("refuse", t("sample_intent_refuse"));
  addSlot("time", "string", "", t("sample_slot_time"));

  const form = h("form", { class: "pg-form", novalidate: true },
    h("fieldset", {}, h("legend", {}, t("intents")), intentRows,
      h("button", { type: "button", class: "btn btn-sm", onclick: () => addIntent("", "", true) }, `+ ${t("add_intent")}`)),
    h("fieldset", {}, h("legend", {}, t("slots")), slotRows,
      h("button", { type: "button", class: "btn btn-sm", onclick: () => addSlot("", "string", "", "", true) }, `+ ${t("add_slot")}`)),
    utter.row, h("div", { class: "grid-2" }, fallback.row, nodeId.row),
    h("div", { class: "grid-2" }, config.row, deadline.row), context.row, instructions.row, status,
    h("div", { class: "form-actions" }, submit, curl.button, curl.note), curl.out);

  function buildBody() {
    replace(status);
    const intents = [...intentRows.children].map((r) => ({
      name: r.querySelector("[name=intent_name]").value.trim(), description: r.querySelector("[name=intent_desc]").value.trim(),
    })).filter((x) => x.name);
    const slots = [...slotRows.children].map((r) => {
      const s = { name: r.querySelector("[name=slot_name]").value.trim(), type: r.querySelector("[name=slot_type]").value };
      const d = r.querySelector("[name=slot_desc]").value.trim();
      if (d) s.description = d;
      if (s.type === "enum") s.values = r.querySelector("[name=slot_values]").value.split(/[,，]/).map((x) => x.trim()).filter(Boolean);
      return s;
    }).filter((x) => x.name);
    const utterance = utter.input.value.trim();
    utter.setError(utterance ? "" : t("required"));
    if (!utterance) { utter.input.focus(); return null; }
    if (!intents.length && !slots.length) { status.textContent = t("need_intent_or_slot"); return null; }
    const body = { call_id: `playground-${randomId(6)}`, node_id: nodeId.input.value.trim() || "playground", utterance, intents, slots };
    if (fallback.input.value) body.fallback_intent = fallback.input.value;
    const ms = parseInt(deadline.input.value, 10);
    deadline.setError(deadline.input.value && !(ms >= 50 && ms <= 120000) ? t("pg_deadline_range") : "");
    if (deadline.input.value && !(ms >= 50 && ms <= 120000)) { deadline.input.focus(); return null; }
    if (ms) body.deadline_ms = ms;
    const turns = contextTurns(context.input.value);
    if (turns.length) body.context = turns;
    if (instructions.input.value.trim()) body.instructions = instructions.input.value.trim();
    return body;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = buildBody();
    if (!body) return;
    setBusy(submit, true, t("deciding"));
    replace(result, h("p", { class: "muted" }, t("deciding")));
    const t0 = performance.now();
    try {
      const d = await post(`/api/admin/playground/nlu${config.query()}`, body);
      const ms = Math.round(performance.now() - t0);
      replace(result, h("div", { class: "result-head" }, h("h3", {}, t("decision")),
        h("span", { class: "badge badge-info", "data-testid": "nlu-latency" }, t("client_latency", { ms })),
        d?.latency_ms != null ? h("span", { class: "badge badge-neutral" }, t("server_latency", { ms: d.latency_ms })) : null,
        d?.fallback ? h("span", { class: "badge badge-warn" }, t("fallback_used")) : null),
      jsonBlock(d, { "data-testid": "nlu-json" }), diagnosticBox(d?.diagnostic));
    } catch (e) {
      replace(result, errorBanner(e), diagnosticBox(e.error?.diagnostic), e.body ? jsonBlock(e.body) : null);
    } finally { setBusy(submit, false); }
  });
  panel.append(h("div", { class: "pg-grid" }, h("div", { class: "panel" }, form), h("div", { class: "panel" }, result)));
}
