"""Command-line commands for the private learners: ``learn``, ``demo``, ``audit``, ``bench learners``.

Registered on the main typer app by :mod:`oraclepriv.cli`.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from oraclepriv.io import read_csv_problem, to_json

audit_app = typer.Typer(no_args_is_help=True, help="Privacy audits on neighbouring datasets (with negative controls).")


class Algorithm(str, Enum):
    rrspm = "rrspm"
    perturbation = "perturbation"
    regularization = "regularization"


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _make_learner(algorithm: Algorithm, epsilon: float, delta: Optional[float], hypothesis: str, backend: Optional[str], seed: Optional[int], time_limit: Optional[float]):
    from oraclepriv.learners import RRSPM, Perturbation, Regularization

    common = {"epsilon": epsilon, "backend": backend, "random_state": seed, "time_limit": time_limit}
    if algorithm is Algorithm.rrspm:
        if delta:
            return RRSPM(hypothesis=hypothesis, noise="gaussian", delta=delta, **common)
        return RRSPM(hypothesis=hypothesis, **common)
    cls = Perturbation if algorithm is Algorithm.perturbation else Regularization
    params = dict(common)
    if delta is not None:
        params["delta"] = delta
    return cls(hypothesis=hypothesis, **params)


def learn(
    private: Path = typer.Argument(..., help="Private CSV: feature columns and label column y in {0,1}."),
    public: Path = typer.Option(..., "--public", help="Public CSV: the same feature columns, unlabelled."),
    algorithm: Algorithm = typer.Option(..., "--algorithm", help="Learner (seed 000: Alg 4, Alg 2, Alg 3)."),
    epsilon: float = typer.Option(..., "--epsilon", help="Privacy parameter epsilon > 0."),
    delta: Optional[float] = typer.Option(None, "--delta", help="delta in [0, 1/n); for rrspm a delta > 0 selects Gaussian weights."),
    hypothesis: str = typer.Option("halfspace", "--class", help="threshold | stump | halfspace (regularization: linear)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="Oracle backend (default: chosen per problem)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (default: OS entropy)."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Per-call oracle time limit (MIP backends)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Fit a private learner: prints the hypothesis, the oracle calls (ledger) and the privacy record."""
    try:
        data = read_csv_problem(private)
        pub = read_csv_problem(public, require_labels=False)
        if pub.feature_names != data.feature_names:
            raise ValueError(
                f"public data file {str(public)!r} has feature columns {list(pub.feature_names)} but the private "
                f"data have {list(data.feature_names)}"
            )
        if data.weights is not None:
            raise ValueError(f"private data file {str(private)!r} has a 'weight' column; private learners take unweighted data")
        learner = _make_learner(algorithm, epsilon, delta, hypothesis, backend, seed, time_limit)
        learner.fit(data.X, data.y, X_public=pub.X)
    except (ValueError, ImportError, RuntimeError) as exc:
        _fail(str(exc))
        return
    summary = learner.summary()
    if as_json:
        typer.echo(to_json(summary))
        return
    typer.echo(f"{summary['algorithm']}  hypothesis {summary['hypothesis']}")
    for call in summary["oracle_calls"]:
        typer.echo(
            f"  oracle call {call['call']}: step={call['step']} backend={call['backend']} n={call['n']} "
            f"certified={call['certified']} {call['seconds']:.3f} s"
        )
    privacy = summary["privacy"]
    typer.echo(f"  privacy: epsilon={privacy['epsilon']} delta={privacy['delta']} ({privacy['neighbouring']})")


def demo(seed: int = typer.Option(0, "--seed", help="Random seed.")) -> None:
    """Exact ERM, RRSPM with its two oracle calls, and a privacy audit that catches a broken learner."""
    from oraclepriv.demo import run_demo

    report = run_demo(seed=seed, echo=typer.echo)
    wrong = [v for v in report["audit"] if v["passed"] != (v["learner"] == "RRSPM")]
    if wrong or not report["erm"]["certified"] or report["rrspm"]["oracle_calls"] != 2:
        typer.echo("demo: UNEXPECTED result (see above)", err=True)
        raise typer.Exit(code=1)


@audit_app.command("rrspm")
def audit_rrspm(
    runs: int = typer.Option(4000, "--runs", help="Runs of the whole learner per neighbouring dataset."),
    epsilon: float = typer.Option(1.0, "--epsilon"),
    seed: int = typer.Option(0, "--seed"),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the rows as JSON to this file."),
) -> None:
    """RRSPM on every audit scenario, and the negative controls each scenario must catch.

    Each verdict is a 95% confidence statement (Clopper-Pearson, Bonferroni over events). On the
    tight construction the correct learner sits exactly at its privacy bound, so a small fraction of
    seeds flags it: a false alarm there is possible by design, a pass of a negative control is not
    expected at all.
    """
    from oraclepriv.audit.suite import rrspm_audit_suite

    def show(row: dict) -> None:
        typer.echo(
            f"{row['scenario']:<14} {row['learner']:<46} eps_lower={row['eps_lower']:.3f} eps_point={row['eps_point']:.3f} "
            f"passed={str(row['passed']):<5} expected={row['expected']:<4} {row['verdict']}"
        )

    rows = rrspm_audit_suite(n_runs=runs, epsilon=epsilon, seed=seed, progress=show)
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
    if any(row["verdict"] != "ok" for row in rows):
        raise typer.Exit(code=1)


def bench_learners(
    repeats: int = typer.Option(3, "--repeats"),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the rows as JSON to this file."),
) -> None:
    """Each learner's total fit time divided by the time of its oracle calls (target <= 1.2)."""
    from oraclepriv.learners.bench import bench_learners as run

    rows = run(repeats=repeats)
    for row in rows:
        typer.echo(
            f"{row['learner']:<24} n={row['n']:<6} m={row['m']:<4} calls={row['oracle_calls']:<3} fit {row['fit_seconds']:.4f} s "
            f"/ oracle {row['oracle_seconds']:.4f} s = {row['ratio']:.3f}"
        )
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
