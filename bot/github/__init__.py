"""GitHub: the bounded PyGithub client, the sticky comment, the linked issues, and
:mod:`bot.github.fake`, the local stateful fake that the tests and the demo run against.

Nothing is imported here, so that ``python -m bot --help`` needs no PyGithub.
"""
