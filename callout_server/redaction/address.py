"""Street addresses (optional kind, off by default): the part that leads to a door.

A road and its number (`建国路88号`), with what follows it (`院3号楼2单元1201室`), or a
residential compound with a building or room (`阳光花园5栋1201`); in English a house number,
a capitalised street name and a street word (`221 Baker Street, Apt 4`). A province, city or
district alone (`北京市朝阳区`) says where, not who: it stays as said, and so does a road
without a number (`人民路地铁站`) or a metro line (`3号线`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_NUM = "0-9０-９零一二三四五六七八九十百幺两"
_ROAD = "路|大街|街|大道|巷|弄|胡同|里"
_TAIL = (rf"(?:院|号院)?(?:[\u4e00-\u9fff]{{2,6}}?(?:园|大厦|中心|广场|大楼))?(?:[{_NUM}A-Za-z]+(?:-[{_NUM}]+){{0,3}}"
         rf"(?:号楼|号院|栋|幢|座|单元|楼|层|室|号|户)?){{0,5}}")
_STREET = re.compile(rf"([\u4e00-\u9fff]{{2,6}}?)(?:{_ROAD})[{_NUM}]+(?:-[{_NUM}]+)?号{_TAIL}")
_COMPOUND = re.compile(
    rf"([\u4e00-\u9fff]{{2,6}}?)(?:小区|花园|公寓|大厦|家园|新村|新城|苑)"
    rf"(?:[{_NUM}A-Za-z]+(?:-[{_NUM}]+){{0,3}}(?:号楼|栋|幢|座|单元|楼|层|室|号|户)){{1,5}}")
_EN = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St\.?|Road|Rd\.?|Avenue|Ave\.?|Lane|Ln\.?"
    r"|Drive|Dr\.?|Boulevard|Blvd\.?|Way|Court|Ct\.?)(?![A-Za-z])"
    r"(?:,?\s*(?:Apt\.?|Apartment|Suite|Unit|#)\s*[A-Za-z0-9-]+)?")
# Where a road name cannot start: the end of a cue or of an administrative division.
_LEFT = re.compile(r".*(?:住在|住|地址是|地址|寄到|送到|在|到|放|给|去|来|省|市|区|县|镇|乡|街道|是)")


class AddressMatch(NamedTuple):
    start: int
    end: int
    value: str


def _trim(text: str, m: re.Match[str]) -> int:
    """The road name's real start: after the last cue or division word inside group 1."""
    left = _LEFT.match(m.group(1))
    return m.start() + (left.end() if left else 0)


def find_addresses(text: str) -> list[AddressMatch]:
    found: list[AddressMatch] = []
    for pattern in (_STREET, _COMPOUND):
        for m in pattern.finditer(text):
            start = _trim(text, m)
            end = m.end()
            if end - start >= 4 and not any(f.start < end and start < f.end for f in found):
                found.append(AddressMatch(start, end, text[start:end]))
    for m in _EN.finditer(text):
        found.append(AddressMatch(m.start(), m.end(), m.group(0)))
    found.sort(key=lambda f: f.start)
    return found
