"""Shared test set-up. Fixtures live in tests/fixtures/, one module per concern."""

pytest_plugins = [
    "tests.fixtures.emulator",
    "tests.fixtures.database",
]
