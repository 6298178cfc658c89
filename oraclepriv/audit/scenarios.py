"""Neighbouring-dataset constructions for auditing RRSPM (Algorithm 4 of Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data") and the other learners.
Design and derivations: docs/theory/audits.md.

* :func:`tight_construction` — docs/theory/audits.md, section "The tight constructions": a public
  set Z that the class shatters
  and a point x0 such that only one labeling h* of Z forces f(x0) = 1. With
  D = {(x0,0),(x0,0),(x0,1)} and D' = {(x0,0)}^3, g(h*) - g(h) is +1 under D and +3 under D' for
  every h != h*, and for ANY fixed Ytilde

      P(M(D) = h*) = 2^-m e^{-eps/2},   P(M(D') = h*) = 2^-m e^{-3 eps/2},

  so the log-ratio is exactly eps: Theorem 8's bound is attained. Realised with thresholds
  (m = 1: Z = {0}, x0 = 1) and with stumps on m in {2, 3} features (Z = the standard basis,
  x0 = (1/2, ..., 1/2): stumps realise every labeling of up to 3 basis vectors, and only the
  all-ones labeling forces x0 to 1).
* :func:`tight_halfspace_construction` — the same for halfspaces in R^d: Z = the vertices of a
  simplex, x0 = its centroid.
* :func:`flip_scenario` — natural thresholds where the non-private ERM's labeling of Z changes
  with the replaced record (catches noise that is far too small, e.g. Laplace scale eps/(2m)).
* :func:`leak_scenario` — thresholds where fhat's cut *between* public points sits on either side
  of the private record depending on its label, while the labeling of Z does not change: a learner
  returning fhat (docs/theory/block-et-al.md, pitfall P1) has an event of probability 0 under one
  neighbour.
* :func:`quantile_scenario` — the replaced record moves the median of the training points across
  a public point: exact ERM is indifferent, a histogram/quantile split-finding heuristic is not.
* :func:`linear_flat_scenario` — Algorithm 3's bounded linear class with a maximal stability shift.
* :func:`teacher_flip_scenario` — for :class:`~oraclepriv.learners.SubsampleAggregate`: 9 private
  records on distinct x, one label flipped; the ERM on *all* 9 records moves from constant 0 to
  labelling Z as 1, while a teacher that holds one record only changes its own vote.
"""

from __future__ import annotations

import math

import numpy as np

from oraclepriv.audit.runner import Neighbours

__all__ = [
    "tight_construction",
    "tight_halfspace_construction",
    "tight_target_probabilities",
    "flip_scenario",
    "leak_scenario",
    "quantile_scenario",
    "linear_flat_scenario",
    "teacher_flip_scenario",
]


def tight_construction(m: int = 1, epsilon: float = 1.0, public_label: int = 0) -> Neighbours:
    """The tight construction (docs/theory/audits.md), where RRSPM's loss is epsilon exactly.

    Parameters
    ----------
    m : {1, 2, 3}, default 1
        The number of public points: 1 for thresholds, 2 or 3 for stumps.
    epsilon : float, default 1.0
        The epsilon whose loss the construction attains.
    public_label : {0, 1}, default 0
        The fixed label of every public point.

    Returns
    -------
    Neighbours
        The two datasets, with the expected log-ratio and the target outcome.

    Raises
    ------
    ValueError
        For m outside {1, 2, 3}.
    """
    if m == 1:
        Z = np.array([[0.0]])
        x0 = np.array([1.0])
        hypothesis = "threshold"
    elif m in (2, 3):
        Z = np.eye(m)
        x0 = np.full(m, 0.5)
        hypothesis = "stump"
    else:
        raise ValueError(f"tight_construction: m must be 1, 2 or 3 (stumps shatter at most 3 basis points); got {m!r}")
    X = np.tile(x0, (3, 1))
    return Neighbours(
        name=f"tight-m{m}",
        X=X,
        y=np.array([0, 0, 1], dtype=np.int8),
        X_prime=X.copy(),
        y_prime=np.array([0, 0, 0], dtype=np.int8),
        X_public=Z,
        hypothesis_class=hypothesis,
        public_labels=np.full(m, public_label, dtype=np.int8),
        notes="tight construction: log P(M(D)=h*)/P(M(D')=h*) = eps exactly, h* = all ones on Z",
        expected_log_ratio=float(epsilon),
        target_outcome=tuple([1] * m),
    )


def tight_halfspace_construction(d: int = 2, epsilon: float = 1.0) -> Neighbours:
    """The tight construction for halfspaces in R^d: Z = the d + 1 vertices of a simplex (shattered),
    x0 = its centroid, which only the all-ones labeling of Z forces to 1 (every other labeling has a
    halfspace through the vertices it labels 1 that leaves the centroid out). The log-ratio of
    P(M(D) = all ones) / P(M(D') = all ones) is exactly eps, as for :func:`tight_construction`."""
    if d < 1:
        raise ValueError(f"d must be >= 1; got {d!r}")
    Z = np.vstack([np.zeros(d), np.eye(d)])
    X = np.tile(Z.mean(axis=0), (3, 1))
    return Neighbours(
        name=f"tight-halfspace-d{d}",
        X=X,
        y=np.array([0, 0, 1], dtype=np.int8),
        X_prime=X.copy(),
        y_prime=np.array([0, 0, 0], dtype=np.int8),
        X_public=Z,
        hypothesis_class="halfspace",
        notes="simplex vertices and their centroid: log P(M(D)=1^m)/P(M(D')=1^m) = eps exactly",
        expected_log_ratio=float(epsilon),
        target_outcome=tuple([1] * (d + 1)),
    )


def tight_target_probabilities(m: int, epsilon: float) -> tuple[float, float]:
    """Exact P(M(D) = h*) and P(M(D') = h*) of the tight construction under Lap(2m/eps) weights."""
    return 2.0**-m * math.exp(-epsilon / 2), 2.0**-m * math.exp(-3 * epsilon / 2)


def flip_scenario() -> Neighbours:
    """Thresholds, Z = {0,...,4}: the non-private ERM moves its cut across Z when one label flips."""
    X = np.array([[1.5], [2.5]])
    return Neighbours(
        name="flip",
        X=X,
        y=np.array([1, 1], dtype=np.int8),
        X_prime=X.copy(),
        y_prime=np.array([0, 1], dtype=np.int8),
        X_public=np.arange(5.0)[:, None],
        hypothesis_class="threshold",
        public_labels=np.array([0, 0, 1, 1, 1], dtype=np.int8),
        notes="the record (1.5, 1) -> (1.5, 0) moves the private ERM cut from <= 1.5 to (1.5, 2.5]",
    )


def leak_scenario() -> Neighbours:
    """Thresholds, Z = {0, 3}, one private record at x = 1 whose label flips."""
    return Neighbours(
        name="leak",
        X=np.array([[1.0]]),
        y=np.array([1], dtype=np.int8),
        X_prime=np.array([[1.0]]),
        y_prime=np.array([0], dtype=np.int8),
        X_public=np.array([[0.0], [3.0]]),
        hypothesis_class="threshold",
        public_labels=np.array([0, 1], dtype=np.int8),
        notes="with labeling (0,1) on Z, fhat cuts at 0.5 under D and at 2 under D'; ftilde always cuts at 1.5",
    )


def quantile_scenario(r: int = 3) -> Neighbours:
    """Thresholds, Z = {0.5}; r points (-1, 0), r points (1, 1), and the record (1, 1) -> (-1, 0).

    Parameters
    ----------
    r : int, default 3
        The number of points on each side.

    Returns
    -------
    Neighbours
        The two datasets; the replaced record moves the training median across Z.
    """
    X = np.array([[-1.0]] * r + [[1.0]] * r + [[1.0]])
    y = np.array([0] * r + [1] * r + [1], dtype=np.int8)
    X_prime = X.copy()
    X_prime[-1, 0] = -1.0
    y_prime = y.copy()
    y_prime[-1] = 0
    return Neighbours(
        name=f"quantile-r{r}",
        X=X,
        y=y,
        X_prime=X_prime,
        y_prime=y_prime,
        X_public=np.array([[0.5]]),
        hypothesis_class="threshold",
        public_labels=np.array([1], dtype=np.int8),
        probes=np.empty((0, 1)),
        notes="the replaced record moves the training median from 0.75 to -0.25, across Z = {0.5}",
    )


def linear_flat_scenario(n: int = 200) -> Neighbours:
    """Bounded linear class (Algorithm 3), 1-D: n/2 points (1, 1) and n/2 points (1, 0); one 0 -> 1.

    Under D the summed absolute loss is flat on [-1, 1], so fbar = 0; under D' its slope is -1 and
    fbar = min(1, 1/(2 eta_sum)). The shift is as large as the strong convexity allows: it exposes
    an eta scaled on the wrong (sum vs average) scale (docs/theory/block-et-al.md, pitfall P9). Z = {1}.
    """
    if n < 2 or n % 2:
        raise ValueError(f"n must be a positive even number; got {n!r}")
    X = np.ones((n, 1))
    y = np.array([1] * (n // 2) + [0] * (n // 2), dtype=np.int8)
    y_prime = y.copy()
    y_prime[-1] = 1
    return Neighbours(
        name=f"linear-flat-n{n}",
        X=X,
        y=y,
        X_prime=X.copy(),
        y_prime=y_prime,
        X_public=np.array([[1.0]]),
        hypothesis_class="linear",
        probes=np.empty((0, 1)),
        notes="fbar_D = 0, fbar_D' = min(1, 1/(2 eta_sum)) on Z = {1}",
    )


def teacher_flip_scenario() -> Neighbours:
    """Thresholds; 9 records at x = 1.500, 1.501, ..., 1.508 with labels 1,0,1,0,1,0,1,0 and then 0 (D)
    or 1 (D'); one public point Z = {1.6} to the right of all of them.

    * ERM on all 9 records: under D the constant 0 is the unique optimum (4 errors; any cut <= 1.6
      costs >= 5), so Z is labelled 0; under D' every optimum labels Z as 1. A learner whose
      "teachers" all see the whole data set (the broken control) moves fbar(Z) from 0 to 1.
    * One teacher per record (k = 9 blocks of one): a one-record ERM labels every point like its
      record (constant hypothesis), so fbar(Z) = 4/9 under D and 5/9 under D': shift 1/k, the
      stability radius the learner is calibrated for.
    With Laplace noise of scale m/(k eps) = 1/9 (eps = 1) the released label is 1[fbar(Z) + L > 1/2]
    (least squares on one public point), so P(label 1) = p = e^-0.5 / 2 under D and 1 - p under D':
    the exact log-ratio ln((1 - p)/p) = 0.83 <= eps (``expected_log_ratio``).
    The differing record, (1.508, 0) under D, is unique, so a targeting solver can single it out.
    """
    X = (1.5 + 0.001 * np.arange(9))[:, None]
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 0], dtype=np.int8)
    y_prime = y.copy()
    y_prime[-1] = 1
    p = 0.5 * math.exp(-0.5)
    return Neighbours(
        name="teacher-flip",
        X=X,
        y=y,
        X_prime=X.copy(),
        y_prime=y_prime,
        X_public=np.array([[1.6]]),
        hypothesis_class="threshold",
        probes=np.empty((0, 1)),
        notes="ERM on all records labels Z 0 under D and 1 under D'; one-record teachers shift fbar(Z) by 1/9",
        expected_log_ratio=math.log((1 - p) / p),
        target_outcome=(1,),
    )
