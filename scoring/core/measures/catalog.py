"""Catalogs: the measures one rel_info format offers, and how `-m` picks them.

`TREC` is trec_eval 10.0's catalog for qrels: its measures in its output
order, with its nicknames (official, set, all_trec). `TWO_ASPECTS` and
`THREE_ASPECTS` are the Decision track's for aspect qrels, in the output order
of its trec_eval extension and with its nicknames (twoaspects, threeaspects).
Naming a measure of another format's catalog is an error that says which.
`SAMPLE_EVAL` holds sample_eval.pl's inferred measures, in its output order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.core.measures import average_precision as ap
from scoring.core.measures import counts, coverage, dcg, inferred, judged, precision, rbp
from scoring.core.measures import multi_aspect as aspects
from scoring.core.measures.base import Measure, RequestedMeasure
from scoring.core.measures.params import ParamError, ParamStyle


class MeasureError(ValueError):
    """An unknown measure, or parameters a measure refuses."""


@dataclass(frozen=True)
class Catalog:
    """measures: in output order. nicknames: names standing for several measures.
    elsewhere: measure or nickname names of other formats, with where they live."""

    measures: tuple[Measure, ...]
    nicknames: Mapping[str, tuple[str, ...]]
    default: str
    elsewhere: Mapping[str, str] = field(default_factory=dict)

    def select(self, arguments: Sequence[str], *, strict: bool = True) -> list[RequestedMeasure]:
        """The measures of `-m` arguments (`name` or `name.params`), in output order.

        Parameters are read whole (`strict`: `P.1e400` is an error, not P_1), or
        as trec_eval reads them, for the command lines (`params.parse_params`).

        As in trec_eval, a measure is computed once however often it is named,
        with the parameters of the first argument naming it with parameters,
        and `-m all_trec -m P.5` gives P the cutoff 5.
        """
        by_name = {measure.name: measure for measure in self.measures}
        marked: set[str] = set()
        params: dict[str, str] = {}
        for argument in arguments or [self.default]:
            name, dot, text = self._as_argument(argument, by_name).partition(".")
            if dot and not text:
                raise MeasureError(f"measure '{argument}' has an empty parameter list")
            if dot:
                params.setdefault(name, text)
            if name in self.nicknames:
                marked.update(self.nicknames[name])
            elif name in by_name:
                marked.add(name)
            elif name in self.elsewhere:
                raise MeasureError(f"measure '{name}' {self.elsewhere[name]}")
            else:
                raise MeasureError(f"unknown measure '{name}'")
        requested: list[RequestedMeasure] = []
        for measure in self.measures:
            if measure.name in marked:
                try:
                    requested.append(measure.configure(params.get(measure.name), strict=strict))
                except ParamError as error:
                    raise MeasureError(f"measure '{measure.name}': {error}") from error
        return requested

    def select_one(self, argument: str) -> RequestedMeasure:
        """The one measure value `argument` names (a leaderboard ranks by one):
        MeasureError for a nickname or parameters naming several (`recall.1,2`)."""
        requested = self.select([argument])
        names = [name for measure in requested for name in measure.names]
        if len(names) != 1:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise MeasureError(
                f"measure '{argument[:60]}' names {len(names)} values ({shown}): name one"
            )
        return requested[0]

    def _as_argument(self, text: str, by_name: Mapping[str, Measure]) -> str:
        """A measure as printed (`P_10`, `Rprec_mult_1.5`, `ndcg_cut_20`) read as the
        `-m` argument it comes from (`P.10`, `Rprec_mult.1.5`); other text as it is."""
        name = text.partition(".")[0]
        if name in by_name or name in self.nicknames or name in self.elsewhere:
            return text
        for known in sorted(by_name, key=len, reverse=True):
            measure = by_name[known]
            if measure.params is not ParamStyle.NONE and text.startswith(known + "_"):
                return f"{known}.{text[len(known) + 1 :]}"
        return text


_OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
    "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
_SET = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
    "set_recall", "set_relative_P", "set_map", "set_F",
)  # fmt: skip
_ALL_TREC = (
    *_OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
    "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
    "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
    "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
    "num_nonrel_judged_ret",
)  # fmt: skip
_PREFS = "needs the rel_info format 'prefs' or 'qrels_prefs' (-R), not supported here"
_JUDGMENT_GROUPS = "needs the rel_info format 'qrels_jg' (-R), not supported here"
_TWO_ASPECTS = ("runid", "num_q", "nlre", "cam", "cam_map", "nwcs")
_THREE_ASPECTS = ("runid", "num_q", "nlre_three", "cam_three_ndcg", "cam_map_three", "nwcs_three")


def _needs(rel_info_format: str, names: Iterable[str]) -> dict[str, str]:
    return dict.fromkeys(names, f"needs the rel_info format '{rel_info_format}' (-R)")


TREC = Catalog(
    measures=(
        counts.RUNID, counts.NUM_Q, counts.NUM_RET, counts.NUM_REL, counts.NUM_REL_RET,
        ap.MAP, ap.GM_MAP, precision.RPREC, judged.BPREF, precision.RECIP_RANK,
        ap.IPREC_AT_RECALL, precision.P, coverage.RELSTRING, precision.RECALL, judged.INFAP,
        judged.GM_BPREF, precision.RPREC_MULT, precision.UTILITY, ap.ELEVEN_PT_AVG,
        dcg.BING, dcg.G, dcg.DCG, dcg.IDEAL_DCG, dcg.NDCG, dcg.NDCG_REL, dcg.RNDCG,
        dcg.NDCG_CUT, ap.MAP_CUT, precision.RELATIVE_P, precision.SUCCESS, precision.SET_P,
        precision.SET_RELATIVE_P, precision.SET_RECALL, precision.SET_MAP, precision.SET_F,
        counts.NUM_NONREL_JUDGED_RET, ap.YAAP, rbp.RBP, rbp.RBP_RESID, coverage.UNJ,
    ),
    nicknames={"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC},
    default="official",
    elsewhere={
        **dict.fromkeys(
            (
                "prefs", "all_prefs", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
                "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
                "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
            ),
            _PREFS,
        ),
        **dict.fromkeys(
            ("qrels_jg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"), _JUDGMENT_GROUPS
        ),
        **_needs("qrels_twoaspects", ("twoaspects", *_TWO_ASPECTS[2:])),
        **_needs("qrels_threeaspects", ("threeaspects", *_THREE_ASPECTS[2:])),
    },
)  # fmt: skip
_TREC_NAMES = (*(measure.name for measure in TREC.measures), *TREC.nicknames)

TWO_ASPECTS = Catalog(
    measures=(counts.RUNID, counts.NUM_Q, aspects.NLRE, aspects.CAM, aspects.CAM_MAP, aspects.NWCS),
    nicknames={"twoaspects": _TWO_ASPECTS},
    default="twoaspects",
    elsewhere={
        **_needs("qrels", _TREC_NAMES),
        **_needs("qrels_threeaspects", ("threeaspects", *_THREE_ASPECTS[2:])),
    },
)
THREE_ASPECTS = Catalog(
    measures=(
        counts.RUNID, counts.NUM_Q, aspects.NLRE_THREE, aspects.CAM_THREE_NDCG,
        aspects.CAM_MAP_THREE, aspects.NWCS_THREE,
    ),
    nicknames={"threeaspects": _THREE_ASPECTS},
    default="threeaspects",
    elsewhere={
        **_needs("qrels", _TREC_NAMES),
        **_needs("qrels_twoaspects", ("twoaspects", *_TWO_ASPECTS[2:])),
    },
)  # fmt: skip
SAMPLE_EVAL = Catalog(
    measures=(
        inferred.INF_AP, inferred.INF_NDCG, inferred.IPREC_AT_RECALL, inferred.IP,
        inferred.INUM_REL_RET, inferred.INUM_REL, inferred.NUM_RET,
    ),
    nicknames={
        "sample_eval": (
            "infAP", "infNDCG", "iprec_at_recall", "iP", "inum_rel_ret", "inum_rel", "num_ret",
        ),
    },
    default="sample_eval",
)  # fmt: skip
