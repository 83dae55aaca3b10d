"""Tests of the Python SDK: python3 -m unittest discover (from sdk/python)."""
