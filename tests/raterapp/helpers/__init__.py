"""Helpers that several raterapp test modules share, one module per concept; test modules import
them from the concept's module (never from another test module: ``tests/test_test_imports.py``)."""
