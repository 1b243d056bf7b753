"""The cue tables call screening reads: carrier announcements, voicemail and call-assistant
greetings, IVR menus, and how people answer. Data, read by `screening.py`; phrases are
folded like the transcript (`normalize.fold`), so punctuation, spaces, full-width and
traditional forms need no entries of their own (`您所撥的電話忙線中` is `您所拨的电话忙线中`);
`*` stands for up to three tokens (`机主的*助理`: 机主的助理, 机主的私人助理).

The three mainland carriers and the Taiwan/Hong Kong ones word their announcements the same
way: a lead (您拨打的电话 / 您所拨打的用户 / the subscriber you dialed), a status (已关机, 是空号,
已停机, 正在通话中, 暂时无法接通, 不在服务区 / is power off, does not exist, ...) and often a
tail (请稍后再拨, 请查证后再拨 / please redial later), the English version after the Chinese.
A status word alone is what a person says too (我手机快关机了, 我现在正忙); only the shape
counts: lead + status, status + tail, or lead + tail.
"""

from __future__ import annotations

# Where an announcement starts. English ones lose their spaces when folded
# ("the number you dialed" -> "thenumberyoudialed"); "the"/"sorry" may be missing.
LEADS = (
    "您拨打的", "你拨打的", "您所拨打的", "你所拨打的", "您拨叫的", "您呼叫的", "您所呼叫的",
    "您所拨的", "您拨的", "您要拨打的", "拨打的电话", "拨打的用户", "拨打的号码", "所拨打的",
    "number you dialed", "number you have dialed", "number you dial", "number you have dial",
    "number you has dial", "number you are calling", "number you called", "number you are dialing",
    "subscriber you dialed", "subscriber you have dialed", "subscriber you dial",
    "subscriber you are calling", "subscriber you called", "phone you dialed",
    "user you dialed", "user you have dialed",
)

# status -> its wordings. Where two overlap the longer one decides
# ("out of service area" is unreachable, "out of service" suspended).
STATUSES: dict[str, tuple[str, ...]] = {
    "powered_off": (
        "关机", "已关机", "power off", "powered off", "switched off", "switch off", "turned off",
    ),
    "vacant": (
        "空号", "号码不存在", "不存在", "号码有误", "号码错误", "does not exist", "doesnt exist",
        "not exist", "is not in service", "invalid number", "is vacant",
    ),
    "suspended": (
        "停机", "暂停服务", "已暂停", "停止服务", "out of service", "suspended", "barred",
        "been disconnected",
    ),
    "busy": (
        "正忙", "忙线", "正在通话", "通话中", "占线", "用户忙", "电话忙", "线路忙", "is busy", "busy now", "line is busy",
    ),
    "unreachable": (
        "无法接通", "暂时无法接通", "不在服务区", "无人接听", "无人应答", "无人回应", "无法接听",
        "不方便接听", "呼入限制", "呼叫限制", "接听限制",
        "cannot be connected", "can not be connected", "could not be connected",
        "cant be connected", "not be connected", "unreachable", "not reachable", "not available",
        "unavailable", "out of service area", "not in service area", "out of the service area",
        "out of coverage", "no answer", "not answering", "barring of incoming calls",
    ),
}

# What follows an announcement.
TAILS = (
    "请稍后再拨", "稍后再拨", "稍候再拨", "请稍后再试", "稍后再试", "稍后再呼", "请查证后再拨",
    "查证后再拨", "核对后再拨", "请核对", "请查证", "查询后再拨", "请不要挂机", "请勿挂机",
    "redial", "dial later", "dial it later", "dial again", "call again later", "call later",
    "try again later", "please check", "please hold",
)

# The caller's own line (our trunk): not the number dialed, but a carrier speaking.
OWN_LINE = (
    "您的电话已欠费", "您的电话欠费", "您的号码已欠费", "您的电话已停机", "您的号码已停机",
    "您的话费余额不足", "请您续交话费", "请及时充值", "您的电话尚未登记", "尚未开通国际长途",
    "your telephone charge is overdue", "your telephone service is suspended",
    "you have not applied for",
)

# A voicemail box or a phone's call assistant, alone enough.
VOICEMAIL = (
    "来电助理", "智能助理", "智能助手", "通话助理", "通话助手", "接听助理", "语音助理", "来电秘书",
    "电话秘书", "智能秘书", "ai助理", "ai助手", "ai秘书", "机主的*助理", "机主的*助手", "机主的*秘书",
    "机主暂时", "机主现在不方便", "机主不方便", "机主正在", "机主无法", "机主正忙", "转告机主",
    "帮机主", "替机主", "代机主", "通知机主", "告诉机主", "机主会", "机主稍后",
    "语音信箱", "留言信箱", "语音留言", "如不留言", "留言请按", "开始留言", "请留言", "请您留言",
    "提示音后", "嘀声后", "滴声后", "嘟声后", "哔声后", "信号音后",
    "leave a message", "leave your message", "leave me a message", "after the tone",
    "after the beep", "voicemail", "voice mail", "record your message", "mailbox",
    "person you are calling", "person youre calling", "screening service", "call assistant",
    "virtual assistant", "you have reached",
)
# Voicemail cues that mean a recording is offered: they win over a carrier announcement
# around them ("您拨打的用户暂时无法接通，请在嘀声后留言" is a mailbox).
RECORDING = (
    "语音信箱", "留言信箱", "请留言", "请您留言", "开始留言", "提示音后", "嘀声后", "滴声后",
    "嘟声后", "哔声后", "信号音后", "leave a message", "leave your message", "after the tone",
    "after the beep", "voicemail", "voice mail", "record your message",
)

_DIGITS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
           "零", "一", "二", "三", "四", "五", "六", "七", "八", "九", "井", "星", "号键")
_EN_KEYS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "zero", "one", "two", "three",
            "four", "five", "six", "seven", "eight", "nine", "star", "pound", "hash")

# An automated menu. 请按 alone is no cue (请按时还款, 请按照要求).
IVR = (
    *(f"请按{d}" for d in _DIGITS), *(f"请您按{d}" for d in _DIGITS),
    *(f"请直接按{d}" for d in _DIGITS), *(f"按{d}键" for d in _DIGITS[:20]),
    "请拨分机", "直拨分机", "拨分机号", "请拨打分机", "转分机", "欢迎致电", "欢迎拨打", "欢迎来电",
    "欢迎使用", "服务请按", "查询请按", "咨询请按", "办理请按", "返回上一级", "返回主菜单", "重听请按",
    "正在为您转接", "您已进入", "通话可能会被录音", "通话将被录音", "为了保证服务质量", "请输入",
    *(f"press {k}" for k in _EN_KEYS), "please press", "for english", "please enter",
    "extension number", "dial the extension", "thank you for calling", "your call is important",
    "main menu", "welcome to",
)

# A person saying who they are: never a machine. One that runs into NOT_SELF (我是机主的来电助理,
# 我是机主的家人) does not count.
SELF = (
    "我是机主", "我就是机主", "我是机主本人", "机主就是我", "本人就是机主", "我是机主啊", "我是机主呀",
    "我就是本人", "我是本人",
)

NOT_SELF = ("机主的",)

# What people say when they pick up. An utterance made only of these is a person.
GREETINGS = (
    "喂", "你好", "您好", "哪位", "哪一位", "谁", "是谁", "谁啊", "谁呀", "你是谁", "你哪位", "您哪位",
    "是我", "我是", "我就是", "对", "对的", "对对", "是的", "是", "嗯", "啊", "哎", "诶", "唉", "呃",
    "哦", "噢", "喔", "请讲", "请说", "你说", "您说", "说吧", "什么事", "啥事", "有什么事", "有事吗",
    "有事", "干嘛", "干什么", "在", "在的", "我在", "请问", "找谁", "你找谁", "找哪位", "哪里",
    "哪儿", "听得到吗", "听得见吗", "能听到吗", "听不清", "好", "好的", "行", "早上好", "下午好",
    "晚上好", "呀", "吗", "呢", "吧", "了", "我", "你", "您", "怎么了", "咋了", "打错了", "哈喽",
    "hello", "hi", "hey", "yes", "yeah", "yep", "speaking", "who is this", "whos this",
    "who is calling", "whos calling", "this is", "can you hear me",
)

# Words right before a cue that undo it: 不是空号, 我不是智能助理.
NEGATORS = ("不是", "不", "没", "没有", "并没有", "并非", "并不", "哪里", "not", "isnt", "arent")
