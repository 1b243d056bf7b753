"""Helpers of the speech guard and filler tests (no tests here).

    book = lexicon_book(("finance", "replace", ["稳赚"], [], "具体收益以合同为准。"), ...)
    h = await guarded_service(emulator, model, book)      # a ChatService reading `box`
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from callout_server.config.settings import ChatSettings
from callout_server.lexicons.book import CompiledLexicon, LexiconBook
from callout_server.llm.client import LLMClient
from callout_server.phrases import Lexicon
from callout_server.tiers.chat.service import ChatService
from tests.support.chat import FakeRecorder, Harness, make_cfg

Row = tuple[str, str, list[str], list[str], str | None]  # name, action, terms, allow, replacement


def lexicon_book(*rows: Row) -> LexiconBook:
    now = datetime.now(UTC)
    return LexiconBook(CompiledLexicon(name, action, replacement, 1, now, Lexicon(terms, allow))
                       for name, action, terms, allow, replacement in rows)


FINANCE: Row = ("finance", "replace", ["保本", "稳赚", "零风险"], ["确保本月", "担保本金"],
                "具体收益以合同为准。")
PLATFORM: Row = ("platform", "drop", ["加微信", "wechat"], [], None)
STOP: Row = ("stop", "end_turn", ["内部价"], [], None)


class Books:
    """The live book a service reads; tests swap `current` as an operator's save would."""

    def __init__(self, book: LexiconBook) -> None:
        self.current = book

    def __call__(self) -> LexiconBook:
        return self.current


async def guarded_service(emulator: Any, model: str, books: Books, **settings: Any) -> Harness:
    llm = LLMClient()
    recorder = FakeRecorder()
    box = {"cfg": make_cfg(emulator, model)}
    service = ChatService(llm, lambda: box["cfg"], ChatSettings(**settings), recorder,  # type: ignore[arg-type]
                          lexicons=books)
    await service.start()
    return Harness(service, llm, recorder, box)
