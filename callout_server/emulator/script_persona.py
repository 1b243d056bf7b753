"""The script persona: answer a script-generation prompt with a script built from the brief.

The script has the sections the prompt asks for (role and goal, opening with the identity
check, main flow with one question per task in the brief, branches with objection handling
and the hand-off to a human, compliance, slots to collect, closing), short spoken lines, no
Markdown, in the brief's language. It is assembled from the phrase tables in
:mod:`script_phrases`; what a real model adds is better wording, not more structure.
"""

from __future__ import annotations

import re

from callout_server.emulator import script_phrases as ph
from callout_server.emulator.script_brief import Brief

_Line = tuple[str, str]  # (why, question) of one task


def write(brief: Brief) -> str:
    return _zh(brief) if brief.chinese else _en(brief)


def reasoning_lead(brief: Brief) -> str:
    if not brief.chinese:
        return (f"The brief: {brief.text.rstrip('.')}. Open with who is calling and why, check it is the "
                "right person, then one question per task"
                f"{', with a hand-off to a human' if brief.transfer else ''}; cover yes, no, "
                "busy, wrong person and questions; list the slots; close politely.")
    transfer = "，要有转人工的分支" if brief.transfer else ""
    return (f"需求是：{brief.text}。开场要说明身份和来意，先确认对方身份；主流程按需求逐条提问"
            f"{transfer}；分支覆盖同意、拒绝、忙、非本人、提问；最后列出槽位和结束语。")


# --- Chinese ---------------------------------------------------------------------------------


def _zh_task(clause: str) -> tuple[ph.Task, str]:
    m = ph.ZH_VERBS.match(clause)
    if m is None:
        return ph.ZH_TASKS["other"], clause
    kind, rest = ph.ZH_KIND[m.group("verb")], m.group("rest").strip()
    if kind == "confirm" and rest.endswith("满意度"):
        return ph.ZH_SATISFACTION, rest.removesuffix("满意度")
    audience = ph.ZH_AUDIENCE.match(rest)
    if audience is not None:
        # "回访上周购买净水器的客户" → "您上周购买净水器"; "邀请老客户参加…" → "参加…".
        rest = audience.group("desc") if kind == "follow_up" else (
            audience.group("tail") or audience.group("desc"))
    if kind == "follow_up" and not rest:
        return ph.Task("给您做个简短回访", "您最近用下来感觉怎么样？",
                       ("feedback", "string", "客户的使用反馈")), ""
    return ph.ZH_TASKS[kind], rest.strip("，, ")


def _zh(brief: Brief) -> str:
    tasks = [_zh_task(c) for c in brief.purposes]
    whys = [t.why.format(rest=r) for t, r in tasks]
    questions = [t.question.format(rest=r) for t, r in tasks]
    slots = [("is_target", "boolean", "是否本人")]
    slots += [(t.slot[0], t.slot[1], t.slot[2].format(rest=r)) for t, r in tasks]
    when = brief.transfer_when or "要求转人工"
    if brief.transfer or re.search(r"问题|投诉|故障|不满", brief.text):
        slots.append(("issue", "string", "客户反映的问题"))
    if brief.transfer:
        slots.append(("need_human", "boolean", "是否需要转人工"))
    slots.append(("callback_time", "string", "客户方便回电的时间"))
    goal = "；".join(brief.purposes)
    flow = ["1. 确认身份：请问是[客户姓名]本人吗？", "2. 说明来意，征得同意后继续。"]
    flow += [f"{n}. {q}" for n, q in enumerate(questions, start=3)]
    flow.append(f"{len(flow) + 1}. 您还有其他问题或建议吗？")
    if brief.transfer:
        flow.append(f"{len(flow) + 1}. 客户{when}时：先安抚，简单记下问题，再转人工。")
    transfer_line = ("好的，马上为您转接人工客服，请稍等。" if brief.transfer
                     else "好的，我先记下来，请人工客服尽快给您回电。")
    sections = (
        ["你是[公司名称]的客服专员，负责这通外呼。", f"目标：{goal}。"]
        + ([f"客户{when}时，转接人工客服。"] if brief.transfer else []),
        ["您好，我是[公司名称]的客服专员。", "请问是[客户姓名]本人吗？",
         f"这次来电是想{whys[0]}。", "大概占用您一分钟，可以吗？"],
        flow,
        ["- 同意：好的，谢谢您！那我简单问您几个问题。",
         "- 拒绝：好的，不打扰您了。以后不想接到这类电话，随时告诉我们。祝您生活愉快！",
         "- 有顾虑/嫌麻烦：理解您的顾虑，就占用您一分钟，问完就不打扰您了。",
         "- 正在忙/不方便：不好意思打扰了，您看什么时间方便，我再给您打过来？",
         "- 打错人/非本人：抱歉打扰了，可能是号码登记有误，祝您生活愉快，再见。",
         "- 提出问题：能答的简短回答；答不了就说：这个问题我记下来，请专业同事联系您。",
         f"- 要求转人工{'' if when == '要求转人工' else '/' + when}：{transfer_line}"],
        ["- 开场表明身份和来电目的。", "- 客户可以随时拒绝或要求不再来电，尊重客户的选择并记录。",
         "- 不承诺做不到的事；不确定的问题交给人工处理。"],
        [f"- {name}（{kind}）：{meaning}" for name, kind, meaning in _unique(slots)],
        ["感谢您的配合，祝您生活愉快，再见！"],
    )
    return _join(ph.ZH_HEADINGS, sections)


# --- English ---------------------------------------------------------------------------------


def _you(text: str) -> str:
    """Talk to the customer: "customers who bought X" → "you bought X", their → your."""
    m = ph.EN_AUDIENCE.match(text)
    if m is not None:
        text = text[m.end():]
        if m.group().rstrip().lower().endswith(" who"):
            first, _, tail = text.partition(" ")
            verb = ph.EN_YOU_VERB.get(first.lower(), first)
            if verb == first and first.endswith("s") and not first.endswith("ss"):
                verb = first[:-1]  # "owns a car" → "you own a car"
            text = f"you {verb} {tail}".strip()
    return re.sub(r"\b(?:their|they|them|theirs|themselves|they're)\b",
                  lambda w: ph.EN_PRONOUNS[w.group().lower()], text, flags=re.IGNORECASE)


def _en_task(clause: str) -> tuple[ph.Task, str]:
    m = ph.EN_VERBS.match(clause)
    if m is None:
        return ph.EN_TASKS["other"], clause
    kind = ph.EN_KIND[m.group("verb").split()[0].lower()]
    rest = m.group("rest").strip(" ,")
    if kind == "confirm" and re.search(r"\bsatisfaction$", rest, re.IGNORECASE):
        return ph.EN_SATISFACTION, re.sub(r"^the |\s*satisfaction$", "", rest)
    return ph.EN_TASKS[kind], _you(rest)


def _en(brief: Brief) -> str:
    tasks = [_en_task(c) for c in brief.purposes]
    whys = [t.why.format(rest=r) for t, r in tasks]
    questions = [t.question.format(rest=r) for t, r in tasks]
    slots = [("is_target", "boolean", "whether it is the right person")]
    slots += [(t.slot[0], t.slot[1], t.slot[2].format(rest=r)) for t, r in tasks]
    when = brief.transfer_when or "the customer asks for a human"
    if not re.match(r"(?:if|when|in case|once)\b", when, re.IGNORECASE):
        when = f"when {'' if when.startswith('the customer') else 'the customer '}{when}"
    if brief.transfer or re.search(r"problem|issue|complain|fault", brief.text, re.IGNORECASE):
        slots.append(("issue", "string", "the problem the customer reports"))
    if brief.transfer:
        slots.append(("need_human", "boolean", "whether the customer needs a human agent"))
    slots.append(("callback_time", "string", "when the customer prefers a call back"))
    flow = ["1. Identity: Am I speaking with [customer name]?",
            "2. Say why you are calling and ask if now is a good time."]
    flow += [f"{n}. {q}" for n, q in enumerate(questions, start=3)]
    flow.append(f"{len(flow) + 1}. Is there anything else I can help you with?")
    if brief.transfer:
        flow.append(f"{len(flow) + 1}. {when[0].upper()}{when[1:]}: acknowledge it, note the "
                    "problem in one line, then transfer to a human agent.")
    transfer_line = ("Sure, I'll put you through to a colleague right away. One moment, please."
                     if brief.transfer else
                     "Sure, I'll note that and have a colleague call you back soon.")
    sections = (
        ["You are a customer service agent of [company name], making this outbound call.",
         f"Goal: {'; '.join(brief.purposes)}."]
        + ([f"{when[0].upper()}{when[1:]}, transfer the call to a human agent."]
           if brief.transfer else []),
        ["Hello, this is [agent name] from [company name].",
         "Am I speaking with [customer name]?",
         f"I'm calling to {whys[0]}.", "It will only take a minute. Is now a good time?"],
        flow,
        ["- Agrees: Great, thank you! Just a couple of quick questions.",
         "- Refuses: No problem, I won't take more of your time. If you'd rather not get "
         "these calls, just tell us. Have a nice day!",
         "- Has doubts: I understand. It takes just one minute, and then I'll let you go.",
         "- Busy: Sorry to bother you. When would be a better time to call back?",
         "- Wrong person: Sorry, we must have the wrong number. Have a nice day, goodbye.",
         "- Asks a question: answer briefly; if you can't, say: I'll note that and have a "
         "colleague get back to you.",
         f"- Wants a human: {transfer_line}"],
        ["- Say who you are and why you are calling.",
         "- The customer may refuse or ask not to be called again: respect it and note it.",
         "- Promise nothing you cannot keep; pass unclear questions to a human."],
        [f"- {name} ({kind}): {meaning}" for name, kind, meaning in _unique(slots)],
        ["Thank you for your time. Have a nice day, goodbye!"],
    )
    return _join(ph.EN_HEADINGS, sections)


# --- shared ----------------------------------------------------------------------------------


def _unique(slots: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    seen: dict[str, tuple[str, str, str]] = {}
    for slot in slots:
        seen.setdefault(slot[0], slot)
    return list(seen.values())


def _join(headings: tuple[str, ...], sections: tuple[list[str], ...]) -> str:
    return "\n\n".join(f"{h}\n" + "\n".join(lines) for h, lines in zip(
        headings, sections, strict=True))
