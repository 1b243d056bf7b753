"""OpenAI-compatible vendor emulator: a fast, scriptable fake upstream for tests and benchmarks.

Run it::

    python -m callout_server.emulator --host 127.0.0.1 --port 8900   # --port 0: any free port
    callout-server emulator ...                                      # same, via the CLI

or in-process with :func:`build_app` (serve it with ``handler_cancellation=True``).

Personas (URL prefix; ``/v1/...`` alone = ``vllm``)
---------------------------------------------------
Each persona imitates one vendor's documented dialect (``/work/shared/spec/vendors.md``):

=============== ============================================ ======================= =========
persona         thinking switch it honours                   reasoning comes back in Responses
=============== ============================================ ======================= =========
openai          ``reasoning_effort`` (per-model enum; 400s)  never (usage only)      yes
deepseek        ``thinking: {"type": "disabled"}``           ``reasoning_content``   no
dashscope       top-level ``enable_thinking``                ``reasoning_content``   no
siliconflow     top-level ``enable_thinking``                ``reasoning_content``   no
openrouter      ``reasoning: {"effort": "none"}``/enabled    ``reasoning``           yes
ollama          ``reasoning_effort`` none/low/medium/high    ``reasoning``           yes
zai, kimi, ark  ``thinking: {"type": "disabled"}``           ``reasoning_content``   ark only
vllm, gpustack  ``chat_template_kwargs.<family key>``        ``reasoning``           yes
vllm-noparser   as vllm                                      ``<think>`` in content  yes
sglang          ``chat_template_kwargs.<family key>``        ``reasoning_content``   yes
llamacpp        ``chat_template_kwargs.enable_thinking``     ``reasoning_content``   yes
=============== ============================================ ======================= =========

Keys a persona does not read are silently ignored (as vLLM and DashScope do), except on
``openai``, which answers 400 ``unknown_parameter`` for any non-OpenAI top-level key, 400
``unsupported_parameter`` for ``max_tokens`` on reasoning models and for ``reasoning_effort``
on gpt-4o/4.1, and 400 ``unsupported_value`` for an effort the model does not take. Other
vendor 400s: ollama ``invalid reasoning value``; dashscope non-streaming open-source qwen3-*
without ``enable_thinking: false``; openrouter disabling mandatory reasoning; ark an illegal
``thinking.type``.

The *model family* (``families.py``, matched anywhere in the model name) decides whether the
model reasons: never (gpt-4o, qwen2.5, deepseek-chat, unknown names), always (o-series, gpt-5,
deepseek-reasoner/r1, *-thinking, qwq) or hybrid with a default (qwen3* on, deepseek-v4 on,
glm-4.5+ on, kimi-k2.5+ on, deepseek-v3.1/3.2 off, gpt-5.1 off). The chat-template key is the
family's: ``thinking`` for DeepSeek-V3.x, ``enable_thinking`` otherwise.

Budget realism (``plan.py``): reasoning (default 600 tokens, or by effort: low 200, medium
600, high 1200) is spent first from every budget key that counts it; running out while
reasoning gives ``finish_reason: "length"``, empty content (``""`` or ``null`` per vendor) and
``completion_tokens == budget``. Usage is counted from the text produced (``tokens.py``):
1 token per CJK char, 1 per ≤4 other chars; prompt tokens from the prompt's text + 4;
reasoning tokens only when the model reasoned.

Unscripted replies (``textgen.py``) are decided from the prompt:

* the NLU tier's prompt (``nlu_prompt.py``) → the decision JSON it asks for: an offered intent
  picked by yes/no cues and words shared with its description, a confidence of 0.6-0.95 (0.4
  and the first intent when nothing points anywhere), slots filled from the utterance: times,
  numbers (Chinese numerals too), yes/no, enum values, names, phones... (``nlu_persona.py``,
  ``cues.py``, ``slot_fill.py``, ``timespans.py``, ``numerals.py``);
* the script tier's prompt (``script_brief.py``) → a call script in the requested sections,
  in the brief's language (``script_persona.py``, ``script_phrases.py``);
* other prompts: JSON mode → a JSON object (``{"intent": <first intent name found in the
  prompt>}`` or a minimal instance of the given schema); otherwise a short Chinese reply,
  which a stream delivers at a real model's pace (``pace.py``: 300 ms to the first token,
  40 ms per chunk, about 2 s, so barge-in has something to interrupt). ``--chat-ttft-ms`` /
  ``--chat-token-ms`` set that pace (``0 0``: full speed, for benchmarks); a script's own
  ``ttft_ms`` / ``token_delay_ms`` win over it.

When the model thinks, its reasoning opens with what the persona weighed, then runs on to
the reasoning budget.

Control API (not part of any vendor API)
----------------------------------------
``POST /_emulator/scripts`` ``{"match": {"model": "m1", "persona": null}, "times": 1,
"reply": {...}}`` → ``{"id": n}``. Scripts match in insertion order by exact model (and
persona if given); ``times`` defaults to unlimited. **Use a unique model name per test**
(e.g. ``qwen3-8b-<uuid>`` keeps the Qwen3 family) so concurrent tests never interfere.
``GET /_emulator/scripts`` lists; ``DELETE /_emulator/scripts[?model=m]`` clears.

Replicas (a pool of one model): every vendor route is also served under
``/r/<replica>/...`` (``http://host:PORT/r/gpu-2/vllm/v1``), as a path-routing proxy in front
of several servers would. ``"match": {"replica": "gpu-2"}`` scripts that replica alone (slow:
``ttft_ms``; failing: ``status``; hanging: ``hang``), and ``"every": N`` fires a script on
every Nth matching request only (the others fall through): ``{"every": 10, "reply":
{"ttft_ms": 1000}}`` holds 10 % of the requests for a second. A dead replica is a port
nothing listens on. Recorded requests carry their ``replica``.

``GET /_emulator/requests?model=m1`` → ``{"requests": [...]}``: body, headers (the
``Authorization``/``api-key`` values are never stored; ``authorization_present`` says whether
one came), ``stream``, ``status``, ``chunks_sent``, ``disconnected`` + ``disconnected_at``
(client went away), ``server_closed`` (a scripted drop), times.
``DELETE /_emulator/requests[?model=m]`` clears. ``GET /_emulator/health`` for readiness.

Reply fields: ``content``; ``reasoning`` (text, placed where the persona puts it; only when
the model thinks); ``reasoning_tokens`` (spend without text); ``tool_calls``
``[{"name", "arguments": obj|raw str, "id"?}]`` (streamed as 8-char argument deltas);
``finish_reason`` (override, null allowed); ``chunks`` (explicit content pieces);
``ttft_ms``; ``token_delay_ms`` (per chunk; non-streaming waits the total; both 0 when not
given, except for the stock chat reply, see above); ``status`` +
``error_body`` (default: the persona's error shape) + ``headers``; ``hang`` (``true``: never
answer, not even headers; ``N``: stream N chunks then stall); ``disconnect_after`` (drop the
connection after N chunks; non-streaming: no response); ``malformed_after`` (an invalid SSE
data line after N chunks, then carry on; non-streaming: truncated JSON body);
``keepalive_ms`` (``: keep-alive`` comments while stalled); ``no_choices`` (``choices: []``
/ ``output: []``); ``usage`` (replace, ``null`` = omit). A "chunk" is one SSE event
including the role chunk and ``[DONE]``.
"""

from callout_server.emulator.server import build_app, main

__all__ = ["build_app", "main"]
