// Playground streams: chat turns (sentences as TTS receives them, with barge-in) and script generation.
import { post, request } from "../api.js";
import { fmtNum, labelOf, t } from "../i18n.js";
import { readSse } from "../sse.js";
import { badge, diagnosticBox, errorBanner, field, h, jsonBlock, randomId, replace, setBusy } from "../ui.js";
import { configPicker, curlButton } from "./pg_tools.js";

// An end reason in the console's language ("completed" -> 已完成); the reason stays in data-reason.
const endText = (reason) => t("end_reason", { reason: labelOf("end_", reason) });
const usageText = (d) => t("usage_line", { prompt: d.prompt_tokens ?? "—", completion: d.completion_tokens ?? "—", reasoning: d.reasoning_tokens ?? "—" });
const endKind = (reason) => (reason === "completed" ? "ok" : reason === "cancelled" || reason === "superseded" ? "warn" : "error");

export function renderChat(panel) {
  let callId = null;
  let turnNo = 0;
  let inflight = null;  // {turnId, controller, cancelTimer}
  const sys = field({ label: t("system_prompt"), name: "system_prompt", type: "textarea",
    value: t("sample_system_prompt"), attrs: { rows: 3 } });
  const output = field({ label: t("output_mode"), name: "output", value: "audio",
    options: [{ value: "audio", label: t("output_audio") }, { value: "text", label: t("output_text") }] });
  const sessionInfo = h("p", { class: "muted", role: "status", "data-testid": "chat-session" });
  const config = configPicker("chat");
  const startBtn = h("button", { type: "button", class: "btn btn-primary", onclick: start }, t("start_session"));
  const transcript = h("ol", { class: "transcript", "aria-live": "polite", "aria-relevant": "additions text", "data-testid": "transcript" },
    h("li", { class: "transcript-empty muted" }, t("chat_empty")));
  const msg = field({ label: t("your_message"), name: "message", value: "", attrs: { autocomplete: "off", disabled: true } });
  const sendBtn = h("button", { type: "submit", class: "btn btn-primary", disabled: true }, t("send"));
  const cancelBtn = h("button", { type: "button", class: "btn btn-danger", disabled: true, onclick: cancel, "data-testid": "barge-in" }, t("barge_in"));
  const status = h("div", { class: "form-status", role: "alert" });
  const composer = h("form", { class: "composer" }, msg.row, h("div", { class: "composer-actions" }, sendBtn, cancelBtn));
  // The dialer's two calls for a new phone call: open its session, then a turn read as it
  // streams (with the active configuration, as the dialer's calls get).
  const curl = curlButton(() => {
    const id = `call-${randomId(8)}`;
    return [
      { path: "/api/chat/sessions", body: { call_id: id, system_prompt: sys.input.value } },
      { path: `/api/chat/sessions/${encodeURIComponent(id)}/turns`, stream: true,
        body: { turn_id: "t1", text: msg.input.value.trim() || t("sample_chat_text"), output: output.input.value } },
    ];
  });

  async function start() {
    if (inflight) return;
    setBusy(startBtn, true);
    replace(status);
    const id = `playground-${randomId(8)}`;
    try {
      await post(`/api/admin/playground/chat/sessions${config.query()}`, { call_id: id, system_prompt: sys.input.value });
      callId = id;
      turnNo = 0;
      replace(transcript);
      sessionInfo.textContent = t("session_started", { id });
      startBtn.dataset.label = t("new_session");
      msg.input.disabled = false;
      sendBtn.disabled = false;
      msg.input.focus();
    } catch (e) { replace(status, errorBanner(e)); }
    finally { setBusy(startBtn, false); }
  }

  composer.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = msg.input.value.trim();
    if (!text || !callId || inflight) return;
    msg.input.value = "";
    const turnId = `t${++turnNo}`;
    transcript.append(h("li", { class: "bubble bubble-user" }, h("span", { class: "who" }, t("you")), h("p", {}, text)));
    const sentences = h("ol", { class: "sentences", "data-testid": "sentences" });
    const delta = h("p", { class: "delta" });
    const meta = h("div", { class: "bubble-meta" }, badge(t("streaming"), "info", { "data-testid": "turn-state" }));
    const bubble = h("li", { class: "bubble bubble-ai", "data-turn-id": turnId }, h("span", { class: "who" }, t("assistant")), sentences, delta, meta);
    transcript.append(bubble);
    const controller = new AbortController();
    inflight = { turnId, controller, cancelTimer: null };
    sendBtn.disabled = true;
    cancelBtn.disabled = false;
    let ended = false;
    const finish = (reason, error) => {
      ended = true;
      replace(meta, badge(endText(reason), endKind(reason), { "data-testid": "turn-end", "data-reason": reason }),
        error ? h("span", { class: "muted", title: error.code ?? "", "data-code": error.code ?? "" }, ` ${error.message ?? ""}`) : null,
        ...[...meta.querySelectorAll(".usage")]);
    };
    try {
      const resp = await request("POST", `/api/chat/sessions/${encodeURIComponent(callId)}/turns`,
        { body: { turn_id: turnId, revision: 0, text, output: output.input.value }, signal: controller.signal, headers: { Accept: "text/event-stream" } });
      for await (const { event, data } of readSse(resp, { signal: controller.signal })) {
        const d = data && typeof data === "object" ? data : {};
        if (event === "sentence") {
          sentences.append(h("li", { class: "sentence", "data-index": d.index ?? "" },
            h("span", { class: "sentence-index", "aria-hidden": "true" }, `#${d.index ?? sentences.children.length}`), h("span", {}, d.text ?? "")));
        } else if (event === "text_delta") {
          delta.textContent += d.text ?? (typeof data === "string" ? data : "");
        } else if (event === "tool_call") {
          bubble.insertBefore(h("div", { class: "tool-call" }, h("strong", {}, t("tool_call_named", { name: d.name ?? "?" })), jsonBlock(d.arguments ?? {})), meta);
        } else if (event === "usage") {
          meta.append(h("span", { class: "usage muted" }, ` ${usageText(d)}`));
        } else if (event === "end") {
          finish(d.reason ?? "completed", d.error);
          if (d.diagnostic) bubble.append(diagnosticBox(d.diagnostic));
        } else if (event === "error") {
          bubble.append(diagnosticBox(d.diagnostic ?? d.error ?? d));
        }
      }
      if (!ended) finish("closed");
    } catch (e) {
      if (e.name === "AbortError") { if (!ended) finish("aborted"); }
      else { finish("error"); bubble.append(errorBanner(e)); }
    } finally {
      if (inflight?.cancelTimer) clearTimeout(inflight.cancelTimer);
      inflight = null;
      sendBtn.disabled = !callId;
      cancelBtn.disabled = true;
      if (panel.contains(document.activeElement) || document.activeElement === document.body) msg.input.focus();
    }
  });

  async function cancel() {
    if (!inflight) return;
    const cur = inflight;
    cancelBtn.disabled = true;
    try {
      await post(`/api/chat/sessions/${encodeURIComponent(callId)}/cancel`, { turn_id: cur.turnId });
      // The stream should now close with `end: cancelled`; if the server never says so, stop reading.
      cur.cancelTimer = setTimeout(() => cur.controller.abort(), 5000);
    } catch (e) {
      replace(status, errorBanner(e));
      cur.controller.abort();
    }
  }

  panel.append(h("div", { class: "pg-grid pg-chat" },
    h("div", { class: "panel" }, sys.row, output.row, config.row,
      h("div", { class: "form-actions" }, startBtn, curl.button, curl.note), curl.out, sessionInfo, status),
    h("div", { class: "panel chat-panel" }, transcript, composer)));
  return () => { inflight?.controller.abort(); };
}

export function renderScript(panel) {
  const brief = field({ label: t("brief"), name: "brief", type: "textarea", required: true,
    value: t("sample_brief"), attrs: { rows: 4 } });
  const genBtn = h("button", { type: "submit", class: "btn btn-primary" }, t("generate"));
  const stopBtn = h("button", { type: "button", class: "btn", disabled: true }, t("stop"));
  const progress = h("div", { class: "progress-line", role: "status", "aria-live": "polite", "data-testid": "script-progress" });
  const bar = h("div", { class: "progress-bar", "aria-hidden": "true" }, h("span", {}));
  const out = h("pre", { class: "script-output", "data-testid": "script-output", tabindex: "0", "aria-label": t("script_result") });
  const extra = h("div", { "aria-live": "polite" });
  let controller = null;
  let timer = null;

  const config = configPicker("script");
  const curl = curlButton(() => {
    const text = brief.input.value.trim();
    brief.setError(text ? "" : t("required"));
    return text ? [{ path: "/api/scripts/generate", body: { brief: text, stream: true }, stream: true }] : null;
  });
  const form = h("form", { class: "pg-form" }, brief.row, config.row,
    h("div", { class: "form-actions" }, genBtn, stopBtn, curl.button, curl.note), curl.out);
  stopBtn.addEventListener("click", () => controller?.abort());
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = brief.input.value.trim();
    brief.setError(text ? "" : t("required"));
    if (!text || controller) return;
    controller = new AbortController();
    out.textContent = "";
    replace(extra);
    const t0 = performance.now();
    let chars = 0;
    const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
    const tick = () => { progress.textContent = `${t("generating")} ${t("chars_received", { n: fmtNum(chars) })} · ${t("elapsed", { s: secs() })}`; };
    bar.classList.add("running");
    timer = setInterval(tick, 200);
    tick();
    setBusy(genBtn, true, t("generating"));
    stopBtn.disabled = false;
    let reason = null;
    try {
      const resp = await request("POST", `/api/admin/playground/script${config.query()}`, { body: { brief: text, stream: true }, signal: controller.signal,
        headers: { Accept: "text/event-stream" } });
      for await (const { event, data } of readSse(resp, { signal: controller.signal })) {
        const d = data && typeof data === "object" ? data : {};
        if (event === "text_delta") {
          const piece = d.text ?? (typeof data === "string" ? data : "");
          out.textContent += piece;
          chars += [...piece].length;
        } else if (event === "end") {
          reason = d.reason ?? "completed";
          if (d.error) extra.append(errorBanner({ code: d.error.code, message: d.error.message }));
          // The draft the server kept: read, edit or delete it on the drafts page.
          if (d.draft_id != null) {
            extra.append(h("p", { class: "draft-link", "data-testid": "script-draft" }, `${t("draft_saved_as", { id: d.draft_id })} · `,
              h("a", { href: `#/ai/scripts?id=${encodeURIComponent(d.draft_id)}` }, t("draft_open"))));
          } else if (d.draft_error) extra.append(h("p", { class: "muted" }, t("draft_not_saved", { reason: d.draft_error })));
        } else if (event === "usage") {
          extra.append(h("p", { class: "muted" }, usageText(d)));
        }
        const diag = d.diagnostic ?? (event === "diagnostic" ? d : null);
        if (diag) extra.append(diagnosticBox(diag));
      }
      progress.textContent = t("script_done", { n: fmtNum(chars), s: secs() });
      if (reason && reason !== "completed") extra.prepend(badge(endText(reason), endKind(reason), { "data-reason": reason }));
    } catch (e) {
      if (e.name === "AbortError") progress.textContent = `${endText("cancelled")} · ${t("chars_received", { n: fmtNum(chars) })}`;
      else { progress.textContent = ""; extra.append(errorBanner(e), diagnosticBox(e.error?.diagnostic)); }
    } finally {
      clearInterval(timer);
      bar.classList.remove("running");
      controller = null;
      setBusy(genBtn, false);
      stopBtn.disabled = true;
    }
  });
  panel.append(h("div", { class: "pg-grid" }, h("div", { class: "panel" }, form, bar, progress, extra),
    h("div", { class: "panel" }, h("h3", {}, t("script_result")), out)));
  return () => { controller?.abort(); clearInterval(timer); };
}

