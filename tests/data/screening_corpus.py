"""First utterances after the line connects, labelled with who answered.

Carrier announcements as the three mainland carriers (and the Taiwan/Hong Kong ones) word
them, in Chinese, English and both in one transcript, as an ASR writes them (with and without
punctuation, spaces, full-width letters, traditional characters, the lead cut off);
voicemail boxes and phones' call assistants; IVR menus and switchboards; people picking up;
and people saying a carrier word (`lookalike`), who must never be taken for a machine.

    kind "template"   a machine's fixed wording: the rules must answer exactly this label
    kind "lookalike"  a person using a machine's words: the rules answer human or nothing
    kind "greeting"   a person picking up: human or nothing (coverage is reported)
    kind "empty"      nothing heard: unknown

Used by tests/test_phrases_screening.py and bench/bench_guards.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["template", "lookalike", "greeting", "empty"]


@dataclass(frozen=True, slots=True)
class FirstUtterance:
    text: str
    answered_by: str
    carrier_status: str | None
    kind: Kind
    note: str = ""


def carrier(text: str, status: str | None, note: str = "") -> FirstUtterance:
    return FirstUtterance(text, "carrier", status, "template", note)


def voicemail(text: str, note: str = "") -> FirstUtterance:
    return FirstUtterance(text, "voicemail", None, "template", note)


def ivr(text: str, note: str = "") -> FirstUtterance:
    return FirstUtterance(text, "ivr", None, "template", note)


def person(text: str, note: str = "") -> FirstUtterance:
    return FirstUtterance(text, "human", None, "greeting", note)


def lookalike(text: str, note: str = "") -> FirstUtterance:
    return FirstUtterance(text, "human", None, "lookalike", note)


def empty(text: str) -> FirstUtterance:
    return FirstUtterance(text, "unknown", None, "empty", "nothing but noise")


CASES: tuple[FirstUtterance, ...] = (
    # -- carrier: powered off -------------------------------------------------------------
    carrier("您好，您拨打的电话已关机。", "powered_off"),
    carrier("您好！您所拨打的电话已关机。Sorry! The subscriber you dialed is power off.", "powered_off",
            "bilingual, China Mobile"),
    carrier("对不起，您拨打的用户已关机。", "powered_off"),
    carrier("您拨打的电话已关机，请稍后再拨。", "powered_off"),
    carrier("Sorry, the subscriber you dialed is power off.", "powered_off", "English only"),
    carrier("您拨打的电话已关机 Sorry the number you dialed is power off", "powered_off",
            "ASR without punctuation"),
    carrier("您拨打的用户已关机，我们将以短信形式通知机主您的来电。", "powered_off", "switch-off reminder"),
    carrier("你拨打的电话已关机", "powered_off", "ASR writes 你"),
    carrier("您呼叫的用户已关机", "powered_off"),
    carrier("已关机，请稍后再拨", "powered_off", "lead cut off"),
    carrier("ＳＯＲＲＹ！ＴＨＥ ＳＵＢＳＣＲＩＢＥＲ ＹＯＵ ＤＩＡＬＥＤ ＩＳ ＰＯＷＥＲ ＯＦＦ", "powered_off",
            "full-width"),
    carrier("您撥打的電話已關機", "powered_off", "traditional"),
    carrier("您拨打的电话已经关机", "powered_off"),
    carrier("The subscriber you have dialed is powered off, please call later.", "powered_off"),
    carrier("您拨打的电话已关机。Sorry, the number you dialed is switched off.", "powered_off"),
    carrier("您 拨 打 的 电 话 已 关 机", "powered_off", "ASR spaces between characters"),
    # -- carrier: vacant ------------------------------------------------------------------
    carrier("您好！您所拨打的号码是空号，请核对后再拨。", "vacant", "China Telecom"),
    carrier("Sorry! The number you dialed does not exist, please check it and dial later.", "vacant"),
    carrier("您拨打的电话是空号，请查证后再拨。", "vacant"),
    carrier("对不起，您拨打的号码是空号，请查证后再拨。Sorry, the number you dialed does not exist, "
            "please check it and dial again.", "vacant", "bilingual"),
    carrier("您拨打的号码不存在，请查证后再拨", "vacant"),
    carrier("您所拨打的电话号码不存在", "vacant"),
    carrier("您拨打的电话号码有误，请查证后再拨", "vacant"),
    carrier("空号，请查证后再拨", "vacant", "lead cut off"),
    carrier("您拨打的是空号", "vacant"),
    carrier("您拨打的电话是空号 Sorry the number you dialed does not exist", "vacant"),
    carrier("您所撥打的號碼是空號，請查明後再撥", "vacant", "traditional"),
    carrier("您拨打的号码是空号请核对后再拨sorry the number you dialed does not exist", "vacant",
            "ASR run-on"),
    carrier("The number you have dialed is not in service, please check the number.", "vacant"),
    # -- carrier: suspended ---------------------------------------------------------------
    carrier("对不起！您拨打的电话已停机。", "suspended"),
    carrier("Sorry! The number you dialed is out of service.", "suspended"),
    carrier("您拨打的用户已停机。", "suspended"),
    carrier("您拨打的电话已停机，Sorry, the number you dialed has been suspended.", "suspended"),
    carrier("您拨打的号码已暂停服务", "suspended"),
    carrier("您拨打的用户已欠费停机", "suspended"),
    carrier("对不起，您拨打的电话已停机，详情请咨询10086", "suspended"),
    carrier("您拨打的号码已停止服务", "suspended"),
    carrier("The subscriber you dialed has been barred.", "suspended"),
    carrier("您拨打的电话已停机 停机 sorry the number you dialed is out of service", "suspended",
            "ASR repeats"),
    # -- carrier: busy --------------------------------------------------------------------
    carrier("您好！请不要挂机，您拨打的电话正在通话中。", "busy", "call waiting"),
    carrier("Sorry! Please hold on, the subscriber you dialed is busy now.", "busy"),
    carrier("您好！您拨打的电话正在通话中，请稍后再拨。", "busy"),
    carrier("Sorry! The subscriber you dialed is busy now, please redial later.", "busy"),
    carrier("您拨打的用户正忙，请稍后再拨。", "busy"),
    carrier("您拨打的电话正在通话中，请稍后再拨。Sorry the subscriber you dialed is busy now please "
            "redial later", "busy", "bilingual"),
    carrier("您所撥的電話忙線中，請稍後再撥。The number you have dial is busy. Please try again later.",
            "busy", "Taiwan, traditional"),
    carrier("您拨打的用户正在通话中，请不要挂机，我们将提醒对方您的来电", "busy"),
    carrier("您呼叫的用户忙，请稍后再拨", "busy"),
    carrier("正在通话中，请稍后再拨", "busy", "lead cut off"),
    carrier("您拨打的电话占线", "busy"),
    carrier("the number you are calling is busy please try again later", "busy"),
    # -- carrier: unreachable -------------------------------------------------------------
    carrier("对不起！您拨打的用户暂时无法接通，请稍后再拨。", "unreachable"),
    carrier("Sorry! The subscriber you dialed can not be connected for the moment, please redial "
            "later.", "unreachable"),
    carrier("您拨打的电话暂时无法接通，请稍后再拨。", "unreachable"),
    carrier("您拨打的电话不在服务区", "unreachable"),
    carrier("您拨打的用户不在服务区，请稍后再拨", "unreachable"),
    carrier("您拨打的电话暂时无法接通 Sorry the number you dialed cannot be connected at the moment "
            "please redial later", "unreachable", "bilingual, no punctuation"),
    carrier("对不起！您拨打的用户已设置呼入限制。", "unreachable", "incoming calls barred"),
    carrier("Sorry! The subscriber you dialed has set barring of incoming calls.", "unreachable"),
    carrier("您所撥的電話無法接聽，請稍後再撥。The number you has dial is not available. Please try "
            "again later.", "unreachable", "Taiwan"),
    carrier("您所撥的電話無人回應", "unreachable", "Taiwan, no answer"),
    carrier("您拨打的电话无人接听，请稍后再拨", "unreachable"),
    carrier("暂时无法接通，请稍后再拨", "unreachable", "lead cut off"),
    carrier("The number you dialed is not reachable, please try again later.", "unreachable"),
    carrier("您拨打的用户暂时无法接通 请稍后再拨 sorry the subscriber you dialed cannot be connected",
            "unreachable"),
    carrier("您 拨 打 的 电 话 暂 时 无 法 接 通", "unreachable", "ASR spaces"),
    carrier("您拨叫的用户暂时无法接通", "unreachable"),
    carrier("The subscriber you dialed is out of service area.", "unreachable"),
    carrier("您拨打的电话暂时无法接通，Sorry，the number you dialed cannot be connected for the "
            "moment，please redial later", "unreachable", "full-width commas"),
    # -- carrier: the calling line itself, or the status lost -----------------------------
    carrier("对不起！您的电话已欠费，请您续交话费，谢谢！", None, "our own line in arrears"),
    carrier("Sorry, your telephone charge is overdue, please renew it, thank you!", None),
    carrier("对不起！您的电话已停机。详情请垂询1860。", None, "our own line suspended"),
    carrier("您拨打的用户……请稍后再拨", None, "status lost by the ASR: lead and tail"),
    # -- voicemail and call assistants ----------------------------------------------------
    voicemail("您好，我是机主的来电助理，机主暂时无法接听您的电话，有什么事可以跟我说，我会转告他。"),
    voicemail("您好我是机主的智能助理"),
    voicemail("你好，我是机主的AI助理，请问你找他有什么事？"),
    voicemail("您好，机主现在不方便接听电话，请问您有什么事情，我可以帮您转告。"),
    voicemail("您好，我是他的智能助手小爱，机主暂时不方便接听，请问有什么事"),
    voicemail("您好，这里是机主的语音信箱，请在提示音后留言。"),
    voicemail("您拨打的用户暂时无法接通，请在嘀声后留言，挂机后留言将以短信形式通知机主。",
              "a carrier's mailbox: the recording wins"),
    voicemail("请在“嘀”声后留言，留言完毕请挂机"),
    voicemail("您的电话将转接到语音信箱，嘟声后开始计费，如不留言请挂断。"),
    voicemail("您的電話將轉接到語音信箱，嘟聲後開始計費，如不留言請掛斷。", "traditional"),
    voicemail("Hi, you've reached John's voicemail, please leave a message after the tone."),
    voicemail("The person you are calling is not available. Please leave a message after the beep."),
    voicemail("Please leave your message after the tone."),
    voicemail("Hi, the person you're calling is using a screening service from Google and will get "
              "a copy of this conversation. Go ahead and say your name and why you're calling.",
              "call screening"),
    voicemail("您好，我是小布，机主的通话助理，请问您有什么事吗"),
    voicemail("您好，机主正在忙，我是他的AI秘书，您可以跟我说"),
    voicemail("你好，我是来电秘书，机主暂时不能接听"),
    voicemail("喂，您好，我是机主的私人助理小艺，他现在不方便接电话"),
    voicemail("您好，欢迎使用来电留言服务，请在提示音后开始留言"),
    voicemail("您好，我是机主的来电助理，请问您是哪位，找他有什么事"),
    voicemail("Hello, I'm the virtual assistant of this phone's owner, how can I help you?"),
    voicemail("您好，这里是语音留言信箱"),
    voicemail("您好，机主设置了来电助理为您服务，请说出您的来意"),
    voicemail("你好 我是机主的智能助理 他现在不方便接听 有什么事我可以帮你转告", "ASR spaces"),
    voicemail("您好，我是机主的语音助手，机主现在不方便接电话，请问有什么事吗？"),
    # -- IVR menus and switchboards -------------------------------------------------------
    ivr("欢迎致电中国移动，话费查询请按1，业务办理请按2，人工服务请按0。"),
    ivr("您好，欢迎致电某某银行，个人业务请按1，信用卡业务请按2"),
    ivr("普通话服务请按1，For English service, please press 2."),
    ivr("欢迎来电，请直拨分机号，查号请按0"),
    ivr("您好，欢迎致电物业服务中心，请拨分机号，人工服务请按零"),
    ivr("Welcome to ABC company. For sales, press 1. For support, press 2."),
    ivr("Thank you for calling. Your call is important to us. Please hold."),
    ivr("您的来电已进入排队，为了保证服务质量，您的通话可能会被录音"),
    ivr("请按井号键结束"),
    ivr("查询余额请按1，转账汇款请按2，返回上一级请按星号键"),
    ivr("您好，这里是某某公司总机，请直拨分机号，查号请按零"),
    ivr("欢迎使用中国电信自助服务"),
    ivr("请输入您的分机号码，以井号键结束"),
    ivr("正在为您转接，请稍候"),
    ivr("please enter your extension number followed by the pound key"),
    ivr("To continue in English, press 9."),
    ivr("请按一", "a fragment"),
    ivr("您已进入某某酒店服务热线，订房请按1"),
    ivr("请按1号键确认"),
    ivr("请按#号键返回"),
    ivr("歡迎致電，查詢請按1", "traditional"),
    # -- people picking up ----------------------------------------------------------------
    person("喂"),
    person("喂？"),
    person("喂你好"),
    person("喂，你好"),
    person("你好"),
    person("您好"),
    person("哪位"),
    person("喂哪位"),
    person("你好哪位"),
    person("谁啊"),
    person("喂，谁啊？"),
    person("嗯对是我"),
    person("对，是我"),
    person("是我，你说"),
    person("喂您好请讲"),
    person("hello"),
    person("Hello? Who is this?"),
    person("喂，你好，请问你是哪位"),
    person("嗯"),
    person("喂喂喂"),
    person("喂，听得到吗"),
    person("什么事"),
    person("有什么事吗"),
    person("你好，请说"),
    person("喂，在的"),
    person("Yes, speaking."),
    person("喂你好我在开车你说", "longer than a greeting"),
    person("我现在在开会，有什么事", "longer than a greeting"),
    person("喂，我是张伟，你哪位", "a name"),
    person("喂，哪个公司的"),
    person("你们是干什么的"),
    person("打错了吧"),
    # -- people using a machine's words ---------------------------------------------------
    lookalike("我手机快关机了你快说"),
    lookalike("我现在正忙待会打"),
    lookalike("这不是空号我就是机主"),
    lookalike("喂，我手机没电了马上关机，你长话短说"),
    lookalike("我刚开机，你刚才打过电话吗"),
    lookalike("我在通话中，你稍后再打"),
    lookalike("不在服务区？我这信号挺好的啊"),
    lookalike("我正在通话，等下打给你"),
    lookalike("你拨打的是空号吗？不是啊，我就是本人", "repeats a lead, says who they are"),
    lookalike("我的号码不是空号，你们搞错了"),
    lookalike("停机了？没有啊，我刚交了话费"),
    lookalike("我暂时无法接听，等会回你"),
    lookalike("我现在不方便接听，你发短信吧"),
    lookalike("你好，我是他的助理，王总在开会", "a human assistant"),
    lookalike("我是机主的老婆，他不在"),
    lookalike("我就是机主，你说吧"),
    lookalike("留言？我不用留言，你直接说"),
    lookalike("喂，刚才是你打的吗？我手机关机了"),
    lookalike("我是本人，请讲"),
    lookalike("你按1是什么意思"),
    lookalike("欢迎欢迎，你说"),
    lookalike("正忙着呢，一会儿再说"),
    lookalike("喂，你是机器人吗"),
    lookalike("我这信号不好，听不清，你大声点"),
    lookalike("我的电话欠费了刚充值"),
    lookalike("我不是智能助理，我是真人"),
    lookalike("Sorry, I'm busy right now, call me later"),
    lookalike("hello, my phone is about to power off, make it quick"),
    lookalike("我现在正忙，你稍后再打吧"),
    lookalike("喂，你说的那个号码已经停机了，换这个号码吧"),
    lookalike("我是机主，这不是空号"),
    lookalike("通话中呢，你等一下"),
    # -- nothing heard --------------------------------------------------------------------
    empty(""),
    empty(" "),
    empty("。。。"),
    empty("，"),
    empty("？"),
)

# Written after the cue tables were tuned on CASES, and never tuned on since: the bench
# reports them apart, as the closest thing this corpus has to an independent check.
HELD_OUT: tuple[FirstUtterance, ...] = (
    carrier("您好，您所拨打的用户已关机，请稍后再拨", "powered_off"),
    carrier("对不起，您拨打的电话号码是空号，请您查证后再拨", "vacant"),
    carrier("您拨打的电话正忙，请稍后再拨", "busy"),
    carrier("您拨打的用户暂时无法接通，sorry, the subscriber you dialed cannot be connected at the "
            "moment", "unreachable"),
    carrier("您拨打的电话已停机，sorry the number you dialed is out of service", "suspended"),
    carrier("sorry the subscriber you dialed is power off please dial later", "powered_off"),
    carrier("您拨打的电话暂时无人接听，请稍后再拨", "unreachable"),
    carrier("对不起，您拨打的电话不在服务区，请稍后再拨", "unreachable"),
    carrier("您所拨打的号码已停机", "suspended"),
    carrier("您好，您拨打的电话正在通话中，请不要挂机，正在为您接通", "busy"),
    voicemail("您好，我是机主的智能语音助理，请问有什么可以帮您"),
    voicemail("您好，机主暂时无法接听电话，您可以跟我说，我会帮您转达"),
    voicemail("Sorry, I can't take your call right now, please leave a message."),
    voicemail("嘀声后请留言"),
    ivr("欢迎致电中国联通，请按1"),
    ivr("您好，欢迎致电，业务咨询请按1，投诉建议请按2"),
    ivr("For service in English, press 1"),
    person("喂，谁呀"),
    person("你好，哪位啊"),
    person("嗯，是我，什么事"),
    person("喂喂，你好"),
    lookalike("我关机了一会儿，刚开"),
    lookalike("我的号码没停机啊"),
    lookalike("你打的这个号码不是空号"),
    lookalike("我在忙，你稍后再拨过来吧"),
    lookalike("我手机不在服务区，信号差"),
    lookalike("我是机主的儿子，我爸不在"),
    lookalike("你是语音助手吗"),
    lookalike("留个言吧，我回头看"),
    lookalike("按1是吗，我按了"),
)
