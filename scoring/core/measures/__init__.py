"""trec_eval 10.0's measures, one module per family, over ranked judgments.

`catalog.TREC` lists them in trec_eval's order with its nicknames; each
measure is a `base.Measure` computing from `rankings.Rankings`.
"""
