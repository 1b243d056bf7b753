"""Test data sets shared by tests and benchmarks."""
