"""The heavy/light split of ``scip-bc``: the structure of the private learners' oracle calls, exploited exactly.

RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with
Public Data", Algorithm 4) asks for ERM on n private points of weight 1 plus m public points whose
weights |Lap(2m/eps)| are tens of times heavier. Such an instance splits its groups into a *light*
part (the bulk of the weight distribution) and a few *heavy* groups (:func:`split_groups_by_weight`).
For every halfspace h, its reduced loss is L(h) = L_light(h) + L_heavy(h), hence

    L_light(h) >= OPT_light  and  L_heavy(h) >= OPT_heavy,

where OPT_part is the ERM optimum over the groups of that part alone. Any proved lower bound B_part
<= OPT_part therefore gives two rows valid for the error vector e(h) of *every* halfspace,

    sum_{g light} W_g z_g >= B_light,   sum_{g heavy} W_g z_g >= B_heavy,

and since the cover model only ever needs rows that e(h) satisfies (``docs/theory/cover-cut-model.md``,
section 3), adding them keeps SCIP's dual bound a bound over the whole class. B_light is the
non-private ERM on the private data (the learner's noise-free twin); once the branching has fixed
the heavy groups, the node's LP bound is at least (the fixed heavy cost) + B_light, which prunes
every labeling L of the public points whose cost c_Z(L) + OPT_light exceeds the incumbent: the
decomposition over labelings of Z, done by the tree. The parts are solved by a plain ``scip-bc``
search (:func:`solve_part`), whose proved bound is used even when its time runs out (a weaker
bound, still a bound), whose cores are cores of the whole problem (the same points and labels) and
are seeded, and whose hypotheses are warm starts. Branching priorities put the heavy groups first,
heaviest first (:func:`heavy_first_priorities`).

Measurements and the rule ``strategy="auto"`` follows are in ``docs/solvers/learners-tier.md``.

The same argument holds for any partition of the groups: ``strategy="partition"`` cuts them at random
into parts of about ``part_size`` groups (:func:`random_partition`) and adds one row per part. On
noisy data in higher dimension this bound has no cap, unlike the cover-cut LP's W/(d + 2), but it
grows only as fast as the parts' optima (``docs/solvers/scip-bc.md``, section 8): an option for
instances no search closes, where it narrows the gap; ``auto`` never chooses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from oraclepriv.solvers.base import Backend, ReducedProblem
from oraclepriv.solvers.mip.mipbackend import HittingSetCache
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv.hypotheses import Hypothesis

__all__ = [
    "STRATEGIES",
    "HEAVY_FACTOR",
    "HEAVY_MIN_SHARE",
    "SPLIT_MIN_SHARE",
    "PART_SHARE",
    "PART_SIZE",
    "PartResult",
    "split_groups_by_weight",
    "choose_strategy",
    "heavy_first_priorities",
    "random_partition",
    "solve_part",
]

#: ``strategy`` option of ``scip-bc``: "plain" (one tree, no split), "priority" (branch on the heavy
#: groups first), "split" (the two bound rows, seeded cores and warm starts of the parts),
#: "heavy-first" (both), "decompose" (best-first over the heavy groups' error patterns,
#: :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_decompose`), "partition" (the rows of a random partition into parts
#: of about ``part_size`` groups, :func:`random_partition`), "auto" (from the weights: :func:`choose_strategy`)
STRATEGIES = ("auto", "plain", "priority", "split", "heavy-first", "decompose", "partition")
#: a group is heavy when its weight exceeds HEAVY_FACTOR times the median group weight
HEAVY_FACTOR = 4.0
#: ``auto`` uses the heavy groups only when they carry at least this share of the total weight ...
HEAVY_MIN_SHARE = 0.1
#: ... and solves the parts apart ("heavy-first") from this share on ("priority" below it)
SPLIT_MIN_SHARE = 0.5
#: with a time limit, the part solves may use at most this share of the time left
PART_SHARE = 0.4
#: ``strategy="partition"``: default groups per part (the size whose parts' optima summed highest on
#: diabetes-10f, ``docs/solvers/scip-bc.md``, section 8)
PART_SIZE = 110


def split_groups_by_weight(W: np.ndarray) -> np.ndarray:
    """The heavy groups (boolean mask): weight above :data:`HEAVY_FACTOR` times the median weight."""
    W = np.asarray(W, dtype=np.float64)
    if W.size == 0:
        return np.zeros(0, dtype=bool)
    return W > HEAVY_FACTOR * float(np.median(W))


def choose_strategy(strategy: str, W: np.ndarray) -> str:
    """The strategy to run: ``strategy`` itself unless "auto". "auto" takes "plain" without heavy
    groups (or with only heavy ones, or below :data:`HEAVY_MIN_SHARE` of the weight on them);
    "heavy-first" when they carry at least :data:`SPLIT_MIN_SHARE` of the weight (there the part
    bounds closed most of the gap on the learners' tier); "priority" in between (cheap, and about
    as good as "plain" or better; ``docs/solvers/learners-tier.md``)."""
    if strategy != "auto":
        return strategy
    heavy = split_groups_by_weight(W)
    total = float(np.sum(W))
    if not heavy.any() or heavy.all() or total <= 0:
        return "plain"
    share = float(np.sum(W[heavy])) / total
    if share >= SPLIT_MIN_SHARE:
        return "heavy-first"
    return "priority" if share >= HEAVY_MIN_SHARE else "plain"


def heavy_first_priorities(W: np.ndarray, heavy: np.ndarray) -> np.ndarray:
    """SCIP branching priorities: heavy groups above every light one, the heaviest highest; light 0."""
    priority = np.zeros(W.size, dtype=np.int64)
    order = np.flatnonzero(heavy)[np.argsort(W[heavy], kind="stable")]
    priority[order] = np.arange(1, order.size + 1)
    return priority


def random_partition(n_groups: int, part_size: int, seed: int = 0) -> list[np.ndarray]:
    """Boolean masks of n_groups // part_size parts (at least ``part_size`` groups each) of a random
    permutation of the groups (fixed ``seed``: the same instance gets the same parts); no parts when
    fewer than two would form (one part would be the whole problem again)."""
    k = n_groups // part_size
    if k < 2:
        return []
    masks = []
    for block in np.array_split(np.random.default_rng(seed).permutation(n_groups), k):
        mask = np.zeros(n_groups, dtype=bool)
        mask[block] = True
        masks.append(mask)
    return masks


@dataclass
class PartResult:
    """What a solve of one part proved and found, in the whole problem's group indices."""

    groups: np.ndarray  # the part's groups (indices into the whole problem's groups)
    bound: float  # a proved lower bound on the part's optimum (0 if nothing better is proved)
    hypothesis: Hypothesis | None
    certified: bool
    cores: list[tuple[int, ...]] = field(default_factory=list)
    seconds: float = 0.0
    nodes: int = 0


def solve_part(
    backend: Backend,
    cache: HittingSetCache,
    Xg: np.ndarray,
    yg: np.ndarray,
    W: np.ndarray,
    part: np.ndarray,
    deadline: Deadline,
) -> PartResult:
    """ERM over the groups ``part`` alone with ``backend`` (a plain ``scip-bc``): its proved bound, its
    hypothesis, and the cores it used (read from ``cache``, the backend's own), mapped to the whole
    problem's groups.

    Each group is one input point, so the part's own groups are its points again; the map back goes
    through the part's ``group_of`` rather than assuming an order. A bound that does not meet the
    part's hypothesis (a time limit) is still a proved bound; nothing proved gives 0 (weights >= 0)."""
    import time

    idx = np.flatnonzero(part)
    t0 = time.perf_counter()
    answer = backend.solve(ReducedProblem("halfspace", Xg[idx], yg[idx], W[idx], deadline=deadline))
    bound = max(float(answer.bound), 0.0) if np.isfinite(answer.bound) else 0.0
    cores: list[tuple[int, ...]] = []
    # the backend keeps the cores of its last point set: only if that is this part's (a part of one
    # distinct point returns before building any, and the cache then holds another part's cores)
    if cache.holds(Xg[idx], yg[idx]) and cache.form is not None:
        form = cache.form
        back = np.empty(form.groups.size, dtype=np.int64)
        back[form.groups.group_of] = idx
        cores = [tuple(sorted(int(back[g]) for g in core)) for core in form.cores]
    tol = 1e-9 * max(1.0, float(W[idx].sum()))
    loss = float(np.dot(W[idx], answer.hypothesis.predict(Xg[idx]) != yg[idx]))
    return PartResult(
        groups=idx,
        bound=bound,
        hypothesis=answer.hypothesis,
        certified=answer.status == "optimal" and loss <= bound + tol,
        cores=cores,
        seconds=time.perf_counter() - t0,
        nodes=int(answer.nodes or 0),
    )
