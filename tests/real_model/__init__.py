"""The real-model check: `python -m tests.real_model` (or `make test-real-model`).

Not collected by pytest (no `test_` module here): it installs a local model server,
takes minutes, and asserts the runtime's guarantees rather than a model's answers. See
docs/models.md.
"""
