"""Statistics over per-topic scores: confidence intervals, paired tests, multiple-
comparison corrections and the leaderboard built from them. Pure core: NumPy and
SciPy, no Django.

Every function takes a score table shaped (runs, topics) or the per-topic
differences of pairs shaped (pairs, topics) and works on all rows at once;
each equals, row by row, the SciPy (or statsmodels) function its docstring
names, called with the same data, seed and number of resamples
(tests/scoring/core/analysis). docs/leaderboard.md says what each test is and
where it differs from other tools.
"""
