"""The law of a noisy argmin over labelings: exact for Laplace noise, sampled for any noise.

The learners verified here release a deterministic function of

    L* = argmin_{L in the realisable labelings of the points}  c(L) + sum_j xi_j 1[L_j != t_j],

with xi_j i.i.d. and symmetric (Laplace or Gaussian) and t the random labels (RRSPM: Y-tilde on the
public points, Block, Bun, Desai, Shetty, Wu, Algorithm 4; RSPM: the labels on the identification
set, Algorithm 5). Since 1[L_j != t_j] = L_j (1 - 2 t_j) + t_j, the cost is, up to a constant that
does not depend on L, c(L) + <eta, L> with eta_j = xi_j (1 - 2 t_j), and eta has the law of xi:
**the law of L* does not depend on t.** So one law per cost vector covers every fixed t.

Exact Laplace law (:func:`laplace_argmin_law`). With eta_j i.i.d. Lap(b), L wins on the polyhedron
{eta : <eta, L - L'> <= c(L') - c(L) for all L'}. In each orthant {sigma_j eta_j >= 0} the density is
(1/(2b))^m exp(-<sigma, eta>/b), the exponential of a linear function, and the win region cut to the
box |eta_j| <= R is a polytope. We triangulate it (qhull: halfspace intersection, then the convex
hull of the vertices, each facet coned to the centroid) and integrate exactly over every simplex:

    int_simplex exp(<a, x>) dx = |det(v_1 - v_0, ..., v_m - v_0)| * exp[t_0, ..., t_m],  t_i = <a, v_i>,

where exp[...] is the divided difference of exp at the (exact rational) nodes t_i, repeated nodes
included, evaluated in 60-digit arithmetic. The error is floating-point only, plus the mass outside the box, at most m exp(-R/b)
(R is set so that this is below 1e-15). The result states both: ``truncation`` (that bound) and
``mass_error`` (|1 - sum of the probabilities|, a measured check of everything else).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "ArgminLaw",
    "MAX_EXACT_POINTS",
    "argmin_counts",
    "laplace_argmin_law",
    "sampled_argmin_law",
]

#: exact integration is offered up to this many noisy points (2^m orthants x labelings polytopes)
MAX_EXACT_POINTS = 5
#: the probability mass left outside the integration box
TRUNCATED_MASS = 1e-15


@dataclass(frozen=True)
class ArgminLaw:
    """P(L* = labelings[k]) for every realisable labeling k, with what is known about its error.

    ``exact`` laws have absolute error at most ``truncation + mass_error`` per probability (a
    conservative statement: the two are bounds on the whole mass). Sampled laws carry the counts and
    the number of draws; their error bars come from exact binomial intervals (:mod:`oraclepriv.verify.loss`).
    """

    labelings: np.ndarray  # (K, m) in {0, 1}
    probabilities: np.ndarray  # (K,)
    exact: bool
    truncation: float = 0.0
    mass_error: float = 0.0
    counts: np.ndarray | None = None
    draws: int = 0

    @property
    def error(self) -> float:
        """Absolute error bound on each probability of an exact law (0 is never claimed for a sampled one)."""
        if not self.exact:
            raise ValueError("a sampled law has confidence intervals, not an error bound; use counts and draws")
        return self.truncation + self.mass_error


def _check(costs: np.ndarray, labelings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    costs = np.asarray(costs, dtype=np.float64)
    labelings = np.asarray(labelings, dtype=np.int64)
    if labelings.ndim != 2 or costs.shape != (labelings.shape[0],):
        raise ValueError(f"need costs (K,) and labelings (K, m); got shapes {costs.shape} and {labelings.shape}")
    if not np.all(np.isfinite(costs)):
        raise ValueError("costs must be finite: drop the unrealisable labelings first")
    if labelings.shape[0] != len({tuple(r) for r in labelings.tolist()}):
        raise ValueError("labelings must be distinct")
    return costs, labelings


def _divided_difference_exp(t: list[Fraction]) -> float:
    """exp[t_0, ..., t_k] for exact rational nodes (repeated nodes allowed).

    The recursion exp[t_i..t_j] = (exp[t_i+1..t_j] - exp[t_i..t_j-1]) / (t_j - t_i), with
    exp[t, ..., t] = e^t / (j - i)! for equal nodes, in 60-digit arithmetic (mpmath): the nodes are
    exact, so ties are exact, and cancellation between close distinct nodes stays far below float64
    resolution. (The matrix-exponential formula in float64 erred by 2e-4 relatively on repeated
    nodes spread over [-36, 0].)"""
    import mpmath

    nodes = sorted(t)
    with mpmath.workdps(60):
        values = [mpmath.mpf(v.numerator) / v.denominator for v in nodes]
        table = [mpmath.exp(v) for v in values]
        for level in range(1, len(nodes)):
            table = [
                (table[i + 1] - table[i]) / (values[i + level] - values[i]) if nodes[i + level] != nodes[i]
                else mpmath.exp(values[i]) / mpmath.factorial(level)
                for i in range(len(nodes) - level)
            ]
        return float(table[0])


def _exact_solve(A: np.ndarray, b: list[Fraction]) -> list[Fraction] | None:
    """x with A x = b for a square integer A, in exact rationals (None if A is singular)."""
    n = A.shape[0]
    M = [[Fraction(int(v)) for v in row] + [b[i]] for i, row in enumerate(A)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if M[r][col] != 0), None)
        if pivot is None:
            return None
        M[col], M[pivot] = M[pivot], M[col]
        for r in range(n):
            if r != col and M[r][col] != 0:
                f = M[r][col] / M[col][col]
                M[r] = [a - f * c for a, c in zip(M[r], M[col])]
    return [M[i][n] / M[i][i] for i in range(n)]


def _affine_dimension(points: list[tuple[Fraction, ...]]) -> int:
    """Exact affine dimension of a set of rational points (Gaussian elimination on differences)."""
    rows = [[a - b for a, b in zip(p, points[0])] for p in points[1:]]
    rank, width = 0, len(points[0])
    for col in range(width):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                f = rows[r][col] / rows[rank][col]
                rows[r] = [a - f * c for a, c in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def _vertices(A: np.ndarray, b: list[Fraction]) -> tuple[list[tuple[Fraction, ...]], list[frozenset[int]]]:
    """Every vertex of {x : A x <= b} (integer A, rational b, bounded) in exact rationals, with the set
    of constraints tight at each. Candidates come from a vectorised float solve of every m-subset of
    rows; each distinct one is re-solved and checked exactly."""
    n_rows, m = A.shape
    subsets = np.array(list(itertools.combinations(range(n_rows), m)))
    blocks = A[subsets].astype(np.float64)
    regular = np.abs(np.linalg.det(blocks)) > 0.5  # integer matrices: det is an integer
    subsets, blocks = subsets[regular], blocks[regular]
    b_float = np.array([float(v) for v in b])
    points = np.linalg.solve(blocks, b_float[subsets][..., None])[..., 0]
    slack = 1e-7 * max(1.0, float(np.abs(b_float).max()))
    feasible = np.all(points @ A.T <= b_float + slack, axis=1)
    vertices: list[tuple[Fraction, ...]] = []
    tight: list[frozenset[int]] = []
    seen: set[tuple[Fraction, ...]] = set()
    _, first = np.unique(np.round(points[feasible] / max(1.0, slack * 1e7), 9), axis=0, return_index=True)
    for subset in subsets[feasible][first]:
        x = _exact_solve(A[subset], [b[i] for i in subset])
        if x is None:
            continue
        key = tuple(x)
        if key in seen:
            continue
        lhs = [sum((int(a) * v for a, v in zip(row, x)), Fraction(0)) for row in A]
        if any(l > r for l, r in zip(lhs, b)):
            continue
        seen.add(key)
        vertices.append(key)
        tight.append(frozenset(i for i, (l, r) in enumerate(zip(lhs, b)) if l == r))
    return vertices, tight


def _pulling_triangulation(face: list[int], dim: int, vertices: list[tuple[Fraction, ...]],
                           tight: list[frozenset[int]]) -> list[list[int]]:
    """Simplices (vertex indices) tiling the face with vertex set ``face`` of affine dimension ``dim``:
    cone from its first vertex over every facet not containing it (Lee's pulling triangulation),
    facets found exactly from the tight constraints."""
    if dim == 0:
        return [[face[0]]]
    apex = face[0]
    common = frozenset.intersection(*(tight[v] for v in face))
    facets: set[frozenset[int]] = set()
    out: list[list[int]] = []
    for row in set().union(*(tight[v] for v in face)) - common:
        facet = frozenset(v for v in face if row in tight[v])
        if apex in facet or facet in facets:
            continue
        ordered = sorted(facet)
        if _affine_dimension([vertices[v] for v in ordered]) != dim - 1:
            continue
        facets.add(facet)
        out.extend([apex] + simplex for simplex in _pulling_triangulation(ordered, dim - 1, vertices, tight))
    return out


def _polytope_exp_integral(A: np.ndarray, b: list[Fraction], a: list[Fraction]) -> float:
    """int over the bounded polytope {x : A x <= b} of exp(<a, x>); 0 if it has no interior."""
    m = A.shape[1]
    vertices, tight = _vertices(A, b)
    if len(vertices) <= m or _affine_dimension(vertices) < m:
        return 0.0
    points = np.array([[float(v) for v in vertex] for vertex in vertices])
    heights = [sum((ai * v for ai, v in zip(a, vertex)), Fraction(0)) for vertex in vertices]  # <a, v>, exact
    total = 0.0
    for simplex in _pulling_triangulation(list(range(len(vertices))), m, vertices, tight):
        corners = points[simplex]
        volume_factor = abs(float(np.linalg.det(corners[1:] - corners[0])))
        if volume_factor > 0.0:
            total += volume_factor * _divided_difference_exp([heights[v] for v in simplex])
    return total


def laplace_argmin_law(costs: np.ndarray, labelings: np.ndarray, scale: float) -> ArgminLaw:
    """The exact law of argmin_k costs[k] + <eta, labelings[k]>, eta_j i.i.d. Laplace(0, scale)."""
    costs, labelings = _check(costs, labelings)
    K, m = labelings.shape
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a finite number > 0; got {scale!r}")
    if m > MAX_EXACT_POINTS:
        raise ValueError(f"exact Laplace integration handles at most {MAX_EXACT_POINTS} noisy points; got m={m} "
                         "(use the sampled law)")
    costs = costs - costs.min()
    if K == 1:
        return ArgminLaw(labelings, np.ones(1), exact=True)
    radius = scale * (math.log(m) - math.log(TRUNCATED_MASS) + float(costs.max()) / scale)
    exact = [Fraction(float(c)) for c in costs]  # floats are exact rationals: the polytopes are exact
    probabilities = np.zeros(K)
    for sigma in itertools.product((-1.0, 1.0), repeat=m):
        sigma = np.asarray(sigma)
        box_A = np.vstack([-np.diag(sigma), np.diag(sigma)])  # sigma_j eta_j >= 0 and <= R
        box_b = [Fraction(0)] * m + [Fraction(radius)] * m
        exponent = [-Fraction(int(v)) / Fraction(scale) for v in sigma]  # density exp(-<sigma, eta>/b), exact
        for k in range(K):
            others = np.delete(np.arange(K), k)
            A = np.vstack([labelings[k] - labelings[others], box_A]).astype(np.int64)
            b = [exact[o] - exact[k] for o in others] + box_b
            probabilities[k] += _polytope_exp_integral(A, b, exponent) / (2.0 * scale) ** m
    truncation = m * math.exp(-radius / scale + float(costs.max()) / scale)
    mass_error = abs(1.0 - float(probabilities.sum()))
    return ArgminLaw(labelings, probabilities, exact=True, truncation=truncation, mass_error=mass_error)


def argmin_counts(costs: np.ndarray, labelings: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """How often each labeling wins, over the rows of ``noise`` (draws x m): vectorised, no oracle."""
    totals = costs[None, :] + noise @ labelings.T.astype(np.float64)
    return np.bincount(np.argmin(totals, axis=1), minlength=labelings.shape[0])


def sampled_argmin_law(costs: np.ndarray, labelings: np.ndarray, family: str, scale: float, draws: int,
                       rng: np.random.Generator, chunk: int = 1_000_000) -> ArgminLaw:
    """The law of the argmin estimated from ``draws`` noise vectors (Laplace scale or Gaussian std ``scale``)."""
    costs, labelings = _check(costs, labelings)
    if family not in ("laplace", "gaussian"):
        raise ValueError(f"family must be 'laplace' or 'gaussian'; got {family!r}")
    if not (isinstance(draws, (int, np.integer)) and draws >= 1):
        raise ValueError(f"draws must be a positive integer; got {draws!r}")
    m = labelings.shape[1]
    counts = np.zeros(labelings.shape[0], dtype=np.int64)
    done = 0
    while done < draws:
        size = min(chunk, draws - done)
        noise = rng.laplace(0.0, scale, (size, m)) if family == "laplace" else rng.normal(0.0, scale, (size, m))
        counts += argmin_counts(costs, labelings, noise)
        done += size
    return ArgminLaw(labelings, counts / draws, exact=False, counts=counts, draws=int(draws))
