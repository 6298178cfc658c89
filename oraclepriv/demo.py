"""``oraclepriv demo``: the toolkit end to end, in well under a minute.

1. An exact non-private ERM halfspace on private data (one certified oracle call).
2. RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public
   Data", Algorithm 4) at eps = 1 with public unlabelled points: exactly two oracle calls, the second
   on public points only; test accuracy next to the non-private one.
3. A privacy audit on neighbouring datasets, on the correct learner and on a broken one that
   returns the intermediate fhat: the audit passes the first and catches the second.

With ``figure_path`` it ends with a picture (one PNG): the private and public points, the exact ERM
halfspace, RRSPM's released halfspace, and the audit's privacy-loss lower bounds against eps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.ledger import Ledger
from oraclepriv.oracle import make_oracle
from oraclepriv.public_data import PublicData
from oraclepriv.release import reading_diagnostics

__all__ = ["run_demo"]


def _population(rng: np.random.Generator, n: int, noise: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points in the plane labelled by the halfspace x0 + 0.5 x1 >= 0.2, labels flipped w.p. noise."""
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] >= 0.2).astype(np.int8)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def _seeded_learner(cls: type, epsilon: float, hypothesis_class: str) -> Callable[[int], Any]:
    """The audit's learner factory: a fresh ``cls`` for every run's seed."""

    def make(seed: int) -> Any:
        return cls(epsilon=epsilon, hypothesis_class=hypothesis_class, random_state=seed)

    return make


def run_demo(
    n_private: int = 4000,
    n_public: int = 16,
    epsilon: float = 1.0,
    audit_runs: int = 1000,
    seed: int = 0,
    echo: Callable[[str], None] = print,
    figure_path: Path | None = None,
) -> dict[str, Any]:
    """Run the three steps above, printing a short report through ``echo``; returns the figures
    (and writes the picture to ``figure_path`` when one is given)."""
    from oraclepriv.audit import audit_learner, leak_scenario
    from oraclepriv.audit.controls import RRSPMReturnsFhat
    from oraclepriv.learners import RRSPM

    rng = np.random.default_rng(seed)
    X, y = _population(rng, n_private)
    X_test, y_test = _population(rng, 20_000)
    Z = rng.normal(size=(n_public, 2))  # public, unlabelled, same marginal (sigma = 1)
    report: dict[str, Any] = {}

    echo(f"oraclepriv demo: {n_private} private labelled points, {n_public} public unlabelled points in R^2")
    echo("")
    echo("1. exact non-private ERM over halfspaces (backend chosen per problem)")
    with Ledger() as ledger:
        erm = make_oracle("halfspace").solve(X, y, caller="demo", step="non-private-erm")
    erm_acc = float(np.mean(erm.hypothesis.predict(X_test) == y_test))
    echo(
        f"   backend={erm.backend}  objective={erm.objective:g} mistakes  bound={erm.bound:g}  "
        f"certified={erm.certified}  {erm.seconds:.2f} s  test accuracy {erm_acc:.3f}"
    )
    report["erm"] = {"certified": erm.certified, "objective": erm.objective, "test_accuracy": erm_acc}

    echo("")
    echo(f"2. RRSPM (Block et al., Alg. 4) at eps={epsilon:g}, Laplace weights of scale 2m/eps")
    start = time.perf_counter()
    rrspm = RRSPM(epsilon=epsilon, hypothesis_class="halfspace", random_state=seed).fit(X, y, X_public=PublicData(Z))
    fit_seconds = time.perf_counter() - start
    acc = float(np.mean(rrspm.predict(X_test) == y_test))
    release = rrspm.release_
    echo(f"   release: {release.hypothesis.to_dict()}")
    echo(f"   guarantee: {release.privacy['guarantee']}; neighbouring = {release.privacy['neighbouring']}")
    echo("   its oracle calls (NON-PRIVATE diagnostics, shown here on purpose; never part of the release):")
    with reading_diagnostics():
        records = list(rrspm.ledger_.records)
    for record in records:
        echo(
            f"     call {record['call']}: step={record['step']:<12} n={record['n']:<5} backend={record['backend']:<9} "
            f"signed weights={str(record['signed_weights']):<5} certified={record['certified']}  {record['seconds']:.2f} s"
        )
    echo(
        f"   {len(records)} oracle calls, fit {fit_seconds:.2f} s, test accuracy {acc:.3f} (non-private {erm_acc:.3f})"
    )
    report["rrspm"] = {
        "oracle_calls": len(records),
        "steps": [r["step"] for r in records],
        "test_accuracy": acc,
        "release": release.to_dict(),
    }

    echo("")
    echo(f"3. privacy audit on neighbouring datasets ({audit_runs} runs each), Clopper-Pearson 95%")
    scenario = leak_scenario()
    verdicts = []
    for label, cls in (("RRSPM", RRSPM), ("broken: returns fhat", RRSPMReturnsFhat)):
        result = audit_learner(
            _seeded_learner(cls, epsilon, scenario.hypothesis_class),
            scenario,
            epsilon=epsilon,
            n_runs=audit_runs,
            seed=seed,
            learner_name=label,
        )
        verdict = "passes" if result.passed else "CAUGHT: privacy loss lower bound exceeds eps"
        echo(f"   {label:<22} eps lower bound {result.eps_lower:.3f} (claimed {epsilon:g})  -> {verdict}")
        verdicts.append({"learner": label, "eps_lower": result.eps_lower, "passed": result.passed})
    report["audit"] = verdicts
    report["ledger_non_private"] = len(ledger)
    if figure_path is not None:
        draw_demo(Path(figure_path), X, y, Z, erm.hypothesis, rrspm.hypothesis_, verdicts, epsilon)
        echo("")
        echo(f"picture: {Path(figure_path).resolve()}")
        report["figure"] = str(figure_path)
    return report


def draw_demo(
    path: Path,
    X: np.ndarray,
    y: np.ndarray,
    Z: np.ndarray,
    erm: Any,
    released: Any,
    verdicts: list[dict[str, Any]],
    epsilon: float,
) -> None:
    """The demo's picture: data and the two halfspaces (left), the audit's lower bounds against eps (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bars) = plt.subplots(1, 2, figsize=(11, 4.8), gridspec_kw={"width_ratios": [2.2, 1]})
    shown = np.random.default_rng(0).choice(len(X), size=min(len(X), 1500), replace=False)
    for label, colour in ((0, "tab:blue"), (1, "tab:orange")):
        pick = shown[y[shown] == label]
        ax.scatter(X[pick, 0], X[pick, 1], s=6, alpha=0.35, color=colour, label=f"private, y = {label}")
    ax.scatter(Z[:, 0], Z[:, 1], s=90, marker="*", color="black", label="public (unlabelled)")
    lo, hi = np.percentile(X, [1, 99], axis=0)
    xs = np.linspace(lo[0] - 0.5, hi[0] + 0.5, 200)
    for hypothesis, style, name in (
        (erm, "-", "exact ERM (certified)"),
        (released, "--", f"RRSPM release, eps = {epsilon:g}"),
    ):
        w, b = np.asarray(hypothesis.w, dtype=float), float(hypothesis.b)
        if abs(w[1]) > 1e-12:
            ax.plot(
                xs, -(w[0] * xs + b) / w[1], style, color="crimson" if style == "--" else "darkgreen", lw=2, label=name
            )
        elif abs(w[0]) > 1e-12:
            ax.axvline(-b / w[0], linestyle=style, color="crimson" if style == "--" else "darkgreen", lw=2, label=name)
    ax.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
    ax.set_ylim(lo[1] - 0.5, hi[1] + 0.5)
    ax.set_title("halfspaces: the exact ERM and RRSPM's private release")
    ax.legend(loc="lower left", fontsize=8)
    names = [v["learner"] for v in verdicts]
    values = [v["eps_lower"] for v in verdicts]  # never negative (oraclepriv.audit.stats)
    bars.bar(range(len(values)), values, color=["tab:green" if v["passed"] else "tab:red" for v in verdicts])
    bars.axhline(epsilon, color="black", linestyle=":", label=f"claimed eps = {epsilon:g}")
    bars.set_xticks(range(len(values)), names, rotation=15, fontsize=8)
    bars.set_ylabel("audit: lower bound on the privacy loss")
    bars.set_title("privacy audit (95% Clopper-Pearson)")
    bars.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
