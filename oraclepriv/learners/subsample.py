"""SubsampleAggregate — a learner whose privacy does not depend on the oracle at all.

A design in which "the solver never sees all of the data" (docs/theory/robustification.md, section
"Subsample-and-aggregate: private for any oracle"): the subsample-and-aggregate framework of Nissim,
Raskhodnikova and Smith ("Smooth sensitivity and sampling in private data analysis", STOC 2007),
in the public-data form of PATE (Papernot et al., "Semi-supervised knowledge transfer for deep
learning from private training data", ICLR 2017) and of Bassily, Thakkar and Thakurta
("Model-agnostic private learning", NeurIPS 2018), with Perturb (Algorithm 1 of Block, Bun, Desai,
Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data") as the private
aggregation step:

1. split the private records at random into k disjoint blocks (sizes differ by at most one; the
   split uses only the learner's random generator, never the data);
2. teacher t = ERM on block t (one oracle call each, unit weights, a *fresh* oracle per teacher so
   no solver state -- core pools, warm starts -- carries information between blocks);
3. fbar(Z_i) = mean over teachers of their labels of the public point Z_i (a teacher whose answer is
   not certified either keeps it or abstains with 1/2, ``teacher_failure``; a teacher whose oracle
   raised an exception has no answer and abstains);
4. release Perturb(fbar, Q, gamma, Z): targets t = fbar(Z) + gamma zeta, least-squares ERM on the
   public points only (an uncertified answer there is re-solved exactly: that call is
   post-processing, so the fallback costs no privacy).

Privacy, for EVERY oracle (exact, time-limited, heuristic, adversarial, raising). Replacing one private
record changes one block, hence one teacher, whose vote on each public point moves by at most 1
(or 1/2 to or from an abstention); so ||fbar_D - fbar_D'||_inf <= 1/k on Z, i.e. Perturb's
stability radius is rho = 1/k by construction: l2-sensitivity sqrt(m)/k, l1-sensitivity m/k of the
released vector fbar(Z) + gamma zeta. gamma is then the analytic Gaussian mechanism std for
(eps, delta) (``noise="gaussian"``, delta > 0) or m/(k eps) for Laplace noise (``noise="laplace"``,
pure eps-DP). Everything after the release, the final oracle call included, is post-processing.
For a fixed split the mechanism is (eps, delta)-DP; the split is independent of the data, so the
mixture is too. What the oracle affects is accuracy only: the guarantee holds even under the
targeting heuristic of docs/theory/robustification.md (tested, and audited by ``oraclepriv audit
subsample``).

Cost: k + 1 oracle calls on n/k private points each (plus m public points), and accuracy of a
learner trained on n/k points, aggregated. The noise on fbar is gamma ~ sqrt(m) / (k eps): k must
grow like sqrt(m)/eps for the teachers' majority to survive it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from oraclepriv.learners._base import PrivateLearner
from oraclepriv.learners.perturb import NOISE_FAMILIES, calibrate_gamma, perturb
from oraclepriv.robust import UncertifiedOracleError, fallback_oracle, solve_or_fail
from oraclepriv.validation import Alternatives, Interval, StrOptions

__all__ = ["SubsampleAggregate", "TEACHER_FAILURE_MODES", "split_blocks"]

TEACHER_FAILURE_MODES = ("abstain", "keep")


def split_blocks(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A uniformly random split of range(n) into k blocks whose sizes differ by at most one."""
    return [np.sort(b) for b in np.array_split(rng.permutation(n), k)]


class SubsampleAggregate(PrivateLearner):
    """Subsample-and-aggregate with Perturb as the aggregator: private for any oracle.

    The framework of Nissim, Raskhodnikova, Smith, "Smooth sensitivity and sampling in private data
    analysis", in the public-data form of PATE. k teachers, each an oracle call on a disjoint block of the private records, vote on the public
    points; Perturb (Algorithm 1 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
    Private Learning with Public Data") releases a noisy average of the votes and one more oracle call
    on the public points fits it. A record changes one teacher, so the guarantee holds whatever the
    oracle answers (docs/theory/robustification.md, "Subsample-and-aggregate: private for any
    oracle").

    Parameters
    ----------
    n_teachers : int, default 16
        k, the number of disjoint blocks (2 <= k <= n).
    noise : {"gaussian", "laplace"}, default "gaussian"
        "gaussian": (epsilon, delta)-DP, needs delta > 0; "laplace": epsilon-DP.
    teacher_failure : {"abstain", "keep"}, default "abstain"
        What an uncertified teacher answer does: "abstain" (vote 1/2 on every public point) or "keep"
        (vote with the answer as it is). A teacher whose oracle raised has no answer and abstains in
        either mode.
    epsilon : float, default 1.0
        The privacy parameter, > 0.
    delta : float, default 1e-6
        The privacy parameter, in [0, 1/n); > 0 for ``noise="gaussian"``.
    hypothesis_class : {"threshold", "stump", "halfspace"}, default "halfspace"
        The class the oracle minimises over.
    backend : str, backend class or instance, or None, default None
        The ERM backend, exact or not; None: the oracle's default installed exact backend.
    backend_options : dict or None, default None
        Keyword options of the backend.
    time_limit : float or None, default None
        Seconds per oracle call.
    on_uncertified : {"flag", "fallback", "raise"}, default "flag"
        Accuracy-side handling only: "flag" (then ``teacher_failure`` applies), "fallback" (re-solve
        such a call exactly; if that fails too, ``teacher_failure`` applies), "raise" (abort the fit).
    random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default None
        The source of the mechanism's randomness.

    Attributes
    ----------
    release_ : Release
        The released hypothesis and the data-independent privacy record.
    hypothesis_ : Hypothesis
        The released hypothesis.
    public_targets_ : numpy.ndarray
        The epsilon-DP vector fbar(Z) + gamma zeta (covered by the proof).
    diagnostics_ : Diagnostics
        Non-private (publishing them voids the guarantee): the ledger of the k + 1 calls,
        ``uncertified_teachers``, ``final_call_certified``, ``teacher_votes`` and the un-noised
        ``center`` fbar(Z). Reading it warns.

    Notes
    -----
    The guarantee: with ``on_uncertified`` "flag" or "fallback", the same for every oracle; with
    "raise", a teacher whose call is uncertified or raises aborts the fit, and whether it does depends
    on the data, so the guarantee is then conditional on the failure probability, as for the other
    learners.
    """

    algorithm = "subsample-aggregate"
    reference = (
        "subsample-and-aggregate (Nissim, Raskhodnikova, Smith 2007) in PATE form (Papernot et al. 2017; "
        "Bassily, Thakkar, Thakurta 2018), aggregated by Perturb (Block, Bun, Desai, Shetty, Wu, Oracle-Efficient Differentially Private "
        "Learning with Public Data, Algorithm 1); private for any oracle: docs/theory/robustification.md"
    )
    supported_classes = ("threshold", "stump", "halfspace")
    needs_exact_oracle = False
    diagnostic_names = PrivateLearner.diagnostic_names + (
        "uncertified_teachers",
        "final_call_certified",
        "teacher_votes",
        "center",
    )
    _parameter_constraints: ClassVar[dict[str, Alternatives]] = {
        **PrivateLearner._parameter_constraints,
        "hypothesis_class": (StrOptions(*supported_classes),),
        "n_teachers": (Interval("integer", 2, None, "left"),),
        "noise": (StrOptions(*NOISE_FAMILIES),),
        "teacher_failure": (StrOptions(*TEACHER_FAILURE_MODES),),
    }

    def __init__(
        self,
        *,
        n_teachers: int = 16,
        noise: str = "gaussian",
        teacher_failure: str = "abstain",
        epsilon: float = 1.0,
        delta: float = 1e-6,
        hypothesis_class: str = "halfspace",
        backend: str | None = None,
        backend_options: dict[str, Any] | None = None,
        time_limit: float | None = None,
        on_uncertified: str = "flag",
        random_state: Any = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            hypothesis_class=hypothesis_class,
            backend=backend,
            backend_options=backend_options,
            time_limit=time_limit,
            on_uncertified=on_uncertified,
            random_state=random_state,
        )
        self.n_teachers = n_teachers
        self.noise = noise
        self.teacher_failure = teacher_failure

    def _check_params(self, n: int) -> int:
        """The checks that need the data or another parameter (each one's own constraint is declared:
        ``_parameter_constraints``)."""
        k = self.n_teachers
        if k > n:
            raise ValueError(
                f"n_teachers must be an integer with 2 <= n_teachers <= n_samples = {n} (private records); got {k!r}"
            )
        if self.noise == "gaussian" and not self.delta_ > 0:
            raise ValueError(
                f"noise='gaussian' needs delta > 0 (it is (eps, delta)-DP); got delta={self.delta!r}. "
                "Use noise='laplace' for pure eps-DP."
            )
        return int(k)

    def _blocks(self, n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
        """Step 1: the disjoint random blocks (one job, so tests and controls can see the split)."""
        return split_blocks(n, k, rng)

    def _gamma(self, m: int) -> float:
        """Perturb's noise level for stability radius rho = 1/k on m public points: the one place both the
        fit's draw and :meth:`noise_law` (what ``oraclepriv verify`` integrates) take it from."""
        return calibrate_gamma(self.noise, 1.0 / int(self.n_teachers), m, self.epsilon_, self.delta_)

    # -- the release as a noisy argmin over the labelings of Z (for oraclepriv.verify) ------------
    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        """Perturb's least-squares ERM on targets t = fbar + gamma zeta picks the labeling L of Z minimising
        sum_j L_j (1 - 2 fbar_j) + sum_j L_j eta_j with eta_j = -2 gamma zeta_j: Laplace(2 gamma) or N(0, (2 gamma)^2)."""
        return self.noise, 2.0 * self._gamma(m)

    def verification_costs(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, labelings: np.ndarray, oracle: Any
    ) -> np.ndarray:
        """sum_j L_j (1 - 2 fbar_j) for every labeling, with the fitted split and exact teachers (abstaining
        teachers vote 1/2 when their call is not certified, as in the fit)."""
        votes = np.empty((len(self.split_), Z.shape[0]))
        for t, block in enumerate(self.split_):
            result = oracle.solve(X[block], y[block], np.ones(block.size), caller="verify", step=f"teacher-{t}")
            votes[t] = result.hypothesis.predict(Z) if result.certified else 0.5
        return labelings @ (1.0 - 2.0 * votes.mean(axis=0))

    def _release(
        self,
        oracle: Any,
        Z: np.ndarray,
        projection: np.ndarray,
        rng: np.random.Generator,
        *,
        fhat: Any,
        X: np.ndarray,
        y: np.ndarray,
    ) -> Any:
        """The hypothesis the final call releases when its winning labeling of Z is ``projection``."""
        del fhat, X, y
        return perturb(
            oracle, Z, projection.astype(np.float64), 0.0, self.noise, rng, caller=self.algorithm, step="perturb"
        ).hypothesis

    def _fit(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, rng: np.random.Generator, public_labels: Any = None
    ) -> Any:
        k = self._check_params(X.shape[0])
        m = Z.shape[0]
        blocks = self._blocks(X.shape[0], k, rng)
        votes = np.empty((k, m))
        uncertified: list[int] = []
        for t, block in enumerate(blocks):
            oracle = self._oracle()  # fresh per teacher: no solver state shared between blocks
            # a teacher whose oracle raises (an Exception; interrupts propagate) has failed like an uncertified one
            result, failure = solve_or_fail(
                oracle, X[block], y[block], np.ones(block.size), caller=self.algorithm, step=f"teacher-{t}"
            )
            if result is not None and result.certified:
                votes[t] = result.hypothesis.predict(Z)
                continue
            if self.on_uncertified == "raise":
                if result is not None:
                    what, by, error = "was not certified", result.backend, None
                else:
                    assert failure is not None
                    what, by, error = "raised an exception", failure["backend"], failure["exception"]
                raise UncertifiedOracleError(
                    f"{self.algorithm}: teacher {t}'s oracle call {what} (backend {by!r}); on_uncertified='raise' "
                    "aborts (privacy would not need it: use on_uncertified='flag' to let the teacher abstain or keep "
                    "its answer). The call's status and objective (.result) or what it raised (.error) are "
                    "non-private diagnostics",
                    result,
                    error,
                ) from None
            uncertified.append(t)
            # an answer that exists may be kept; a call that raised has none, so its teacher abstains
            if self.teacher_failure == "keep" and result is not None:
                votes[t] = result.hypothesis.predict(Z)
            else:
                votes[t] = 0.5
        center = votes.mean(axis=0)
        rho = 1.0 / k
        gamma = self._gamma(m)
        # the last call sees only public points and the released targets (post-processing), so an exact
        # fallback for an uncertified answer costs no privacy: always on (a failed public call would
        # otherwise release, e.g., a constant)
        final = fallback_oracle(self.hypothesis_class, self._fresh_backend(), self.time_limit)
        released = perturb(final, Z, center, gamma, self.noise, rng, caller=self.algorithm, step="perturb")
        self.public_targets_ = released.targets  # fbar(Z) + gamma zeta: the eps-DP vector
        self.split_ = blocks  # the random split: indices only, drawn independently of the data
        self.noisy_points_ = Z
        self._diagnostic_values.update(
            uncertified_teachers=uncertified,
            final_call_certified=bool(released.result.certified),
            teacher_votes=votes,
            center=center,
        )
        robustness = (
            "a teacher whose call is uncertified or raises aborts the fit (on_uncertified='raise'): whether it does "
            "depends on the data"
            if self.on_uncertified == "raise"
            else "privacy holds for any oracle behaviour (each teacher sees one block): a teacher whose call is "
            "uncertified or raises "
            + ("is re-solved exactly, then, if that fails too, " if self.on_uncertified == "fallback" else "")
            + (
                "abstains (votes 1/2)"
                if self.teacher_failure == "abstain"
                else "keeps its answer (abstains, votes 1/2, when its call raised: there is no answer)"
            )
        )
        self._privacy = {
            "mechanism": (
                f"{k} teachers on disjoint random blocks, fbar = mean vote on Z, Perturb with "
                f"{self.noise} noise gamma = {gamma:.6g} calibrated for stability radius rho = 1/k"
            ),
            "noise": self.noise,
            "calibration": (
                "analytic Gaussian mechanism, l2-sensitivity sqrt(m)/k"
                if self.noise == "gaussian"
                else "Laplace, gamma = m / (k eps) (l1-sensitivity m/k)"
            ),
            "calibration_source": "derived here (module docstring): one record changes one teacher",
            "robustness": robustness,
            "n_teachers": k,
            "block_sizes": sorted({int(b.size) for b in blocks}),
            "rho": rho,
            "gamma": gamma,
            "m": m,
            "teacher_failure": self.teacher_failure,
            "oracle_calls_by_design": k + 1,
        }
        return released.hypothesis
