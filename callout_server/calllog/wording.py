"""A call-log record's message and advice, worded when it is read, in the reader's language.

Records hold a diagnostic as code + numbers (`reason`, `reason_args`, `detail`); the words
come from `Diagnostic`. Records written before that (0005_i18n) hold finished text in the
server's language of the time: shown as stored to a reader of that language, else worded
again from the code and numbers they do hold (without the detail their text carried).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from callout_server.llm import Diagnostic

if TYPE_CHECKING:
    from callout_server.calllog.models import LLMCallLog
    from callout_server.i18n import Locale

_HAN = re.compile("[\u4e00-\u9fff]")


def language_of(text: str) -> Locale:
    return "zh" if _HAN.search(text) else "en"


def worded(row: LLMCallLog, locale: Locale) -> tuple[str | None, str | None]:
    """(message, advice) of one record in `locale`; (None, None) for a success."""
    if row.code == "ok":
        return row.message, row.advice
    if row.message is not None and language_of(row.message) == locale:
        return row.message, row.advice  # written before 0005 by a server speaking `locale`
    diagnostic = Diagnostic(
        code=row.code, finish_reason=row.finish_reason, max_tokens=row.max_tokens,
        prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens,
        reasoning_tokens=row.reasoning_tokens, status=row.status, detail=row.detail,
        reason=row.reason, args=row.reason_args)
    try:
        return diagnostic.message_in(locale), diagnostic.advice_in(locale)
    except KeyError:  # a code this version does not word (written by a newer one)
        return row.message, row.advice
