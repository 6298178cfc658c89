"""One cell of the oracle-cost experiment (:mod:`oraclepriv.experiments.oracle_cost`): one learner, on one
backend, on one sample of one (class, d, n), with every oracle call it makes recorded and timed, and the
noise-free twin of every noisy call solved beside it.

What a cell records (one JSON object: ``fit`` and ``calls``):

* ``fit`` — the learner: status ("ok"; "uncertified": a private-data call was not certified within the
  call cap, so the fit aborted and nothing was released; "refused": the learner's own size cap; "skipped":
  outside the configured range; "error": an exception, with its message), wall seconds of the fit (total),
  the seconds of its oracle calls (the ledger's) and the rest, its number of calls, the population excess
  error of the released hypothesis ("exact", or "test set" where no closed form is used);
* ``calls`` — one row per ledger record of the fit: step, kind, rows, certified, status, seconds, nodes, the
  cores and cut rounds the backend reports, and the call's **noise-free twin**:

  - ``private`` (RRSPM's and RSPM's private call, Perturbation's J perturbed calls): the same private rows
    (the first n rows the learner handed the oracle: labels and unit weights unchanged), without the rows
    whose weights carry the privacy noise (the m public or identification points) -- the non-private ERM on
    the private rows. Perturbation's J calls share one twin;
  - ``public-noisy`` (Perturbation's and SubsampleAggregate's last call, Perturb with gamma > 0): the same
    public points with the targets before the noise (gamma = 0: fbar(Z), resp. the teachers' mean vote);
  - ``public`` (RRSPM's last call: Perturb with gamma = 0) and ``teacher`` (SubsampleAggregate's teachers): the
    call carries no privacy noise, so it is its own twin and the ratio is 1 **by construction** (recorded so,
    never solved twice);
  - ``erm`` (the non-private ERM), ``convex`` (Regularization's convex oracle) and ``fallback``: no twin.

  Twins are solved after the fit, outside its ledger and its seconds, by a fresh oracle of the same backend
  with the same time cap (no solver state carried over from the noisy call). The cost of noise of a call is
  its seconds over its twin's; when either hit the cap the ratio is censored (``ratio_censored``).

The calls' data and the backends' details (cores, cuts) come from a recording wrapper around the backend: a
:class:`~oraclepriv.solvers.base.Backend` subclass made per cell (each oracle the learner makes gets a fresh
instance wrapping a fresh backend, as with a backend name, so SubsampleAggregate's teachers share no state).
"""

from __future__ import annotations

import hashlib
import math
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from oraclepriv.experiments.scenarios import StumpScenario, ThresholdScenario
from oraclepriv.hypotheses import Halfspace, Hypothesis, Stump, Threshold
from oraclepriv.ledger import Ledger
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem

__all__ = [
    "ADAPTIVE_MARGIN_MAX_N",
    "GaussianHalfspaceScenario",
    "LEARNERS",
    "ORACLE_LEARNERS",
    "cell_scenario",
    "public_size",
    "run_cell",
]

#: learners that call a 0-1 oracle (one cell per backend), then those that do not (backend "none"; Regularization's
#: cells carry its convex oracle's backend name, ``oracle_cost.convex_backend_name()``, e.g. "highs-qp+kkt")
ORACLE_LEARNERS = ("erm", "rrspm", "perturbation", "subsample", "rspm")
OTHER_LEARNERS = (
    "public_cover_em",
    "ppm",
    "regularization",
    "output_perturbation",
    "margin_erm",
    "margin_erm_direct",
    "adaptive_margin_erm",
)
LEARNERS = ORACLE_LEARNERS + OTHER_LEARNERS
#: AdaptiveMarginERM scores every margin of its grid by a minimum hinge loss over the n rows: above this n its fit
#: alone approaches the cell cap, so its cells are skipped (recorded as such)
ADAPTIVE_MARGIN_MAX_N = 1000


@dataclass(frozen=True)
class GaussianHalfspaceScenario:
    """mu = nu_x = N(0, I_d); target 1(u . x >= c) with u = (1, ..., 1)/sqrt(d), c = 0.3 (about 38% ones).

    The disagreement of a halfspace with the target is a bivariate-normal probability (the two scores are
    standard normals with correlation the cosine of the angle between the normals), computed by one-dimensional
    quadrature to ~1e-12: an exact population quantity in every d, like the landed scenarios' interval arithmetic
    and polygon clipping."""

    d: int
    offset: float = 0.3
    hypothesis_class: str = "halfspace"
    sigma: float = 1.0

    @property
    def vc_dim(self) -> int:
        return self.d + 1

    @property
    def normal(self) -> np.ndarray:
        return np.ones(self.d) / math.sqrt(self.d)

    def sample_private(self, n: int, label_noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((n, self.d))
        y = (X @ self.normal >= self.offset).astype(np.int8)
        if label_noise:
            y[rng.random(n) < label_noise] ^= 1
        return X, y

    def sample_public(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((m, self.d))

    def disagreement(self, h: Halfspace) -> float:
        """P_{x ~ N(0, I)}(1[w.x + b >= 0] != 1[u.x >= c]) for ||u|| = 1."""
        from scipy import integrate, stats

        w = np.asarray(h.w, dtype=np.float64)
        t = stats.norm.sf(self.offset)  # P(target = 1)
        norm = float(np.linalg.norm(w))
        if norm == 0.0:
            return float(1.0 - t if h.b >= 0 else t)
        a = -float(h.b) / norm  # h = 1 iff W >= a, W = w.x/|w| ~ N(0, 1)
        rho = float(np.clip(w @ self.normal / norm, -1.0, 1.0))  # corr(W, V), V = u.x
        c = self.offset
        if 1.0 - abs(rho) < 1e-12:  # parallel normals: two thresholds on one standard normal
            if rho > 0:
                return float(abs(stats.norm.cdf(a) - stats.norm.cdf(c)))
            return _opposite(a, c)
        s = math.sqrt(1.0 - rho * rho)

        def h1_t0(v: float) -> float:  # P(W >= a | V = v) phi(v), integrated over v < c
            return stats.norm.sf((a - rho * v) / s) * stats.norm.pdf(v)

        def h0_t1(v: float) -> float:  # P(W < a | V = v) phi(v), over v >= c
            return stats.norm.cdf((a - rho * v) / s) * stats.norm.pdf(v)

        first = integrate.quad(h1_t0, -np.inf, c, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
        second = integrate.quad(h0_t1, c, np.inf, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
        return float(min(1.0, max(0.0, first + second)))


def _opposite(a: float, c: float) -> float:
    """P(1[-V >= a] != 1[V >= c]) for V ~ N(0, 1): h = 1 iff V <= -a, target 1 iff V >= c; they agree only
    between -a and c (both 1 on [c, -a], both 0 on (-a, c)), so the disagreement is 1 - |Phi(-a) - Phi(c)|."""
    from scipy import stats

    return float(1.0 - abs(stats.norm.cdf(-a) - stats.norm.cdf(c)))


def cell_scenario(hypothesis_class: str, d: int) -> ThresholdScenario | StumpScenario | GaussianHalfspaceScenario:
    """The population of a (class, d): the landed threshold and stump scenarios (U[0,1], U[0,1]^3), the
    Gaussian halfspace scenario in d dimensions."""
    if hypothesis_class == "threshold":
        return ThresholdScenario()
    if hypothesis_class == "stump":
        return StumpScenario(k=d)
    return GaussianHalfspaceScenario(d)


def public_size(hypothesis_class: str, d: int, n: int, epsilon: float) -> int:
    """m, the public points every public-data learner of a cell gets: max(ceil((eps n sqrt(v))^(2/5)), 2 v), v the
    VC dimension (1 thresholds, 4 stumps on 3 features, d + 1 halfspaces). The first term is the optimum of
    docs/theory/block-et-al.md ("Choosing m for RRSPM", paper rate, sigma = 1); the floor 2 v keeps enough points to
    pin down a labeling of the class."""
    vc = cell_scenario(hypothesis_class, d).vc_dim
    return max(math.ceil((epsilon * n * math.sqrt(vc)) ** 0.4), 2 * vc)


# ------------------------------------------------------------------------------------------ recording backend
class _Recording(Backend):
    """Wraps a fresh instance of ``inner`` and keeps, per solve, the reduced problem, the answer and the ledger
    index the call's record will get (the cell's outer ledger appends it right after the backend returns)."""

    inner: ClassVar[type[Backend]]
    log: ClassVar[list[dict[str, Any]]]
    ledger: ClassVar[Ledger | None]

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit=time_limit, **options)
        self._inner = self.inner(time_limit=time_limit, **options)

    def restriction(self, hypothesis_class: str) -> str | None:
        return self._inner.restriction(hypothesis_class)

    def check(self, hypothesis_class: str, n: int, d: int) -> None:
        self._inner.check(hypothesis_class, n, d)

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        answer = self._inner.solve(problem)
        type(self).log.append(
            {
                "ledger_index": None if self.ledger is None else len(self.ledger),
                "X": np.array(problem.X, dtype=np.float64, order="C"),
                "y": np.array(problem.y, dtype=np.int8),
                "w": np.array(problem.w, dtype=np.float64),
                "answer": answer,
            }
        )
        return answer


def recording_backend(name: str, log: list[dict[str, Any]], ledger: Ledger | None) -> type[Backend]:
    """A Backend class that records into ``log`` every solve of the registered backend ``name``."""
    from oraclepriv.backends import backend_class

    inner = backend_class(name)
    attrs = {
        "name": inner.name or name,
        "classes": inner.classes,
        "options": inner.options,
        "certificate": inner.certificate,
        "requires": inner.requires,
        "inner": inner,
        "log": log,
        "ledger": ledger,
    }
    return type(f"Recording[{name}]", (_Recording,), attrs)


# ------------------------------------------------------------------------------------------ excess error
def digest(X: np.ndarray, y: np.ndarray) -> str:
    """A digest of rows and labels (float64 C order, int8): equal data, equal digest."""
    h = hashlib.blake2b(digest_size=12)
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int8).tobytes())
    return h.hexdigest()


def _test_set(scen, size: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """A fixed noise-free test sample of the scenario (seeded by its class and dimension)."""
    key = {"threshold": 1, "stump": 2, "halfspace": 3}[scen.hypothesis_class]
    rng = np.random.default_rng(np.random.SeedSequence(20_240_216, spawn_key=(key, getattr(scen, "d", 0))))
    X, y = scen.sample_private(size, 0.0, rng)
    return X, y


def grid_equivalent(h: Hypothesis, grid_size: int) -> Hypothesis:
    """The continuous hypothesis equal to ``h`` applied after rounding x to its cell centre (k + 1/2)/G on [0, 1]:
    1[centre >= g] is 1[x >= g - 1/(2G)], 1[centre <= g] is 1[x < g + 1/(2G)] (RSPM's releases on the grid)."""
    half = 0.5 / grid_size
    if isinstance(h, Threshold):
        return h if not math.isfinite(h.threshold) else Threshold(h.threshold - half)
    if isinstance(h, Stump) and math.isfinite(h.threshold):
        return Stump(h.feature, h.threshold - half * h.sign, h.sign)
    return h


def population_excess(scen: Any, h: Hypothesis, label_noise: float) -> tuple[float, str]:
    """(1 - 2p) times the disagreement of ``h`` with the scenario's target, and how it was computed."""
    scale = 1.0 - 2.0 * label_noise
    if isinstance(scen, ThresholdScenario):
        if isinstance(h, Threshold):
            return scale * scen.disagreement(h), "exact"
        if isinstance(h, Halfspace):  # a 1-D halfspace: a threshold of either orientation
            return scale * _one_dim_disagreement(h, scen), "exact"
        from oraclepriv.experiments.ppm_curves import excess_error  # PPM's release on U[0, 1], target 0.3

        if scen.lo == 0.0 and scen.hi == 1.0:
            return excess_error(h, 1, label_noise, None), "exact"
    if isinstance(scen, StumpScenario) and isinstance(h, Stump):
        return scale * scen.disagreement(h), "exact"
    if isinstance(scen, GaussianHalfspaceScenario) and isinstance(h, Halfspace):
        return scale * scen.disagreement(h), "exact"
    X, y = _test_set(scen)
    return scale * float(np.mean(np.asarray(h.predict(X)) != y)), "test set"


def _one_dim_disagreement(h: Halfspace, scen: ThresholdScenario) -> float:
    """Exact measure of {x in [lo, hi]: h(x) != 1[x >= target]} / (hi - lo) for a 1-D halfspace h."""
    w, b = float(h.w[0]), float(h.b)
    cuts = sorted({scen.lo, scen.hi, scen.target} | ({min(max(-b / w, scen.lo), scen.hi)} if w else set()))
    wrong = 0.0
    for left, right in zip(cuts, cuts[1:]):
        mid = 0.5 * (left + right)
        if (w * mid + b >= 0) != (mid >= scen.target):
            wrong += right - left
    return wrong / (scen.hi - scen.lo)


# ------------------------------------------------------------------------------------------ learners
def _learner(name: str, spec: dict[str, Any], backend: Any, seed: int):
    """The estimator of a cell, configured by the experiment's rules (module docstring of oracle_cost)."""
    from oraclepriv.learners import (
        RRSPM,
        RSPM,
        AdaptiveMarginERM,
        MarginERM,
        OutputPerturbationLogistic,
        Perturbation,
        PPMHalfspaces,
        PublicCoverEM,
        Regularization,
        SubsampleAggregate,
    )

    eps, cls, cap = spec["epsilon"], spec["hypothesis_class"], spec["call_cap"]
    oracle_args = {"hypothesis_class": cls, "backend": backend, "time_limit": cap, "random_state": seed}
    if name == "rrspm":
        return RRSPM(epsilon=eps, m=spec["m"], **oracle_args)
    if name == "perturbation":
        p = spec["perturbation"]
        return Perturbation(epsilon=eps, delta=p["delta"], J=p["J"], eta=p["eta"], m=spec["m"], **oracle_args)
    if name == "subsample":
        return SubsampleAggregate(n_teachers=spec["teachers"], noise="laplace", delta=0.0, epsilon=eps, **oracle_args)
    if name == "rspm":
        g = spec["rspm_grid"]
        grid = [(np.arange(g) + 0.5) / g] * spec["d"]
        return RSPM(epsilon=eps, grid=grid, **oracle_args)
    if name == "public_cover_em":
        return PublicCoverEM(
            epsilon=eps, hypothesis_class=cls, max_candidates=spec["max_candidates"], random_state=seed
        )
    if name == "ppm":
        return PPMHalfspaces(epsilon=eps, max_public=spec["ppm_max_public"], random_state=seed)
    if name == "regularization":
        return Regularization(epsilon=eps, delta=0.0, noise="laplace", m=spec["m"], random_state=seed)
    if name == "output_perturbation":
        return OutputPerturbationLogistic(
            epsilon=eps, regularization=spec["op_lambda"], data_norm=spec["data_norm"], random_state=seed
        )
    if name == "margin_erm":  # the class defaults (margin 0.1, norm bound 1, delta 1e-6) on rows in the unit ball
        return MarginERM(epsilon=eps, radius=1.0, random_state=seed)
    if name == "margin_erm_direct":  # our direct setting for small samples (docs/theory/margin-learners.md)
        return MarginERM(
            epsilon=eps, radius=1.0, accounting="direct-gaussian", rounds=1, jl_dim=None, random_state=seed
        )
    if name == "adaptive_margin_erm":
        return AdaptiveMarginERM(epsilon=eps, radius=1.0, random_state=seed)
    raise ValueError(f"unknown learner {name!r}; expected one of {list(LEARNERS)}")


def _l1_map(A: np.ndarray) -> np.ndarray:
    """x -> (x, 1) / (||x||_1 + 1): into Regularization's l1 ball, one record at a time (a positive rescaling of
    (x, 1), so the linear predictor's sign is that of the halfspace w[:d] . x + w[d])."""
    B = np.hstack([A, np.ones((A.shape[0], 1))])
    return B / np.abs(B).sum(axis=1, keepdims=True)


def _to_grid(X: np.ndarray, grid_size: int) -> np.ndarray:
    """Each coordinate in [0, 1] rounded to the centre of its cell, (floor(x G) + 1/2) / G."""
    return (np.clip(np.floor(X * grid_size), 0, grid_size - 1) + 0.5) / grid_size


def _fit(name: str, est, X: np.ndarray, y: np.ndarray, Z: np.ndarray, spec: dict[str, Any]):
    """Fit ``est`` the way its learner takes data; returns the released hypothesis in the scenario's coordinates."""
    if name in ("rrspm", "perturbation"):
        return est.fit(X, y, X_public=PublicData(Z)).hypothesis_
    if name == "subsample":
        return est.fit(X, y, X_public=PublicData(Z[: spec["subsample_m"]])).hypothesis_
    if name == "public_cover_em":
        return est.fit(X, y, X_public=PublicData(Z)).hypothesis_
    if name == "rspm":  # X is already on the grid (run_cell): the private rows the learner gets
        return grid_equivalent(est.fit(X, y).hypothesis_, spec["rspm_grid"])
    if name == "ppm":  # its own data model: the label-0 records are the public ones (label-determined privacy)
        return est.fit(X, y, y == 0).hypothesis_
    if name == "regularization":
        w = est.fit(_l1_map(X), y, X_public=PublicData(_l1_map(Z))).hypothesis_.w
        return Halfspace(tuple(w[:-1]), float(w[-1]))
    if name == "output_perturbation":
        return est.fit(X, y).hypothesis_
    if name in ("margin_erm", "margin_erm_direct", "adaptive_margin_erm"):  # rows x / R clipped into the unit ball
        from oraclepriv.learners.output_perturbation import clip_rows

        R = float(spec["data_norm"])
        h = est.fit(clip_rows(X, R), y).hypothesis_
        return Halfspace(tuple(np.asarray(h.w, dtype=np.float64) / R), float(h.b))  # w.(x / R) + b, exact inside R
    raise ValueError(f"unknown learner {name!r}")


# ------------------------------------------------------------------------------------------ one cell
def _kind(learner: str, step: str) -> str:
    if step.endswith("/fallback"):
        return "fallback"
    if learner == "erm":
        return "erm"
    if learner == "regularization":
        return "convex"
    if step == "private-erm" or step.startswith("perturbed-erm-"):
        return "private"
    if step.startswith("teacher-"):
        return "teacher"
    if step == "perturb":
        return "public" if learner == "rrspm" else "public-noisy"
    return "other"


def _details(answer: BackendAnswer | None) -> dict[str, Any]:
    """Cores and cut rounds, where the backend reports them (scip-bc: cores and separation LPs; highs: cores
    and Benders rounds); model reuse between calls."""
    if answer is None:
        return {"cores": None, "cuts": None, "model_reused": None}
    d = answer.details or {}
    cores = d.get("cores_total", d.get("cores"))
    cuts = d.get("separation_lps", d.get("cuts_rounds"))
    return {
        "cores": None if cores is None else int(cores),
        "cuts": None if cuts is None else int(cuts),
        "model_reused": None if d.get("model_reused") is None else bool(d.get("model_reused")),
    }


def _solve_twin(spec: dict[str, Any], backend: str, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, Any]:
    """The twin, by a fresh oracle of the same backend and cap, outside the fit's ledger."""
    from oraclepriv.oracle import make_oracle

    oracle = make_oracle(spec["hypothesis_class"], backend=backend, time_limit=spec["call_cap"])
    result = oracle.solve(X, y, w, caller="oracle-cost", step="twin")
    return {
        "twin_seconds": result.seconds,
        "twin_certified": bool(result.certified),
        "twin_status": result.status,
        "twin_nodes": result.nodes,
    }


def _twins(learner, est, n: int, records, spec, backend) -> dict[int, dict[str, Any]]:
    """The noise-free twin of every noisy call of the fit, keyed by ledger index (module docstring)."""
    out: dict[int, dict[str, Any]] = {}
    private = [r for r in records if r["kind"] == "private" and r["entry"] is not None]
    if private:
        e = private[0]["entry"]
        X, y, w = e["X"][:n], e["y"][:n], e["w"][:n]
        if not np.all(w == 1.0):
            raise AssertionError(f"{learner}: the first {n} rows of a private call do not carry unit weights")
        twin = {**_solve_twin(spec, backend, X, y, w), "twin_kind": "solved", "twin_digest": digest(X, y)}
        for r in private:
            ex = r["entry"]
            same = np.array_equal(ex["X"][:n], X) and np.array_equal(ex["y"][:n], y)
            if not same:
                raise AssertionError(f"{learner}: private calls of one fit see different private rows")
            out[r["index"]] = twin
    for r in records:
        if r["kind"] == "public-noisy" and r["entry"] is not None:
            Z = r["entry"]["X"]
            if learner == "perturbation":  # fbar(Z) from the J perturbed answers, on the {0, 1} scale
                center = np.mean(
                    [p["entry"]["answer"].hypothesis.predict(p["entry"]["X"][n:]) for p in private], axis=0
                )
            else:
                from oraclepriv.release import reading_diagnostics

                with reading_diagnostics():  # the teachers' mean vote: a research measurement, never released
                    center = np.asarray(est.diagnostics_["center"], dtype=np.float64)
            labels, weights = np.zeros(Z.shape[0], dtype=np.int8), 1.0 - 2.0 * center
            out[r["index"]] = {**_solve_twin(spec, backend, Z, labels, weights), "twin_kind": "solved"}
        elif r["kind"] in ("public", "teacher"):
            out[r["index"]] = {
                "twin_kind": "by construction",
                "twin_seconds": r["seconds"],
                "twin_certified": r["certified"],
                "twin_status": r["status"],
                "twin_nodes": r["nodes"],
            }
    return out


def run_cell(spec: dict[str, Any], fingerprint: str, seeds: tuple[int, int]) -> dict[str, Any]:
    """Run one cell (``spec``: class, d, n, learner, backend, rep and the experiment's parameters); returns
    ``{"key", "fingerprint", "fit", "calls"}``. ``seeds`` = (data seed, learner seed), fixed before dispatch."""
    learner, backend = spec["learner"], spec["backend"]
    scen = cell_scenario(spec["hypothesis_class"], spec["d"])
    rng = np.random.default_rng(seeds[0])
    X, y = scen.sample_private(spec["n"], spec["label_noise"], rng)
    Z = scen.sample_public(spec["m"], rng)
    if learner == "rspm":  # RSPM's domain is a grid: each record rounded to its cell centre (one record at a time)
        X = _to_grid(X, spec["rspm_grid"])
    fit: dict[str, Any] = {
        "status": "ok",
        "reason": "",
        "total_seconds": math.nan,
        "oracle_seconds": 0.0,
        "non_oracle_seconds": math.nan,
        "calls": 0,
        "calls_by_design": None,
        "uncertified_calls": 0,
        "excess": math.nan,
        "excess_method": "",
        "private_digest": digest(X, y),  # the private rows as the learner gets them
    }
    out = {"key": spec["key"], "fingerprint": fingerprint, "spec": spec, "fit": fit, "calls": []}
    if spec.get("skip"):
        fit.update(status=spec["skip"][0], reason=spec["skip"][1])
        return out
    log: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        # the experiment reads the non-private diagnostics (ledger rows, seconds, the teachers' votes) on purpose:
        # they are research measurements, never a release
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with Ledger() as ledger:
            rec = recording_backend(backend, log, ledger) if learner in ORACLE_LEARNERS else None
            est = None
            start = time.perf_counter()
            try:
                if learner == "erm":
                    from oraclepriv.oracle import make_oracle

                    result = make_oracle(spec["hypothesis_class"], backend=rec, time_limit=spec["call_cap"]).solve(
                        X, y, caller="ERM", step="erm"
                    )
                    hypothesis = result.hypothesis
                    if not result.certified:
                        fit.update(status="uncertified", reason="the ERM call was not certified within the call cap")
                else:
                    est = _learner(learner, spec, rec, seeds[1])
                    hypothesis = _fit(learner, est, X, y, Z, spec)
            except Exception as exc:  # recorded, never dropped: the row says what happened
                from oraclepriv.learners import UncertifiedOracleError

                hypothesis = None
                if isinstance(exc, UncertifiedOracleError):
                    fit.update(status="uncertified", reason=str(exc).split(";")[0])
                else:
                    fit.update(status="error", reason="".join(traceback.format_exception_only(exc)).strip()[:500])
            fit["total_seconds"] = time.perf_counter() - start
        records = list(ledger.records)
        if est is not None and hasattr(est, "release_"):
            fit["calls_by_design"] = est.release_.privacy.get("oracle_calls_by_design")
            fit["learner_ledger_calls"] = len(est.ledger_)
        elif learner == "erm":
            fit["calls_by_design"] = 1
    if hypothesis is not None:
        fit["excess"], fit["excess_method"] = population_excess(scen, hypothesis, spec["label_noise"])
    entries = {e["ledger_index"]: e for e in log}
    rows: list[dict[str, Any]] = [  # one per call, completed below with the answer's details and its twin
        {
            "index": r["call"],
            "caller": r["caller"],
            "step": str(r["step"]),
            "kind": _kind(learner, str(r["step"])),
            "call_backend": r["backend"],
            "rows": int(r["n"]),
            "signed_weights": bool(r["signed_weights"]),
            "status": r["status"],
            "certified": bool(r["certified"]),
            "seconds": float(r["seconds"]),
            "nodes": r["nodes"],
            "entry": entries.get(r["call"]),
        }
        for r in records
    ]
    try:
        twins = _twins(learner, est, spec["n"], rows, spec, backend) if learner in ORACLE_LEARNERS else {}
    except Exception as exc:
        twins = {}
        fit.update(status="error", reason=f"twin: {type(exc).__name__}: {exc}"[:500])
    for r in rows:
        entry = r.pop("entry")
        r.update(_details(None if entry is None else entry["answer"]))
        r["recorded"] = entry is not None
        r["private_rows"] = spec["n"] if r["kind"] == "private" else 0
        r["noise_rows"] = (
            r["rows"] - spec["n"] if r["kind"] == "private" else (r["rows"] if r["kind"] == "public-noisy" else 0)
        )
        twin = twins.get(r["index"], {"twin_kind": "none"})
        r.update(twin)
        if "twin_seconds" in twin and twin["twin_seconds"] > 0:
            r["noise_ratio"] = r["seconds"] / twin["twin_seconds"] if twin["twin_kind"] == "solved" else 1.0
            censored = [s for s, bad in (("lower", not r["certified"]), ("upper", not twin["twin_certified"])) if bad]
            r["ratio_censored"] = "+".join(censored) if twin["twin_kind"] == "solved" else ""
    fit["calls"] = len(rows)
    fit["oracle_seconds"] = float(sum(r["seconds"] for r in rows))
    fit["non_oracle_seconds"] = fit["total_seconds"] - fit["oracle_seconds"]
    fit["uncertified_calls"] = sum(not r["certified"] for r in rows)
    out["calls"] = rows
    return out
