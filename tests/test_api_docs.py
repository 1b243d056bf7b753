"""/docs and /redoc work on an intranet with no internet access: every asset they load is
served by the server itself."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
async def test_the_api_docs_load_nothing_from_elsewhere(app_client, path: str) -> None:
    r = await app_client.get(path)
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?['"]([^'"]+)['"]""", r.text)
    urls = [u for pair in urls for u in pair if u]
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    assert "fonts.googleapis" not in r.text and "cdn.jsdelivr" not in r.text
    for url in urls:
        assert (await app_client.get(url)).status_code == 200, url
    assert (await app_client.get("/openapi.json")).json()["info"]["title"] == "callout-server"
