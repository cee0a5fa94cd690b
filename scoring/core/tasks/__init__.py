"""Scorers of the tasks that are not ranked retrieval, each exact to its official script.

Pure cores, no Django: `codiesp` (CLEF eHealth 2020 clinical coding), `scifact`
(claim verification) and `sets` (the set-based measures they share). What the
official scripts do, and where we differ, is written down in `docs/tasks.md`.
"""
