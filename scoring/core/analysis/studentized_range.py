"""The studentized range's survival function for many q at once. Pure core.

Q = R / S: R the range of k independent standard normals, S an independent
sqrt(chi-squared(df) / df). Written from that definition, the textbook double
integral

    P(Q > q) = integral over s of f_S(s) P(R > q s),
    P(R > w) = k integral over z of phi(z) [Phi(z)^(k-1) - (Phi(z) - Phi(z - w))^(k-1)],

the second using k integral phi Phi^(k-1) = 1 to get the tail itself rather
than 1 - cdf. Every q shares k and df, so P(R > w) is tabulated once (its
z-integral at Chebyshev points, interpolated piecewise) and each q costs one
vectorised s-integral. Both integrals are composite Gauss-Legendre rules on
intervals outside which at most 1e-20 of the mass lies.

Accuracy (tests/scoring/core/analysis/test_studentized_range.py), integer k from
2 to 150 and df from 3 to infinity, q from 0 until p < 1e-12:
- against the exact k = 2 form, 2 t.sf(q / sqrt 2, df): within 2e-15;
- against scipy.stats.studentized_range.sf (1 - cdf by numerical
  integration): within 1e-12, except where SciPy gives up in the heavy tail
  of df <= 5 and returns about 0 for p up to 4e-10; the contract is 1e-9.
The error is absolute: a tail value p may be off by about 1e-20 / p
relatively. Non-integer df below 5 lose smoothness at s = 0: about 1e-10.
Larger k holds: rules 4x finer change no value by 2e-14 up to k = 1,000.

Equal to SciPy, rather than only close to the truth, in two places: df of
100,000 or more is taken as infinite, as SciPy does (the exact value differs
by up to 6e-5 there); and df below 3 is handed to SciPy, whose integration
misses the heavy tail there (by 2e-8 at df = 2, 9e-5 at df = 1, against the
exact k = 2 form), so that Tukey's HSD keeps SciPy's p-values.
"""

from __future__ import annotations

import numpy as np
from scipy import special

_TRUNCATED = 1e-20  # probability left outside each integration interval
_SCIPY_INFINITE_DF = 100_000  # SciPy's own switch to the infinite-df form
_SCIPY_BELOW_DF = 3  # below this, SciPy's values (see the module docstring)

# Quadrature sizes: 4x finer change nothing beyond 2e-14 (test_finer_rules_change_nothing).
_Z_NODES, _Z_PANELS = 32, 6  # the z-integral of P(R > w)
_S_NODES, _S_PANELS = 32, 4  # the s-integral over the chi distribution
_W_PANEL, _W_DEGREE = 0.5, 15  # width and degree of the interpolation pieces


def studentized_range_sf(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """P(Q > q) for each q, like `scipy.stats.studentized_range.sf(q, k, df)`."""
    return StudentizedRange(k, df).sf(q)


class StudentizedRange:
    """The distribution for one (k, df), set up once for many calls of `sf`."""

    def __init__(self, k: int, df: float) -> None:
        if not (float(k).is_integer() and k >= 2):
            raise ValueError(f"k must be a whole number of groups, at least 2 (got {k})")
        if not df > 0:
            raise ValueError(f"df must be positive (got {df})")
        self.k, self.df = int(k), float(df)
        if _SCIPY_BELOW_DF <= self.df < _SCIPY_INFINITE_DF:
            self._range_table = _RangeTable(self.k)
            self._chi = _Chi(self.df)

    def sf(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, dtype=np.float64)
        if self.df < _SCIPY_BELOW_DF:
            from scipy import stats  # only here: importing scipy.stats is slow

            return np.asarray(stats.studentized_range.sf(q, self.k, self.df), dtype=np.float64)
        flat = q.ravel()
        # 1 at q <= 0 and 0 at infinity, as SciPy; NaN stays NaN.
        p = np.where(flat <= 0, 1.0, np.where(flat == np.inf, 0.0, np.nan))
        inside = np.isfinite(flat) & (flat > 0)
        if self.df >= _SCIPY_INFINITE_DF:
            p[inside] = range_sf(flat[inside], self.k)
        else:
            p[inside] = self._finite_df_sf(flat[inside])
        return np.clip(p, 0.0, 1.0).reshape(q.shape)

    def _finite_df_sf(self, q: np.ndarray) -> np.ndarray:
        # Beyond s = reach / q, P(R > q s) is below the truncation: stop there.
        with np.errstate(over="ignore"):  # a subnormal q: inf, clipped to high
            top = np.clip(self._range_table.reach / q, self._chi.low, self._chi.high)
        s, weight = self._chi.nodes(top)
        with np.errstate(over="ignore"):  # q s past the float range: inf, 0 beyond reach
            w = q[:, None] * s
        return np.sum(weight * self._range_table(w), axis=-1)


def range_sf(w: np.ndarray, k: int) -> np.ndarray:
    """P(R > w) for the range R of k standard normals, for each w >= 0."""
    z_low = special.ndtri(_TRUNCATED ** (1 / k))  # P(max of k < z_low) = 1e-20
    z_high = -special.ndtri(_TRUNCATED / k)  # P(max of k > z_high) <= 1e-20
    z, weight = _gauss_legendre(z_low, z_high, _Z_NODES, _Z_PANELS)
    weight = k * np.exp(-z * z / 2) / np.sqrt(2 * np.pi) * weight
    below = special.ndtr(z)
    below_w = special.ndtr(z - np.asarray(w, dtype=np.float64)[..., None])
    # Phi(z - w) <= Phi(z) for w >= 0, but not always in floating point: at w of
    # about 2e-16 ndtr can be an ulp larger at the smaller argument, and
    # log1p(-ratio) of a ratio above 1 is NaN (P(R > w) was NaN where it is 1).
    ratio = np.minimum(below_w / below, 1.0)
    # a^n - (a - d)^n without cancelling when d is small: the far tail stays accurate.
    with np.errstate(divide="ignore"):  # d = a at w = 0: log1p(-1) = -inf, exact
        bracket = below ** (k - 1) * -np.expm1((k - 1) * np.log1p(-ratio))
    return bracket @ weight


class _RangeTable:
    """P(R > w) interpolated on [0, reach) by Chebyshev pieces; 0 from `reach`,
    where the union bound k (k - 1) Phi(-w / sqrt 2) falls below 1e-20."""

    def __init__(self, k: int) -> None:
        self.reach = -np.sqrt(2) * special.ndtri(_TRUNCATED / (k * (k - 1)))
        self.pieces = int(np.ceil(self.reach / _W_PANEL))
        angle = np.pi * (np.arange(_W_DEGREE + 1) + 0.5) / (_W_DEGREE + 1)
        left = np.arange(self.pieces)[:, None] * _W_PANEL
        values = range_sf(left + (np.cos(angle) + 1) / 2 * _W_PANEL, k)
        # Chebyshev coefficients from values at the points of the first kind.
        chebyshev = np.cos(np.outer(np.arange(_W_DEGREE + 1), angle))
        self.coefficients = values @ chebyshev.T * (2 / (_W_DEGREE + 1))
        self.coefficients[:, 0] /= 2

    def __call__(self, w: np.ndarray) -> np.ndarray:
        # Past `reach` the value is 0 (below): cap w there first, so that a huge w
        # (q of 1e100) makes no out-of-range piece index nor overflows.
        scaled = np.minimum(w, self.pieces * _W_PANEL) / _W_PANEL
        piece = np.minimum(scaled.astype(np.intp), self.pieces - 1)
        x = 2 * (scaled - piece) - 1
        # Clenshaw's recurrence, each point with its own piece's coefficients.
        b1 = np.zeros_like(w)
        b2 = np.zeros_like(w)
        for degree in range(_W_DEGREE, 0, -1):
            b1, b2 = 2 * x * b1 - b2 + self.coefficients[piece, degree], b1
        value = x * b1 - b2 + self.coefficients[piece, 0]
        return np.where(w >= self.reach, 0.0, value)


class _Chi:
    """S = sqrt(chi-squared(df) / df) on [low, high], each tail 1e-20."""

    def __init__(self, df: float) -> None:
        self.half = df / 2
        self.low = np.sqrt(special.gammaincinv(self.half, _TRUNCATED) / self.half)
        self.high = np.sqrt(special.gammainccinv(self.half, _TRUNCATED) / self.half)
        # The density's constant from the same rule: no large logarithms cancel.
        s, weight = _gauss_legendre(self.low, self.high, _S_NODES, _S_PANELS)
        self.total = np.sum(self._unscaled_density(s) * weight)

    def nodes(self, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes on [low, top] for each top, and their weights times the density."""
        s, weight = _gauss_legendre(self.low, top, _S_NODES, _S_PANELS)
        return s, weight * self._unscaled_density(s) / self.total

    def _unscaled_density(self, s: np.ndarray) -> np.ndarray:
        # s^(df-1) exp(-df s^2 / 2), over its value at s = 1, as
        # exp(half (log s^2 - (s^2 - 1))) / s; log1p near s = 1 for large df.
        y = s * s - 1
        log_ratio = np.where(np.abs(y) < 0.5, np.log1p(y), 2 * np.log(s)) - y
        return np.exp(self.half * log_ratio) / s


def _gauss_legendre(
    low: float | np.ndarray, high: float | np.ndarray, nodes: int, panels: int
) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre: `panels` equal pieces of [low, high], `nodes`
    each; the last axis holds the nodes, the others follow `low` and `high`."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    start = np.arange(panels)[:, None] / panels
    unit = (start + (x + 1) / (2 * panels)).ravel()
    unit_weight = np.tile(w / (2 * panels), panels)
    low = np.asarray(low, dtype=np.float64)[..., None]
    length = np.asarray(high, dtype=np.float64)[..., None] - low
    return low + length * unit, length * unit_weight
