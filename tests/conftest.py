"""Shared test set-up. Fixtures live in tests/fixtures/, one module per concern."""

pytest_plugins = [
    "tests.fixtures.emulator",
    "tests.fixtures.database",
    "tests.fixtures.upstream",
    "tests.fixtures.calllog",
    "tests.fixtures.people",
]


def pytest_collection_modifyitems(items: list) -> None:  # type: ignore[type-arg]
    """Browser tests last: they drive a synchronous Playwright, the rest share one asyncio loop."""
    items.sort(key=lambda item: "/browser/" in str(item.path).replace("\\", "/"))
