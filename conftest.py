"""pytest set-up: the repository root on ``sys.path``, so the test helpers import as
``tests.<module>`` without installing them (pytest inserts a root ``conftest.py``'s folder)."""
