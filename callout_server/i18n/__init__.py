"""The server's two languages: the caller's choice, the message catalogue, validation text.

A ground-floor package: it imports nothing of the project, and everything that renders text
for a caller imports it. Public surface:

    Locale, LOCALES, negotiate, current, using, enter, leave     (locale.py)
    Msg, msg, text, render_value, Renderable, COLON, SEMICOLON, MESSAGES  (catalogue.py)
    invalid, field_message, json_reason                          (validation.py)
"""

from callout_server.i18n.catalogue import (
    COLON,
    MESSAGES,
    SEMICOLON,
    Msg,
    Renderable,
    msg,
    render_value,
    text,
)
from callout_server.i18n.locale import LOCALES, Locale, current, enter, leave, negotiate, using
from callout_server.i18n.validation import field_message, invalid, json_reason

__all__ = [
    "COLON", "LOCALES", "MESSAGES", "SEMICOLON", "Locale", "Msg", "Renderable", "current", "enter",
    "field_message", "invalid", "json_reason", "leave", "msg", "negotiate", "render_value",
    "text", "using",
]
