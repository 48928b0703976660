"""Telling (pure): the PR comment, the linked issues' text, and what reaches a log."""
