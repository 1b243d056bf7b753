// The playground's shared controls: which configuration of a tier to try, and "copy as curl".
import { get } from "../api.js";
import { t } from "../i18n.js";
import { field, h, replace } from "../ui.js";

// A <select> of the tier's configurations: "" is the active one (with its pool).
export function configPicker(tier) {
  const picker = field({ label: t("pg_config"), name: "config_id", value: "",
    options: [{ value: "", label: t("pg_config_active") }], hint: t("pg_config_hint") });
  picker.input.dataset.testid = `pg-config-${tier}`;
  get("/api/admin/llm-configs").then((list) => {
    const mine = (list?.items || []).filter((c) => c.tier === tier);
    replace(picker.input, h("option", { value: "" }, t("pg_config_active")),
      mine.map((c) => h("option", { value: String(c.id) },
        `${c.name} · ${c.model}${c.is_active ? ` (${t("pg_config_is_active")})` : ""}`)));
  }).catch(() => { /* the active one still works */ });
  picker.query = () => (picker.input.value ? `?config_id=${encodeURIComponent(picker.input.value)}` : "");
  return picker;
}

// The same call as the dialer makes it, for a shell: the service token from the environment.
// A streamed call (`stream`) is read as it comes (-N) and asks for server-sent events.
export function curlOf(path, body, { stream = false } = {}) {
  const json = JSON.stringify(body).replaceAll("'", "'\\''");
  return `curl -sS${stream ? " -N" : ""} -X POST '${location.origin}${path}' \\\n` +
    "  -H \"Authorization: Bearer $CALLOUT_SERVICE_TOKEN\" \\\n" +
    "  -H 'Content-Type: application/json' \\\n" +
    (stream ? "  -H 'Accept: text/event-stream' \\\n" : "") +
    `  -d '${json}'`;
}

// A button that copies the commands of `build()`'s calls ([{path, body, stream?}], null when
// the form is not valid) and shows them (selectable where the clipboard is refused).
export function curlButton(build) {
  const out = h("pre", { class: "code-block curl", hidden: true, "data-testid": "pg-curl", tabindex: "0" });
  const note = h("span", { class: "muted", role: "status" });
  const button = h("button", { type: "button", class: "btn btn-sm", "data-testid": "pg-copy-curl",
    onclick: async () => {
      const calls = build();
      if (!calls) return;
      out.textContent = calls.map((c) => curlOf(c.path, c.body, c)).join("\n\n");
      out.hidden = false;
      try { await navigator.clipboard.writeText(out.textContent); note.textContent = t("pg_curl_copied"); }
      catch { note.textContent = t("pg_curl_select"); }
    } }, t("pg_copy_curl"));
  return { button, note, out };
}

// "agent: …" / "customer: …" lines (the words of the console's language, or English) as the
// request's context turns; a line with neither is the customer's.
const escapeRe = (x) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function prefix(words) { return new RegExp(`^\\s*(${words.map(escapeRe).join("|")})\\s*[:\uff1a]\\s*`, "i"); }
export function contextTurns(text) {
  const agent = prefix([t("pg_context_agent"), "assistant", "agent"]);
  const customer = prefix([t("pg_context_customer"), "user", "customer"]);
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    if (agent.test(line)) return { role: "assistant", content: line.replace(agent, "") };
    return { role: "user", content: line.replace(customer, "") };
  });
}
