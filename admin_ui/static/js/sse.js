// Server-sent events over fetch + ReadableStream (EventSource cannot POST or send headers).
// Yields {event, data, id} per event; `event` comes from the `event:` field, else from a
// `type` / `event` key of the JSON data, else "message". `data` is parsed JSON when it parses.
export async function* readSse(response, { signal } = {}) {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buf = "";
  let ev = { event: "", data: [], id: null };
  const emit = () => {
    if (!ev.data.length && !ev.event) return null;
    const raw = ev.data.join("\n");
    let data = raw;
    try { data = raw ? JSON.parse(raw) : null; } catch { /* keep the text */ }
    let name = ev.event;
    if (!name && data && typeof data === "object") name = data.type || data.event || "";
    const out = { event: name || "message", data, id: ev.id };
    ev = { event: "", data: [], id: null };
    return out;
  };
  const onAbort = () => { reader.cancel().catch(() => {}); };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          const out = emit();
          if (out) yield out;
          continue;
        }
        if (line.startsWith(":")) continue;  // comment / keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "event") ev.event = val;
        else if (field === "data") ev.data.push(val);
        else if (field === "id") ev.id = val;
      }
    }
    buf += decoder.decode();
    if (buf.trim()) {
      for (const line of buf.split(/\r\n|\r|\n/)) {
        if (line.startsWith("data:")) ev.data.push(line.slice(5).replace(/^ /, ""));
        else if (line.startsWith("event:")) ev.event = line.slice(6).trim();
      }
    }
    const last = emit();
    if (last) yield last;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    try { reader.releaseLock(); } catch { /* already released */ }
  }
}
