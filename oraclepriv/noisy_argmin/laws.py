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

where exp[...] is the divided difference of exp at the nodes t_i, repeated nodes included
(:func:`_divided_difference_exp`: float64 where that is accurate to ~2e-13, 60 digits otherwise). The error is floating-point only, plus the mass outside the box, at most m exp(-R/b)
(R is set so that this is below 1e-15). The result states both: ``truncation`` (that bound) and
``mass_error`` (|1 - sum of the probabilities|, a measured check of everything else).

Sampled law (:func:`sampled_argmin_law`). The draws are streamed in chunks of at most :data:`CHUNK_BYTES`
of working arrays (:func:`draw_chunk`), so its memory does not grow with the number of draws:
:func:`sampled_law_memory` states the peak. The chunks consume the generator's stream in order, so the
counts do not depend on the chunk size.
"""

from __future__ import annotations

import decimal
import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ArgminLaw",
    "CHUNK_BYTES",
    "MAX_EXACT_POINTS",
    "argmin_counts",
    "draw_chunk",
    "laplace_argmin_law",
    "sampled_argmin_law",
    "sampled_law_memory",
]

#: exact integration is offered up to this many noisy points (2^m orthants x labelings polytopes)
MAX_EXACT_POINTS = 5
#: the probability mass left outside the integration box
TRUNCATED_MASS = 1e-15
#: nodes of a divided difference closer than this (relatively) are one repeated node
TIE = 1e-12
#: distinct nodes at least this far apart keep the float64 divided difference accurate to ~2e-13
FLOAT_GAP = 0.1
#: the working arrays of one chunk of draws of :func:`sampled_argmin_law` stay within this many bytes
#: (a few MiB: larger chunks are no faster, as the arrays then leave the CPU's caches)
CHUNK_BYTES = 4 * 2**20


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


def _divided_difference_exp(t: np.ndarray) -> float:
    """exp[t_0, ..., t_k], repeated nodes (equal within :data:`TIE`) included.

    The recursion exp[t_i..t_j] = (exp[t_i+1..t_j] - exp[t_i..t_j-1]) / (t_j - t_i), with
    exp[t, ..., t] = e^t / (j - i)! for equal nodes. It cancels when distinct nodes are close, so
    float64 is used when every gap between distinct nodes is at least :data:`FLOAT_GAP`, and 60-digit
    decimal arithmetic otherwise (the accuracy measured for this choice:
    ``docs/theory/noisy-argmin-law.md``)."""
    nodes = np.sort(np.asarray(t, dtype=np.float64))
    gaps = np.diff(nodes)
    distinct = gaps > TIE * np.maximum(1.0, np.abs(nodes[:-1]))
    if not np.any(distinct & (gaps < FLOAT_GAP)):
        return _dd_recursion(nodes.tolist(), math.exp, float, math.factorial)
    with decimal.localcontext() as context:
        context.prec = 60
        return float(
            _dd_recursion(
                nodes.tolist(), lambda v: v.exp(), decimal.Decimal, lambda level: decimal.Decimal(math.factorial(level))
            )
        )


def _dd_recursion(nodes: list[float], exp: Any, number: Any, factorial: Any) -> Any:
    values = [number(v) for v in nodes]
    table = [exp(v) for v in values]
    for level in range(1, len(nodes)):
        table = [
            (table[i + 1] - table[i]) / (values[i + level] - values[i])
            if nodes[i + level] - nodes[i] > TIE * max(1.0, abs(nodes[i]))
            else exp(values[i]) / factorial(level)
            for i in range(len(nodes) - level)
        ]
    return table[0]


@functools.lru_cache(maxsize=64)
def _subsets(n_rows: int, m: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(n_rows), m)))


def _vertices(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, list[frozenset[int]]]:
    """Every vertex of the bounded {x : A x <= b} (integer A), with the constraints tight at each.

    Every m-subset of rows is solved at once; the feasible, distinct solutions are the vertices.
    Tolerances: A is an integer matrix with entries in {-1, 0, 1} and b holds cost differences and
    the box radius, so vertices either coincide or are far apart relative to 1e-9."""
    n_rows, m = A.shape
    subsets = _subsets(n_rows, m)
    blocks = A[subsets].astype(np.float64)
    regular = np.abs(np.linalg.det(blocks)) > 0.5  # integer matrices: det is an integer
    subsets, blocks = subsets[regular], blocks[regular]
    points = np.linalg.solve(blocks, b[subsets][..., None])[..., 0]
    scale = max(1.0, float(np.abs(b).max()))
    tol = 1e-9 * scale
    points = points[np.all(points @ A.T <= b + tol, axis=1)]
    if points.size == 0:
        return points.reshape(0, m), []
    _, first = np.unique(np.round(points / (1e-8 * scale)), axis=0, return_index=True)
    vertices = points[np.sort(first)]
    tight_matrix = np.abs(vertices @ A.T - b) <= tol
    return vertices, [frozenset(np.flatnonzero(row).tolist()) for row in tight_matrix]


def _affine_dimension(points: np.ndarray) -> int:
    if len(points) <= 1:
        return 0
    diffs = points[1:] - points[0]
    return int(np.linalg.matrix_rank(diffs, tol=1e-9 * max(1.0, float(np.abs(diffs).max()))))


def _pulling_triangulation(
    face: list[int], dim: int, vertices: np.ndarray, tight: list[frozenset[int]]
) -> list[list[int]]:
    """Simplices (vertex indices) tiling the face with vertex set ``face`` of affine dimension ``dim``:
    cone from its first vertex over every facet not containing it (Lee's pulling triangulation),
    facets found from the tight constraints."""
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
        if _affine_dimension(vertices[ordered]) != dim - 1:
            continue
        facets.add(facet)
        out.extend([apex] + simplex for simplex in _pulling_triangulation(ordered, dim - 1, vertices, tight))
    return out


def _polytope_exp_integral(A: np.ndarray, b: np.ndarray, a: np.ndarray) -> float:
    """int over the bounded polytope {x : A x <= b} of exp(<a, x>); 0 if it has no interior."""
    m = A.shape[1]
    vertices, tight = _vertices(A, b)
    if len(vertices) <= m or _affine_dimension(vertices) < m:
        return 0.0
    heights = vertices @ a
    total = 0.0
    for simplex in _pulling_triangulation(list(range(len(vertices))), m, vertices, tight):
        corners = vertices[simplex]
        volume_factor = abs(float(np.linalg.det(corners[1:] - corners[0])))
        if volume_factor > 0.0:
            total += volume_factor * _divided_difference_exp(heights[simplex])
    return total


def _dominated(k: int, costs: np.ndarray, labelings: np.ndarray, sigma: np.ndarray) -> bool:
    """True if in the orthant sign(eta) = sigma some other labeling costs no more than k for every eta,
    and strictly less somewhere: then k wins on a null set there. k' pays at most what k pays on every
    eta of the orthant iff c_k' <= c_k and sigma_j (L_k'j - L_kj) <= 0 for every j."""
    no_more_noise = np.all((labelings - labelings[k]) * sigma <= 0, axis=1)
    cheaper = costs <= costs[k]
    strictly = (costs < costs[k]) | np.any((labelings - labelings[k]) * sigma < 0, axis=1)
    candidates = no_more_noise & cheaper & strictly
    candidates[k] = False
    return bool(candidates.any())


def laplace_argmin_law(costs: np.ndarray, labelings: np.ndarray, scale: float) -> ArgminLaw:
    """The exact law of argmin_k costs[k] + <eta, labelings[k]>, eta_j i.i.d. Laplace(0, scale)."""
    costs, labelings = _check(costs, labelings)
    K, m = labelings.shape
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a finite number > 0; got {scale!r}")
    if m > MAX_EXACT_POINTS:
        raise ValueError(
            f"exact Laplace integration handles at most {MAX_EXACT_POINTS} noisy points; got m={m} "
            "(use the sampled law)"
        )
    costs = costs - costs.min()
    if K == 1:
        return ArgminLaw(labelings, np.ones(1), exact=True)
    radius = scale * (math.log(m) - math.log(TRUNCATED_MASS) + float(costs.max()) / scale)
    probabilities = np.zeros(K)
    for signs in itertools.product((-1.0, 1.0), repeat=m):
        sigma = np.asarray(signs)
        box_A = np.vstack([-np.diag(sigma), np.diag(sigma)])  # sigma_j eta_j >= 0 and <= R
        box_b = np.r_[np.zeros(m), np.full(m, radius)]
        for k in range(K):
            if _dominated(k, costs, labelings, sigma):
                continue
            others = np.delete(np.arange(K), k)
            A = np.vstack([labelings[k] - labelings[others], box_A])
            b = np.r_[costs[others] - costs[k], box_b]
            probabilities[k] += _polytope_exp_integral(A, b, -sigma / scale) / (2.0 * scale) ** m
    truncation = m * math.exp(-radius / scale + float(costs.max()) / scale)
    mass_error = abs(1.0 - float(probabilities.sum()))
    return ArgminLaw(labelings, probabilities, exact=True, truncation=truncation, mass_error=mass_error)


def argmin_counts(costs: np.ndarray, labelings: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """How often each labeling wins, over the rows of ``noise`` (draws x m): vectorised, no oracle.

    One (draws x K) array of totals is allocated (the sum with the costs is taken in place)."""
    totals = noise @ np.asarray(labelings, dtype=np.float64).T
    totals += costs
    return np.bincount(np.argmin(totals, axis=1), minlength=labelings.shape[0])


def _draw_bytes(m: int, n_labelings: int) -> int:
    """Bytes of working arrays per draw: its noise (m floats), its totals (K floats) and its winner (an int64)."""
    return 8 * (m + n_labelings + 1)


def draw_chunk(m: int, n_labelings: int, draws: int) -> int:
    """Draws per chunk of :func:`sampled_argmin_law`: as many as fit in :data:`CHUNK_BYTES` of working arrays
    (at least one), and no more than ``draws``."""
    return max(1, min(int(draws), CHUNK_BYTES // _draw_bytes(m, n_labelings)))


def sampled_law_memory(m: int, n_labelings: int, draws: int, chunk: int | None = None) -> int:
    """Peak bytes of the arrays :func:`sampled_argmin_law` allocates for K = ``n_labelings`` labelings of m points:

        8 (c (m + K + 1) + 2 K m + 4 K),   c = the chunk (:func:`draw_chunk` unless given),

    the chunk's noise, totals and winners, the labelings as integers and as floats, and the costs, counts and
    bincount (K each). It does not grow with ``draws`` beyond one chunk."""
    c = draw_chunk(m, n_labelings, draws) if chunk is None else max(1, min(int(chunk), int(draws)))
    return 8 * (c * (m + n_labelings + 1) + 2 * n_labelings * m + 4 * n_labelings)


def sampled_argmin_law(
    costs: np.ndarray,
    labelings: np.ndarray,
    family: str,
    scale: float,
    draws: int,
    rng: np.random.Generator,
    chunk: int | None = None,
) -> ArgminLaw:
    """The law of the argmin estimated from ``draws`` noise vectors (Laplace scale or Gaussian std ``scale``).

    The draws are taken ``chunk`` at a time (default :func:`draw_chunk`: bounded memory, stated by
    :func:`sampled_law_memory`); the counts do not depend on the chunk, which only orders the same stream."""
    costs, labelings = _check(costs, labelings)
    if family not in ("laplace", "gaussian"):
        raise ValueError(f"family must be 'laplace' or 'gaussian'; got {family!r}")
    if not (isinstance(draws, (int, np.integer)) and draws >= 1):
        raise ValueError(f"draws must be a positive integer; got {draws!r}")
    K, m = labelings.shape
    if chunk is None:
        chunk = draw_chunk(m, K, draws)
    elif not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
        raise ValueError(f"chunk must be a positive integer; got {chunk!r}")
    as_float = labelings.astype(np.float64)
    counts = np.zeros(K, dtype=np.int64)
    done = 0
    while done < draws:
        size = min(chunk, draws - done)
        noise = rng.laplace(0.0, scale, (size, m)) if family == "laplace" else rng.normal(0.0, scale, (size, m))
        counts += argmin_counts(costs, as_float, noise)
        del noise
        done += size
    return ArgminLaw(labelings, counts / draws, exact=False, counts=counts, draws=int(draws))
