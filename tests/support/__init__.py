"""Helpers shared by test modules (no tests here): one module per tier or concern."""
