"""Utterances as ASR writes them, with the personal values and the decoys marked.

Markup: `{m:138 0013 8000}` marks a value of a kind (m mobile, l landline, i id_number,
c bank_card, e email, n name, a address); `[[10086]]` marks a decoy, text that is not personal
data and must come out byte for byte. Everything unmarked must come out unchanged too.

Built from fixed values (checksum-valid where the kind has one) spelled every way a
transcript spells them: digits grouped 3-4-4 with spaces, dashes or Chinese commas, +86/0086,
Chinese digits with 幺/〇/两, financial numerals, full-width digits, English words, mixed
scripts; and decoys: times, dates, prices and amounts, counts, durations, hotlines, 400/800
lines, order, contract and tracking numbers, tail numbers, codes. Chinese and English.

Used by tests/test_redaction_corpus.py and bench/bench_redaction.py. The corpus is ours: a
score on it is not an independent check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = {"m": "mobile", "l": "landline", "i": "id_number", "c": "bank_card", "e": "email",
         "n": "name", "a": "address"}


@dataclass(frozen=True, slots=True)
class Value:
    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Utterance:
    id: str
    text: str
    values: tuple[Value, ...]
    decoys: tuple[tuple[int, int], ...]
    lang: str  # zh | en


_MARK = re.compile(r"\{([mlicena]):([^{}]+)\}|\[\[(.+?)\]\]")


def parse(id: str, marked: str) -> Utterance:
    out, values, decoys, at = [], [], [], 0
    pos = 0
    for m in _MARK.finditer(marked):
        out.append(marked[at:m.start()])
        pos += m.start() - at
        inner = m.group(2) if m.group(1) else m.group(3)
        if m.group(1):
            values.append(Value(KINDS[m.group(1)], pos, pos + len(inner), inner))
        else:
            decoys.append((pos, pos + len(inner)))
        out.append(inner)
        pos += len(inner)
        at = m.end()
    out.append(marked[at:])
    text = "".join(out)
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", re.sub(r"\{[^}]*\}|\[\[.*?\]\]", "", marked)) \
        else "en"
    return Utterance(id, text, tuple(values), tuple(decoys), lang)


# -- spellings --------------------------------------------------------------------------------
_HAN = "零一二三四五六七八九"
_WORDS = "zero one two three four five six seven eight nine".split()


def han(d: str, one: str = "一", zero: str = "零", two: str = "二") -> str:
    return "".join({"1": one, "0": zero, "2": two}.get(c, _HAN[int(c)]) if c.isdigit() else
                   ("叉" if c == "X" else c) for c in d)


def fin(d: str) -> str:
    return "".join("零壹贰叁肆伍陆柒捌玖"[int(c)] for c in d)


def full(d: str) -> str:
    return "".join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in d)


def words(d: str) -> str:
    return " ".join(_WORDS[int(c)] for c in d)


def grp(d: str, sizes: tuple[int, ...], sep: str = " ") -> str:
    parts, at = [], 0
    for n in sizes:
        parts.append(d[at:at + n])
        at += n
    if at < len(d):
        parts.append(d[at:])
    return sep.join(parts)


MOBILES = ("13872837651", "13968321065", "13530882385", "18690850180", "15811912484",
           "17756998855", "19903854033", "14701540511", "16675227466", "18352643839",
           "15050748831", "13123482704", "18932187528", "17661536297", "19868067753",
           "13640112713")
IDS = ("110105196304016272", "310104198303231237", "440305200211128116", "510107196004099827",
       "330106195806201833", "320102199011249463", "420111198212025904", "370202195610093188",
       "610113198104068702", "500103196210179601", "210102200110027153", "350203197510112646",
       "31010419840406030X", "61011319790606336X", "21010220020421710X")
CARDS = ("6222021036129701788", "6217002947715194100", "6228482851512964200", "6225881351384713",
         "4367422041979365", "6259115182036906", "5240473376067433", "3568333141922503",
         "9558800729407040371", "6226093786255406", "6214836912985484", "4033914344825877")
LANDLINES = (("010", "62345678"), ("021", "54871236"), ("0755", "86713542"), ("020", "38291745"),
             ("0571", "87246613"), ("028", "85126734"), ("0512", "65238871"), ("023", "63578921"))

MOBILE_SPELLINGS = (
    lambda d: d,
    lambda d: grp(d, (3, 4), " "),
    lambda d: grp(d, (3, 4), "-"),
    lambda d: grp(d, (3, 4), "，"),
    lambda d: "+86 " + grp(d, (3, 4), " "),
    lambda d: "0086-" + d,
    lambda d: "+86" + d,
    lambda d: han(d),
    lambda d: han(d, one="幺"),
    lambda d: grp(han(d, one="幺"), (3, 4), " "),
    lambda d: han(d, zero="〇"),
    lambda d: d[:3] + han(d[3:7]) + d[7:],
    lambda d: full(d),
    lambda d: " ".join(d),
    lambda d: grp(han(d, one="幺"), (3, 4), "，"),
    lambda d: han(d, two="两", one="幺"),
    lambda d: grp(d, (3,), " "),
    lambda d: "(+86) " + grp(d, (3, 4), "-"),
    lambda d: grp(d, (3, 4), ". "),
    lambda d: han(d[:3], one="幺") + " " + d[3:],
    lambda d: fin(d),
    lambda d: "86-" + grp(d, (3, 4), "-"),
)
ZH_MOBILE = (
    "我的手机号是{}",
    "你打{}就行，白天都在",
    "号码是{}。",
    "嗯，换个号吧，{}，这个是我微信同号",
    "联系电话{}",
    "我老婆的电话是{}，你找她",
    "{}，你记一下",
    "打这个{}找王经理",
    "我新换的号码{}，原来那个不用了",
    "您好，我留一下电话：{}，谢谢",
    "手机{}，下午[[三点]]以后打",
    "就是{}这个号",
)
EN_MOBILE = (
    "my number is {}",
    "you can reach me at {} after [[6 pm]]",
    "call me on {}, thanks",
    "the best number is {}.",
)
ENGLISH_WORD_MOBILES = (
    "my number is {m:one three eight seven two eight three seven six five one}",
    "it's {m:one three nine, six eight three two, one zero six five}",
    "call {m:one five eight, one one nine one, two four eight four}, ask for Li",
    "{m:One Eight Six Nine Zero Eight Five Zero One Eight Zero}",
    "the number is {m:one three five three zero double eight two three eight five}",
)


def _mobiles() -> list[str]:
    out = []
    k = 0
    for rnd in range(3):
        for s, spell in enumerate(MOBILE_SPELLINGS):
            d = MOBILES[(s + rnd * 5) % len(MOBILES)]
            said = spell(d)
            if said.isascii() and rnd == 2 and s % 3 == 0:
                out.append(EN_MOBILE[k % len(EN_MOBILE)].format("{m:" + said + "}"))
            else:
                out.append(ZH_MOBILE[k % len(ZH_MOBILE)].format("{m:" + said + "}"))
            k += 1
    for s, d in enumerate(MOBILES[:8]):
        out.append(EN_MOBILE[s % len(EN_MOBILE)].format("{m:" + grp(d, (3, 4), " ") + "}"))
    return out + list(ENGLISH_WORD_MOBILES)


def _landlines() -> list[str]:
    a = LANDLINES
    return [
        f"我家座机是{{l:{a[0][0]}-{a[0][1]}}}",
        f"办公室电话{{l:({a[1][0]}){a[1][1]}}}，工作日打",
        f"打{{l:（{a[2][0]}）{grp(a[2][1], (4,))}}}找前台",
        f"公司电话是{{l:{a[3][0]} {grp(a[3][1], (4,))}}}",
        f"座机{{l:{a[4][0]}{a[4][1]}}}",
        f"总机{{l:{a[5][0]}-{a[5][1]}转8021}}",
        f"电话{{l:{a[6][0]}-{a[6][1]}-312}}，分机要说清楚",
        f"打{{l:{a[0][0]}-{grp(a[0][1], (4,))} 分机 6603}}就行",
        f"{{l:{han(a[0][0], one='幺')} {grp(han(a[0][1]), (4,))}}}，这个是家里的",
        f"座机号{{l:{han(a[7][0], two='两')}杠{han(a[7][1])}}}",
        f"我们单位是{{l:+86 {a[1][0][1:]} {grp(a[1][1], (4,))}}}",
        f"please call the office on {{l:({a[2][0]}) {grp(a[2][1], (4,), '-')} ext. 15}}",
        f"home phone {{l:{a[3][0]}-{a[3][1]}}}",
        f"固话是{{l:{grp(a[4][1], (4,))}}}，区号就是杭州的",
        f"座机是{{l:{a[5][1]}}}",
        f"你打{{l:0086 {a[6][0][1:]} {a[6][1]}}}也行",
        f"单位电话{{l:{a[7][0]}-{grp(a[7][1], (4,), '-')}}}",
        f"电话是{{l:{a[2][0]}，{grp(a[2][1], (4,), '，')}}}",
        f"or the landline, {{l:{a[0][0]} {grp(a[0][1], (4,))}}}",
        f"家里电话{{l:{full(a[3][0] + '-' + a[3][1])}}}",
        f"前台{{l:{a[1][0]}-{a[1][1]}转{han('806')}}}",
        f"电话{{l:{a[5][0]}-{a[5][1]}}}，手机{{m:{MOBILES[3]}}}",
    ]


def _ids() -> list[str]:
    sp = (
        lambda d: d,
        lambda d: d[:-1] + d[-1].lower(),
        lambda d: grp(d, (6, 8), " "),
        lambda d: grp(d, (6, 4, 4), " "),
        lambda d: han(d, one="幺"),
        lambda d: han(d),
        lambda d: grp(d, (6, 8), "-"),
        lambda d: full(d),
        lambda d: d[:6] + han(d[6:14]) + d[14:],
        lambda d: grp(han(d, one="幺"), (6, 8), "，"),
    )
    zh = ("我的身份证号是{}", "身份证{}", "证件号码：{}", "{}，这个是我身份证", "我身份证号{}，你核对一下")
    en = ("my ID number is {}", "ID card {}, please check", "it's {}")
    out = []
    for k, d in enumerate(IDS):
        for r in range(2):
            spell = sp[(k + r * 3) % len(sp)]
            said = spell(d)
            tpl = en[(k + r) % len(en)] if said.isascii() and (k + r) % 4 == 0 else zh[(k + r) % len(zh)]
            out.append(tpl.format("{i:" + said + "}"))
    out.append("身份证号{i:110105196304016271}，最后一位可能听错了")  # misheard check digit
    out.append("身份证号码是{i:44030520021112811X}")  # check digit wrong but cued
    return out


def _cards() -> list[str]:
    sp = (
        lambda d: d,
        lambda d: grp(d, (4, 4, 4, 4), " "),
        lambda d: grp(d, (4, 4, 4, 4), "-"),
        lambda d: han(d),
        lambda d: grp(han(d, one="幺"), (4, 4, 4, 4), " "),
        lambda d: grp(d, (6,), " "),
        lambda d: grp(d, (4, 4, 4, 4), "，"),
        lambda d: d[:4] + " " + han(d[4:8]) + " " + d[8:],
    )
    zh = ("我的卡号是{}", "银行卡{}，工商银行的", "打到这张卡上：{}", "{}，这是我的储蓄卡",
          "信用卡号{}")
    en = ("my card number is {}", "the card is {}")
    out = []
    for k, d in enumerate(CARDS):
        for r in range(2):
            said = sp[(k + r * 5) % len(sp)](d)
            tpl = en[(k + r) % len(en)] if said.isascii() and (k + r) % 3 == 0 else zh[(k + r) % len(zh)]
            out.append(tpl.format("{c:" + said + "}"))
    out.append("卡号{c:6222021036129701789}，我再念一遍")  # Luhn fails (misheard), cued
    out.append("卡号是{c:6222 0210 3612 9701 788}，尾号[[1788]]")
    return out


EMAILS = (
    "我的邮箱是{e:zhangwei@qq.com}",
    "发到{e:li.na_88@163.com}就行",
    "邮箱{e:wangfang1990@126.com}，谢谢",
    "{e:ZhangWei@Gmail.com}，这是我的邮箱",
    "my email is {e:john.smith@outlook.com}",
    "send it to {e:mary_chen2021@yahoo.com.cn} please",
    "邮箱是{e:zhangwei艾特qq点com}",
    "我的邮箱{e:zhang wei 艾特 qq 点 com}",
    "{e:lina 艾特 一六三 点 com}",
    "my email is {e:zhang wei at gmail dot com}",
    "it's {e:john dot smith at outlook dot com}",
    "{e:wang_fang88 at hotmail dot com}",
    "邮箱{e:一二三四五六七八九 at qq dot com}",
    "邮箱地址是{e:987654321@qq.com}",
    "你发{e:chenjie圈a sina点com}吧",
    "email address: {e:a.b-c+tag@company.cn}",
    "mail me at {e:tom2020@icloud.com}",
    "邮箱是 {e:liu_yang @ foxmail.com}",
    "我的QQ邮箱{e:13872837651@qq.com}",
    "{e:zhao.lei@sina.com}，手机{m:13968321065}",
    "my mailbox is {e:wei zhang at qq dot com}",
    "e-mail: {e:huang.li@mail.example.cn}",
    "发{e:sun.qi 艾特 gmail 点 com}，我查一下",
    "邮箱{e:zhouming@yeah.net}",
    "contact {e:support-team@acme.io} for details",
    "地址发到{e:xu_jing@aliyun.com}",
    "my email, {e:kevin dot lin at gmail dot com}",
    "邮件地址是{e:gao.yan＠qq.com}",
)
EMAIL_DECOYS = (
    "you can look at [[google dot com]] for that",
    "我在[[www.baidu.com]]上看到的",
    "头像是[[icon@2x.png]]",
    "@张三 你好，明天[[十点]]开会",
    "I'm at home now",
    "meet me at [[3 dot 15]]",
    "官网是[[jd.com]]",
    "see you at the office",
    "测试地址 [[test@example.com]] 不用管",
)


NAMES = (
    "我叫{n:张伟}，电话{m:13530882385}",
    "我姓{n:王}",
    "免贵姓{n:刘}",
    "我是{n:李娜}，上次跟你们联系过",
    "您好，我是{n:陈}先生",
    "我的名字是{n:欧阳娜娜}。",
    "本人叫{n:赵磊}",
    "my name is {n:John Smith}",
    "this is {n:Mary} from the sales team",
    "hi, my name's {n:Kevin Lin}, I called yesterday",
    "我叫{n:孙丽}，丽是美丽的丽",
    "我这边是{n:周}女士",
    "call me {n:Tom}",
    "我叫{n:黄晓明}，身份证{i:310104198303231237}",
)
NAME_DECOYS = (
    "我是学生，没有收入",
    "我是马上要出门了",
    "我是本人",
    "我是他妈妈",
    "我是想问一下[[利率]]",
    "我是做销售的",
    "我是高中老师",
    "this is a test call",
    "I'm busy right now",
    "我是说[[下周一]]再打",
    "叫我小王就行",
)
ADDRESSES = (
    "我住在北京市朝阳区{a:建国路88号院3号楼1201室}",
    "寄到{a:阳光花园5栋2单元1201室}",
    "地址是上海市徐汇区{a:漕溪北路398号}",
    "送到{a:中山北路123号}，门卫那里",
    "I live at {a:221 Baker Street, Apt 4}",
    "the address is {a:1600 Pennsylvania Avenue}",
    "家在深圳市南山区{a:科技园南路18号}",
    "快递放{a:翠湖小区3号楼}门口",
    "寄到杭州市西湖区{a:文三路90号东部软件园2号楼}",
)
ADDRESS_DECOYS = (
    "在[[人民路]]地铁站下车",
    "坐[[3号线]]过来",
    "我在北京市朝阳区",
    "[[5号楼]]下面等你",
    "约在[[中山路]]那边",
)

DECOYS = (
    # times, dates, durations
    "明天下午[[三点半]]打给我",
    "会议定在[[14:30]]",
    "早上[[8点到10点]]不方便",
    "[[2024年3月15日]]下午[[两点]]",
    "日期是[[20240315]]",
    "时间戳[[2024-03-15 14:30:00]]",
    "周六上午[[十点]]再说吧",
    "我等了[[40分钟]]了",
    "用了[[两年]]多",
    "分[[18个月]]还",
    "the meeting is at [[3:30 pm]] on [[March 15]]",
    "I waited [[25 minutes]]",
    "[[二零二四年三月十五号]]",
    "[[2024/03/15]]到期",
    # prices and amounts
    "每月[[199元]]",
    "一共是[[三千五百八十块]]",
    "贷款额度是[[200000元]]",
    "年化利率[[3.85%]]",
    "您的账单金额是[[12,345.67元]]",
    "欠款[[一万三千八百元]]",
    "合计[[RMB 1,380,000]]",
    "it costs [[$1,299.99]]",
    "总价[[13,800,138,000]]元",
    "余额[[13800138000.00]]",
    "额度[[¥13800138000]]",
    "一共[[13872837651元]]",
    "price is [[15,000 yuan]]",
    "[[1380013800]] dollars in total",
    # counts
    "我们家[[3个人]]",
    "打了[[5次]]了",
    "[[一二三四五六]]，数到六",
    # hotlines, company lines
    "有问题打[[10086]]",
    "我要打[[12315]]投诉你们",
    "工行客服[[95588]]",
    "客服电话[[400-820-8820]]",
    "拨打[[4008208820]]",
    "[[800-810-8888]]是免费的",
    "打[[12345]]市民热线",
    "报警打[[110]]",
    "联通[[10010]]",
    "招行[[95555]]",
    "热线[[四零零八二零八八二零]]",
    "call [[400 820 8820]] for service",
    "[[+86 400 820 8820]]",
    "[[021-95588]]",
    # order, contract, tracking numbers, codes, tail numbers
    "订单号[[2024031512345678]]",
    "订单号是[[6222021036129701788]]",
    "订单编号 [[4367 4220 4197 9365]]",
    "合同编号[[HT-2024-0315-0088]]",
    "合同号 [[310104198303231237]]",
    "快递单号[[SF1380013800012]]",
    "运单号[[773012345678901]]",
    "[[JD0012345678901]]",
    "尾号[[1234]]的卡",
    "卡号后四位是[[5678]]",
    "手机尾号[[8000]]",
    "the card ending in [[4821]]",
    "验证码是[[382916]]",
    "your order [[20240315123456]] has shipped",
    "reference number [[6225881351384713]]",
    "tracking number [[13872837651]]",
    "流水号[[13968321065]]",
    "工单号：[[19903854033]]",
    "发票号码[[44030520021112811]]",
    "[[1710489600]]",
    "IP是[[192.168.1.100]]",
    "版本[[v2.3.1]]",
    "型号[[ABC13872837651]]",
    "[[12345678901]]这个号码不对",
    "[[11111111111]]",
    "编号[[15400001234]]",
    "保单号[[6259115182036906]]",
    "ticket [[5240473376067433]]",
    "case no. [[3568333141922503]]",
    "航班[[CA1234]]",
    "房号[[1201]]",
    "[[1,234,567,890]]",
    "第[[一]]个问题",
    "[[一三八]]块钱",
    "[[two three]] people",
    "我在[[三楼]]",
    "[[123 456 789]]",
)
MIXED = (
    "明天[[三点]]打{m:13872837651}，订单号[[2024031512345678]]",
    "{m:138 7283 7651}，不是[[10086]]",
    "我要[[3个]]，{m:13968321065}",
    "身份证{i:110105196304016272}，手机{m:135 3088 2385}，卡号{c:6222 0210 3612 9701 788}",
    "分[[12期]]，每期[[199元]]，扣款卡{c:4367422041979365}",
    "[[2024-03-15]] {m:18690850180}",
    "my number is {m:158 1191 2484} and my card is {c:6225 8813 5138 4713}",
    "打{m:17756998855}或者{m:19903854033}都行",
    "{m:13872837651}，{m:13968321065}",
    "预约[[周三下午两点]]，电话{m:幺三五 三零八八 二三八五}，尾号[[2385]]",
    "账户余额[[1,380.50元]]，手机{m:+86 186 9085 0180}",
    "[[400-820-8820]]转人工，或者打我手机{m:18352643839}",
    "订单号[[6228482851512964200]]，退款到{c:6217 0029 4771 5194 100}",
    "收件人电话{m:150 5074 8831}，地址在[[5号楼]]",
)
# Written after the detector was frozen, without running it; bench/README.md gives the first
# run's figures on these before anything was changed for them.
HELDOUT = (
    "我手机是{m:一三八 零零一三 八零零零}",
    "电话：{m:138-0013-8000}。",
    "call me at {m:139 1234 5678} tomorrow",
    "号码{m:幺三九，幺二三四，五六七八}",
    "我的号是 {m:+86-139-1234-5678}",
    "{m:１８６ ００１０ ２２３３}",
    "手机号码是{m:1 8 6 0 0 1 0 2 2 3 3}",
    "你记一下啊，{m:一五九，二六八八，三四二一}",
    "{m:18600102233}和{m:13912345678}都是我的",
    "My cell is {m:(+86) 186-0010-2233}.",
    "打我电话{m:幺八六零零幺零两两三三}",
    "就是那个{m:一八六零零一零二二三三}嘛",
    "我换号了现在是{m:15012345678}以前那个不用了",
    "{m:one eight six, double oh one oh, two two three three}",
    "家里座机{l:0571-8888 1234}",
    "打单位电话{l:025-52341234转601}",
    "办公室是{l:（021）6888-1234}",
    "landline {l:010 8765 4321}",
    "身份证号码：{i:320102199003078916}",
    "我的身份证是{i:440106 19851122 0040}",
    "身份证{i:五幺零幺零三幺九七七零八幺五三五二八}",
    "ID number {i:130102199202290017}",
    "卡号{c:6227 0012 3456 7890 121}",
    "打到{c:6229083344556673}这张卡",
    "银行卡号是{c:六二一二 二六一零 零零一二 三四五六 七八一}",
    "my card is {c:6258-0799-8877-6654}",
    "邮箱是{e:wang.xiaoming@sina.cn}",
    "my email's {e:chen underscore li at gmail dot com}",
    "发我邮箱 {e:liming2008 艾特 163 点 com}",
    "下周二上午[[10:30]]面谈",
    "费用是[[1,280元]]每年",
    "您的快递单号[[YT1234567890123]]已签收",
    "已经逾期[[45天]]了",
    "预约号[[A0237]]",
    "分机号是[[8021]]",
    "打[[95566]]问一下",
    "积分还有[[138001]]分",
    "房贷每月还[[4,350.00元]]",
    "订单尾号[[8000]]",
    "[[2023年12月31日]]之前",
    "车牌[[京A12345]]",
    "我[[1980年]]出生的",
    "转账金额[[13800元]]",
    "客服热线[[400 600 8888]]",
    "请拨打 [[10010]] 转 [[2]]",
    "合同编号：[[20231231000123]]",
    "一共[[12个月]]，每个月[[1380元]]",
    "邮编[[100086]]",
    "order #[[13800138000]]",
    "会员卡号后四位是[[6666]]",
    "ref: [[6227001234567890121]]",
    "the total is [[13,800,138]] dollars",
)


def _build() -> tuple[Utterance, ...]:
    groups = {
        "mobile": _mobiles(), "landline": _landlines(), "id": _ids(), "card": _cards(),
        "email": list(EMAILS), "email_decoy": list(EMAIL_DECOYS), "name": list(NAMES),
        "name_decoy": list(NAME_DECOYS), "address": list(ADDRESSES),
        "address_decoy": list(ADDRESS_DECOYS), "decoy": list(DECOYS), "mixed": list(MIXED),
        "heldout": list(HELDOUT),
    }
    return tuple(parse(f"{g}_{k:03d}", s) for g, items in groups.items()
                 for k, s in enumerate(items))


CORPUS: tuple[Utterance, ...] = _build()
