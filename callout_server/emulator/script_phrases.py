"""What each kind of call task says on the phone, in Chinese and English (data, no logic).

A brief's clause is classified by its leading verb into a task kind ("确认安装满意度" is a
``confirm``); the kind gives the opening's "why I'm calling", the main-flow question and the
slot to collect. ``{rest}`` is the clause after its verb, rewritten to address the customer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Task:
    why: str  # "这次来电是想{why}"
    question: str
    slot: tuple[str, str, str]  # (name, type, meaning)


ZH_VERBS = re.compile(
    r"^(?:请|需要|并|再|然后|同时|主动)?(?P<verb>回访|跟进|关怀|致电|联系|确认|核实|核对|了解|询问|"
    r"调查|收集|登记|提醒|通知|告知|提示|催缴|催收|邀请|推荐|介绍|推广|推销|预约)(?:一下)?(?P<rest>.*)$")
EN_VERBS = re.compile(
    r"^(?:please |also )?(?P<verb>call|contact|follow up(?: with| on)?|reach out to|check|"
    r"confirm|verify|ask(?: about)?|survey|find out|learn|collect|record|remind|notify|inform|"
    r"tell|invite|offer|recommend|introduce|promote|book|schedule)\b\s*(?P<rest>.*)$",
    re.IGNORECASE)

ZH_KIND = {"回访": "follow_up", "跟进": "follow_up", "关怀": "follow_up", "致电": "follow_up",
           "联系": "follow_up", "确认": "confirm", "核实": "confirm", "核对": "confirm",
           "了解": "ask", "询问": "ask", "调查": "ask", "收集": "collect", "登记": "collect",
           "提醒": "notify", "通知": "notify", "告知": "notify", "提示": "notify",
           "催缴": "notify", "催收": "notify", "邀请": "invite", "推荐": "offer",
           "介绍": "offer", "推广": "offer", "推销": "offer", "预约": "book"}
EN_KIND = {"call": "follow_up", "contact": "follow_up", "follow": "follow_up",
           "reach": "follow_up", "check": "confirm", "confirm": "confirm", "verify": "confirm",
           "ask": "ask", "survey": "ask", "find": "ask", "learn": "ask", "collect": "collect",
           "record": "collect", "remind": "notify", "notify": "notify", "inform": "notify",
           "tell": "notify", "invite": "invite", "offer": "offer", "recommend": "offer",
           "introduce": "offer", "promote": "offer", "book": "book", "schedule": "book"}

ZH_TASKS = {
    "follow_up": Task("给您做个简短回访，了解一下您{rest}后的情况",
                      "您{rest}后，用下来感觉怎么样？", ("feedback", "string", "客户的使用反馈")),
    "confirm": Task("跟您确认一下{rest}", "想跟您确认一下{rest}，您看情况怎么样？",
                    ("confirmed", "boolean", "客户是否确认{rest}")),
    "ask": Task("了解一下{rest}", "想了解一下{rest}，您方便说说吗？",
                ("answer", "string", "客户对{rest}的回答")),
    "collect": Task("登记一下{rest}", "麻烦您告诉我一下{rest}，可以吗？",
                    ("info", "string", "客户提供的{rest}")),
    "notify": Task("提醒您{rest}", "提醒您一下：{rest}。您这边清楚了吗？",
                   ("acknowledged", "boolean", "客户是否已知晓")),
    "invite": Task("邀请您{rest}", "诚挚邀请您{rest}，您有兴趣吗？",
                   ("will_attend", "boolean", "客户是否愿意参加")),
    "offer": Task("给您介绍一下{rest}", "给您简单介绍一下{rest}，您有兴趣了解吗？",
                  ("interested", "boolean", "客户是否有兴趣")),
    "book": Task("帮您预约{rest}", "想帮您预约{rest}，您看什么时间方便？",
                 ("appointment_time", "string", "客户预约的时间")),
    "other": Task("跟您沟通一下{rest}", "关于{rest}，您这边情况怎么样？",
                  ("answer", "string", "客户的回答")),
}
ZH_SATISFACTION = Task("跟您确认一下{rest}满意度", "您对{rest}还满意吗？",
                       ("satisfied", "boolean", "客户对{rest}是否满意"))

EN_TASKS = {
    "follow_up": Task("follow up, since {rest}", "How has everything been since then?",
                      ("feedback", "string", "what the customer says about it")),
    "confirm": Task("check {rest}", "I'd like to check {rest}. How has it been for you?",
                    ("confirmed", "boolean", "whether the customer confirms {rest}")),
    "ask": Task("ask you about {rest}", "Could you tell me a little about {rest}?",
                ("answer", "string", "the customer's answer about {rest}")),
    "collect": Task("note down {rest}", "Could you tell me {rest}, please?",
                    ("info", "string", "{rest} as the customer gives it")),
    "notify": Task("let you know that {rest}", "Just a quick reminder: {rest}. Is that clear?",
                   ("acknowledged", "boolean", "whether the customer has taken note")),
    "invite": Task("invite you {rest}", "We'd love to invite you {rest}. Would you like to come?",
                   ("will_attend", "boolean", "whether the customer will come")),
    "offer": Task("tell you about {rest}", "I'd like to tell you about {rest}. "
                  "Would you be interested?", ("interested", "boolean",
                                               "whether the customer is interested")),
    "book": Task("book {rest} for you", "Can I book {rest} for you? What time suits you?",
                 ("appointment_time", "string", "the time the customer chooses")),
    "other": Task("talk about {rest}", "About {rest}: how are things on your side?",
                  ("answer", "string", "the customer's answer")),
}
EN_SATISFACTION = Task("check how satisfied you are with the {rest}",
                       "Are you happy with the {rest}?",
                       ("satisfied", "boolean", "whether the customer is happy with the {rest}"))

# The people the brief talks about, dropped or turned into "您"/"you" in spoken lines.
ZH_AUDIENCE = re.compile(r"^(?P<desc>.*?)的?(?:老|新|VIP|意向|潜在)?"
                         r"(?:客户|用户|顾客|会员|业主|车主|家长|学员|患者)(?P<tail>.*)$")
EN_AUDIENCE = re.compile(
    r"^(?:all |our |old |new |existing |the |those )*(?:customers?|members?|users?|clients?|"
    r"subscribers?|owners?|parents?|students?|patients?)\b(?: who| that)?\s*", re.IGNORECASE)
EN_PRONOUNS = {"their": "your", "they": "you", "them": "you", "theirs": "yours",
               "themselves": "yourself", "they're": "you're"}
#: The verb after "customers who" once it reads "you ...".
EN_YOU_VERB = {"has": "have", "is": "are", "was": "were", "does": "do"}

ZH_HEADINGS = ("【角色与目标】", "【开场白】", "【主流程】", "【分支应对】", "【合规要点】",
               "【需收集的槽位】", "【结束语】")
EN_HEADINGS = ("[Role and goal]", "[Opening]", "[Main flow]", "[Branches]", "[Compliance]",
               "[Slots to collect]", "[Closing]")
