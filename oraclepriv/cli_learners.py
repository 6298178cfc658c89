"""Command-line commands for the private learners: ``learn``, ``demo``, ``audit``, ``bench learners``.

Registered on the main typer app by :mod:`oraclepriv.cli`.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from oraclepriv.io import read_csv_problem, to_json
from oraclepriv.release import reading_diagnostics

audit_app = typer.Typer(no_args_is_help=True, help="Privacy audits on neighbouring datasets (with negative controls).")


class Algorithm(str, Enum):
    rrspm = "rrspm"
    perturbation = "perturbation"
    regularization = "regularization"
    subsample = "subsample"
    public_cover_em = "public-cover-em"
    ppm = "ppm"


PRIVACY_BITS_COLUMN = "public"


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _make_learner(algorithm: Algorithm, epsilon: float, delta: Optional[float], hypothesis_class: str, backend: Optional[str],
                  seed: Optional[int], time_limit: Optional[float], on_uncertified: Optional[str] = None,
                  teachers: int = 16):
    from oraclepriv.learners import RRSPM, Perturbation, PublicCoverEM, Regularization, SubsampleAggregate

    if algorithm is Algorithm.public_cover_em:
        # no oracle: the options that configure one are refused rather than silently ignored
        for flag, value in (("--backend", backend), ("--time-limit", time_limit), ("--on-uncertified", on_uncertified)):
            if value is not None:
                raise ValueError(f"--algorithm public-cover-em makes no oracle call; {flag} {value!r} does not apply")
        if delta:
            raise ValueError(f"--algorithm public-cover-em is pure epsilon-DP (exponential mechanism); got --delta {delta}")
        return PublicCoverEM(epsilon=epsilon, hypothesis_class=hypothesis_class, random_state=seed)
    common = {"epsilon": epsilon, "backend": backend, "random_state": seed, "time_limit": time_limit}
    if on_uncertified is not None:
        common["on_uncertified"] = on_uncertified
    if algorithm is Algorithm.subsample:
        # no --delta: Laplace noise, pure eps-DP; a delta > 0 selects the Gaussian mechanism
        if delta:
            return SubsampleAggregate(n_teachers=teachers, noise="gaussian", delta=delta, hypothesis_class=hypothesis_class, **common)
        return SubsampleAggregate(n_teachers=teachers, noise="laplace", delta=0.0, hypothesis_class=hypothesis_class, **common)
    if algorithm is Algorithm.rrspm:
        if delta:
            return RRSPM(hypothesis_class=hypothesis_class, noise="gaussian", delta=delta, **common)
        return RRSPM(hypothesis_class=hypothesis_class, **common)
    cls = Perturbation if algorithm is Algorithm.perturbation else Regularization
    params = dict(common)
    if delta is not None:
        params["delta"] = delta
    return cls(hypothesis_class=hypothesis_class, **params)


def learn(
    private: Path = typer.Argument(..., help="CSV: feature columns and label column y in {0,1} (ppm: plus a 0/1 column 'public')."),
    public: Optional[Path] = typer.Option(None, "--public", help="Public CSV (seed-000 learners): the same feature columns, unlabelled."),
    algorithm: Algorithm = typer.Option(
        ..., "--algorithm",
        help="rrspm | perturbation | regularization (seed 000: Alg 4, 2, 3); subsample (subsample-and-aggregate, "
             "private for any oracle); public-cover-em (exponential mechanism over the public labelings, seeds "
             "003/004; no oracle); ppm (seed 002).",
    ),
    epsilon: float = typer.Option(..., "--epsilon", help="Privacy parameter epsilon > 0."),
    delta: Optional[float] = typer.Option(None, "--delta", help="delta in [0, 1/n); for rrspm a delta > 0 selects Gaussian weights."),
    hypothesis_class: str = typer.Option("halfspace", "--hypothesis-class", help="threshold | stump | halfspace (regularization: linear)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="Oracle backend (default: chosen per problem)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (default: OS entropy)."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Per-call oracle time limit (MIP backends)."),
    on_uncertified: Optional[str] = typer.Option(
        None, "--on-uncertified",
        help="raise | fallback | flag: what an uncertified private-data oracle call does (see oraclepriv.robust); "
             "default: raise (subsample: flag, its privacy does not depend on the oracle).",
    ),
    teachers: int = typer.Option(16, "--teachers", help="subsample: number of disjoint blocks / teachers k."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    diagnostics: Optional[str] = typer.Option(
        None, "--diagnostics",
        help="Also print NON-PRIVATE diagnostics (oracle calls with objectives and certificates, and the named "
             "values): 'all' or a comma-separated list of names. They depend on the private data beyond the "
             "release; no privacy proof covers them.",
    ),
) -> None:
    """Fit a private learner and print its release: the hypothesis and its privacy record.

    The release is exactly what the privacy guarantee covers. Seed-000 learners take private labelled
    data plus unlabelled public points (--public). The PPM learner (seed 002) takes one file in which
    the 0/1 column 'public' holds each example's privacy bit.
    """
    try:
        names = _diagnostic_names(algorithm, diagnostics)
        if algorithm is Algorithm.ppm:
            learner = _fit_ppm(private, public, epsilon, delta, hypothesis_class, seed)
        else:
            learner = _fit_seed000(private, public, algorithm, epsilon, delta, hypothesis_class, backend, seed, time_limit,
                                   on_uncertified, teachers)
    except (ValueError, ImportError, RuntimeError) as exc:
        _fail(str(exc))
        return
    report = learner.release_.to_dict()
    if names is not None:
        typer.echo("warning: printing NON-PRIVATE diagnostics (--diagnostics): they depend on the private data "
                   "beyond the release and void its guarantee if published", err=True)
        with reading_diagnostics():
            report["diagnostics"] = learner.diagnostics_.to_dict(names)
    _print_report(report, as_json)


def _diagnostic_names(algorithm: Algorithm, requested: Optional[str]) -> Optional[list[str]]:
    """The diagnostics ``--diagnostics`` asks for (None: none), checked against what the learner records."""
    if requested is None:
        return None
    known = list(_learner_class(algorithm).diagnostic_names)
    if requested.strip() == "all":
        return known
    names = [name.strip() for name in requested.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        raise ValueError(
            f"--diagnostics {requested!r}: {algorithm.value} records no diagnostic named "
            f"{', '.join(map(repr, unknown)) or '(empty)'}; it records {known} (or use 'all')"
        )
    return names


def _learner_class(algorithm: Algorithm) -> type:
    from oraclepriv.learners import RRSPM, Perturbation, PPMHalfspaces, PublicCoverEM, Regularization, SubsampleAggregate

    return {Algorithm.rrspm: RRSPM, Algorithm.perturbation: Perturbation, Algorithm.regularization: Regularization,
            Algorithm.subsample: SubsampleAggregate, Algorithm.public_cover_em: PublicCoverEM,
            Algorithm.ppm: PPMHalfspaces}[algorithm]


def _fit_ppm(private: Path, public: Optional[Path], epsilon: float, delta: Optional[float], hypothesis_class: str, seed: Optional[int]):
    from oraclepriv.learners import PPMHalfspaces

    if public is not None:
        raise ValueError("--algorithm ppm reads the privacy bits from the data file's 'public' column; do not pass --public")
    if delta:
        raise ValueError(f"--algorithm ppm is pure epsilon-DP (exponential mechanism); got --delta {delta}")
    if hypothesis_class != "halfspace":
        raise ValueError(f"--algorithm ppm learns halfspaces; got --hypothesis-class {hypothesis_class}")
    data = read_csv_problem(private, mask_column=PRIVACY_BITS_COLUMN)
    if data.weights is not None:
        raise ValueError(f"data file {str(private)!r} has a 'weight' column; private learners take unweighted data")
    return PPMHalfspaces(epsilon=epsilon, random_state=seed).fit(data.X, data.y, data.mask)


def _fit_seed000(private: Path, public: Optional[Path], algorithm: Algorithm, epsilon: float, delta: Optional[float],
                 hypothesis_class: str, backend: Optional[str], seed: Optional[int], time_limit: Optional[float],
                 on_uncertified: Optional[str] = None, teachers: int = 16):
    if public is None:
        raise ValueError(f"--public is required for --algorithm {algorithm.value}")
    data = read_csv_problem(private)
    pub = read_csv_problem(public, require_labels=False)
    if pub.feature_names != data.feature_names:
        raise ValueError(
            f"public data file {str(public)!r} has feature columns {list(pub.feature_names)} but the private "
            f"data have {list(data.feature_names)}"
        )
    if data.weights is not None:
        raise ValueError(f"private data file {str(private)!r} has a 'weight' column; private learners take unweighted data")
    learner = _make_learner(algorithm, epsilon, delta, hypothesis_class, backend, seed, time_limit, on_uncertified, teachers)
    return learner.fit(data.X, data.y, X_public=pub.X)


def _print_report(report: dict, as_json: bool) -> None:
    """The release (and, when asked for, the diagnostics) as JSON or as text."""
    if as_json:
        typer.echo(to_json(report, sort_keys=True))
        return
    privacy = report["privacy"]
    typer.echo(f"{report['algorithm']}  released hypothesis {report['hypothesis']}")
    typer.echo(f"  privacy: {privacy['guarantee']}")
    typer.echo(f"  neighbouring: {privacy['neighbouring']}")
    typer.echo(f"  oracle calls by design: {privacy.get('oracle_calls_by_design')}; covers: {privacy['covers']}")
    if "diagnostics" in report:
        diag = report["diagnostics"]
        typer.echo(f"  {diag['notice']}:")
        for call in diag["oracle_calls"]:
            typer.echo(
                f"    oracle call {call['call']}: step={call['step']} backend={call['backend']} n={call['n']} "
                f"certified={call['certified']} objective={call['objective']} bound={call['bound']} {call['seconds']:.3f} s"
            )
        for name, value in diag.items():
            if name not in ("notice", "oracle_calls"):
                typer.echo(f"    {name}: {value}")


def demo(
    seed: int = typer.Option(0, "--seed", help="Random seed (>= 0)."),
    out: Path = typer.Option(Path("oraclepriv-demo.png"), "--out", help="Where to write the demo's picture (PNG)."),
) -> None:
    """Exact ERM, RRSPM with its two oracle calls, and a privacy audit that catches a broken learner; ends with a picture."""
    from oraclepriv.demo import run_demo

    if seed < 0:
        _fail(f"--seed must be >= 0; got {seed}")
    if out.is_dir() or not out.parent.resolve().is_dir():
        _fail(f"--out {str(out)!r} must be a file path in an existing directory")
    report = run_demo(seed=seed, echo=typer.echo, figure_path=out)
    wrong = [v for v in report["audit"] if v["passed"] != (v["learner"] == "RRSPM")]
    if wrong or not report["erm"]["certified"] or report["rrspm"]["oracle_calls"] != 2:
        typer.echo("demo: UNEXPECTED result (see above)", err=True)
        raise typer.Exit(code=1)


# options shared by the audit commands
_AUDIT_RUNS = typer.Option(4000, "--runs", help="Runs of the whole learner per neighbouring dataset.")
_AUDIT_EPSILON = typer.Option(1.0, "--epsilon")
_AUDIT_SEED = typer.Option(0, "--seed")
_AUDIT_OUT = typer.Option(None, "--out", help="Also write the rows as JSON to this file.")
_AUDIT_REPORT = typer.Option(None, "--report", help="Also write a Markdown table (for docs/) to this file.")
_AUDIT_JOBS = typer.Option(1, "--jobs", help="Worker processes for the runs (joblib; -1: every CPU). Results do not depend on it.")
_AUDIT_DRAWS = typer.Option(1_000_000, "--draws", help="Runs of the reduced problem per neighbouring dataset (no oracle call per run).")


def _register_audit(name: str, title: str, suite_name: str, doc: str, extra_note: str = "", reduced: bool = False) -> None:
    """Register ``oraclepriv audit NAME``: the suite ``oraclepriv.audit.suite.SUITE_NAME`` with the shared
    options (and ``--draws`` for suites with reduced-sampler rows)."""

    def run(runs: int, epsilon: float, seed: int, out: Optional[Path], report: Optional[Path], jobs: int,
            draws: Optional[int]) -> None:
        import oraclepriv.audit.suite as suites

        _run_audit_command(name, title, getattr(suites, suite_name), runs, epsilon, seed, out, report, jobs=jobs,
                           extra_note=extra_note, draws=draws)

    if reduced:
        def command(runs: int = _AUDIT_RUNS, epsilon: float = _AUDIT_EPSILON, seed: int = _AUDIT_SEED,
                    out: Optional[Path] = _AUDIT_OUT, report: Optional[Path] = _AUDIT_REPORT, jobs: int = _AUDIT_JOBS,
                    draws: int = _AUDIT_DRAWS) -> None:
            run(runs, epsilon, seed, out, report, jobs, draws)
    else:
        def command(runs: int = _AUDIT_RUNS, epsilon: float = _AUDIT_EPSILON, seed: int = _AUDIT_SEED,  # type: ignore[misc]
                    out: Optional[Path] = _AUDIT_OUT, report: Optional[Path] = _AUDIT_REPORT, jobs: int = _AUDIT_JOBS) -> None:
            run(runs, epsilon, seed, out, report, jobs, None)

    command.__doc__ = doc
    audit_app.command(name)(command)


_register_audit(
    "rrspm", "RRSPM privacy audit", "rrspm_audit_suite",
    """RRSPM on every audit scenario, and the negative controls each scenario must catch.

    The audited outcome is the whole release. The whole learner runs --runs times per neighbour; the
    tight constructions (thresholds, stumps, halfspaces through scip-bc) are also sampled --draws
    times through the reduced problem, which detects a loss of 1.2 eps. Each verdict is a 95%
    confidence statement (Clopper-Pearson, Bonferroni over events); a row's "detects" is the loss its
    run count detects on the tight construction. There the correct learner sits exactly at its bound,
    so a small fraction of seeds flags it: a false alarm is possible by design, a passing control is not.
    """,
    reduced=True,
)
_register_audit(
    "subsample", "SubsampleAggregate privacy audit", "subsample_audit_suite",
    "SubsampleAggregate (private for any oracle) with an exact and a targeting solver, and its negative controls.",
    "Scenario teacher-flip: exact log-ratio of the correct learner ln((1-p)/p) = 0.83 with p = e^-0.5/2. "
    "The targeting solver fails (honestly uncertified) on every instance holding D's differing record.",
)


@audit_app.command("public-cover")
def audit_public_cover(
    epsilon: float = _AUDIT_EPSILON,
    seed: int = _AUDIT_SEED,
    others: int = typer.Option(4, "--others", help="Public points (x2 labels) and private records tried at every position, besides the label flip."),
    out: Optional[Path] = _AUDIT_OUT,
    report: Optional[Path] = _AUDIT_REPORT,
) -> None:
    """PublicCoverEM: EXACT audit (output laws computed, not sampled) over neighbours at every position,
    and the negative controls it must catch."""
    from oraclepriv.audit.suite import public_cover_audit_suite
    from oraclepriv.validation import check_positive

    try:
        epsilon = check_positive(epsilon, "--epsilon")
        if others < 1:  # label flips alone never move a point: a cover leaking private x's would go unseen
            raise ValueError(f"--others must be >= 1 (neighbours that replace a record's features); got {others}")
    except ValueError as exc:
        _fail(str(exc))

    def show(row: dict) -> None:
        typer.echo(
            f"{row['scenario']:<13} {row['learner']:<50} neighbours={row['n_neighbours']:<4} "
            f"eps_hat={row['epsilon_hat']:.4f} passed={str(row['passed']):<5} expected={row['expected']:<4} {row['verdict']}"
        )

    rows = public_cover_audit_suite(epsilon=epsilon, seed=seed, progress=show, n_others=others)
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from oraclepriv.bench.report import markdown_table

        command = f"oraclepriv audit public-cover --epsilon {epsilon:g} --seed {seed} --others {others} --report {report}"
        columns = ["scenario", "learner", "n_private", "n_public", "n_neighbours", "epsilon_hat", "worst_pair", "passed",
                   "expected", "verdict"]
        note = (
            f"Claimed epsilon = {epsilon:g}. Exact audit: eps_hat is the largest |log p_D(c) - log p_D'(c)| over every "
            "output c and every audited neighbour D' of D (each private position replaced by its label flip, "
            f"{others} public points with either label and {others} other private records), computed from the "
            "mechanism's explicit output law; no sampling, so no confidence level. A learner fails when eps_hat > "
            "epsilon; inf means an output possible under one dataset only. Controls are deliberately broken learners. "
            "The label-DP row (cover of the private features, seed 004 Alg. 5) is audited on label flips only, its "
            "neighbouring notion; the row after it shows that it is not private for replacing a whole record."
        )
        report.write_text(markdown_table("PublicCoverEM exact privacy audit", command, rows, columns, note), encoding="utf-8")
    if any(row["verdict"] != "ok" for row in rows):
        raise typer.Exit(code=1)


def _run_audit_command(name: str, title: str, suite, runs: int, epsilon: float, seed: int, out: Optional[Path],
                       report: Optional[Path], *, jobs: int = 1, extra_note: str = "", draws: Optional[int] = None) -> None:
    def show(row: dict) -> None:
        detects = row.get("detects")
        typer.echo(
            f"{row['scenario']:<18} {row['learner']:<50} runs={row['n_runs']:<8} eps_lower={row['eps_lower']:.3f} "
            f"eps_point={row['eps_point']:.3f} " + (f"detects={detects:.3f} " if detects is not None else "")
            + f"passed={str(row['passed']):<5} expected={row['expected']:<4} {row['verdict']}"
        )

    from oraclepriv.audit.runner import check_n_jobs

    try:
        jobs = check_n_jobs(jobs)
        if runs < 1:
            raise ValueError(f"--runs must be >= 1; got {runs}")
        if draws is not None and draws < 1:
            raise ValueError(f"--draws must be >= 1; got {draws}")
    except ValueError as exc:
        _fail(str(exc))
    extra = {} if draws is None else {"draws": draws}
    rows = suite(n_runs=runs, epsilon=epsilon, seed=seed, progress=show, n_jobs=jobs, **extra)
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from oraclepriv.bench.report import markdown_table

        command = (f"oraclepriv audit {name} --runs {runs}" + (f" --draws {draws}" if draws is not None else "")
                   + f" --epsilon {epsilon:g} --seed {seed} --report {report}")
        columns = ["scenario", "learner", "delta", "sampler", "n_runs", "eps_lower", "eps_point", "detects", "passed",
                   "expected", "verdict"]
        note = (
            f"Claimed epsilon = {epsilon:g}. The audited outcome is the learner's whole release. eps_lower: 95% "
            "Clopper-Pearson lower confidence bound on the privacy loss (Bonferroni over events); an audit fails when "
            "eps_lower > epsilon. sampler: the whole learner per run, or the reduced problem (exact oracle costs once "
            "per dataset, bulk noise, the learner's own release step). detects: the loss that run count detects on the "
            "tight construction (the Clopper-Pearson bound at the expected counts). Controls are deliberately broken learners."
        )
        if extra_note:
            note += " " + extra_note
        report.write_text(markdown_table(title, command, rows, columns, note), encoding="utf-8")
    if any(row["verdict"] != "ok" for row in rows):
        raise typer.Exit(code=1)


def bench_learners(
    repeats: int = typer.Option(3, "--repeats", help="Minimum number of fits per learner."),
    min_seconds: float = typer.Option(2.0, "--min-seconds", help="Keep fitting until this much fit time has accumulated."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the rows as JSON to this file."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a Markdown table (for docs/) to this file."),
) -> None:
    """Each learner's total fit time divided by the time of its oracle calls (target <= 1.2)."""
    from oraclepriv.bench.learners import bench_learners as run

    if repeats < 1 or not (min_seconds >= 0):
        raise typer.BadParameter(f"need --repeats >= 1 and --min-seconds >= 0; got {repeats!r}, {min_seconds!r}")
    rows = run(repeats=repeats, min_seconds=min_seconds)
    for row in rows:
        typer.echo(
            f"{row['learner']:<24} n={row['n']:<6} m={row['m']:<4} calls={row['oracle_calls']:<3} fit {row['fit_seconds']:.4f} s "
            f"/ oracle {row['oracle_seconds']:.4f} s: ratio {row['ratio']:.3f} (IQR {row['ratio_q25']:.3f}-{row['ratio_q75']:.3f}, {row['fits']} fits)"
        )
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from oraclepriv.bench.report import markdown_table

        command = f"oraclepriv bench learners --repeats {repeats} --min-seconds {min_seconds:g} --report {report}"
        columns = ["learner", "instance", "n", "m", "d", "oracle_calls", "fits", "fit_seconds", "oracle_seconds",
                   "ratio", "ratio_q25", "ratio_q75"]
        note = ("ratio = total fit time / time inside the fit's oracle calls, median over the fits (q25/q75: its "
                "quartiles); fit_seconds and oracle_seconds are medians; target <= 1.2 (issue #4).")
        report.write_text(markdown_table("Learner overhead", command, rows, columns, note), encoding="utf-8")


def bench_ppm(
    repeat: int = typer.Option(1, "--repeat"),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the result as JSON to this file."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a Markdown table (for docs/) to this file."),
) -> None:
    """PPM learner (seed 002): d=2 with n_pub=200 (target < 10 s) and d=1 at n=1e6."""
    from oraclepriv.bench.ppm import bench_ppm as run

    result = run(repeat=repeat)
    for name, case in result["cases"].items():
        typer.echo(
            f"{name:<12} d={case['d']} n={case['n']:<8} n_pub={case['n_pub']:<5} |G|={case['class_size']:.3g} "
            f"best wall {case['best_wall_seconds']:.2f} s"
        )
    if out is not None:
        out.write_text(to_json(result, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from oraclepriv.bench.report import markdown_table

        rows = [{"case": name, **case} for name, case in result["cases"].items()]
        command = f"oraclepriv bench ppm --repeat {repeat} --report {report}"
        columns = ["case", "d", "n", "n_pub", "class_size", "n_candidates", "best_wall_seconds"]
        note = "PPM learner (seed 002, Alg. 2) fit time; targets: d=2 with n_pub=200 < 10 s on 2 cores; d=1 at n=1e6 (issue #5)."
        report.write_text(markdown_table("PPM learner", command, rows, columns, note), encoding="utf-8")


experiment_app = typer.Typer(no_args_is_help=True, help="Experiments that produce the figures in docs/.")


@experiment_app.command("ppm-curves")
def experiment_ppm_curves(
    out: Path = typer.Option(Path("docs/figures/ppm"), "--out", help="Output folder (PNG + CSVs)."),
    quick: bool = typer.Option(False, "--quick", help="Tiny sizes (a smoke run)."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Learning curves of the PPM learner (d in {1,2}, eps in {0.1,1,inf}, realizable and 10% noise) with slopes."""
    from oraclepriv.experiments.ppm_curves import run_ppm_curves

    kwargs = {"sizes": {1: [50, 100], 2: [30, 60]}, "repetitions": 2, "n_test": 2000, "draws": 2} if quick else {}
    result = run_ppm_curves(out, random_state=seed, **kwargs)
    slopes = result.get("slopes")
    if slopes is not None:
        typer.echo(slopes.to_string(index=False))
    typer.echo(f"wrote {out}")


@experiment_app.command("rrspm-tradeoff")
def experiment_rrspm_tradeoff(
    out: Path = typer.Option(Path("docs/figures/rrspm"), "--out", help="Output folder (PNGs + CSVs + README)."),
    quick: bool = typer.Option(False, "--quick", help="Tiny sizes (a smoke run)."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """RRSPM (seed 000, Alg. 4): the m-n trade-off (U-shape), sigma-smooth shift, and a non-smooth control."""
    from oraclepriv.experiments.rrspm_tradeoff import run_rrspm_experiments

    run_rrspm_experiments(out, quick=quick, random_state=seed)
    typer.echo(f"wrote {out}")


def _register_comparison(name: str, module: str, function: str, default_out: str, doc: str) -> None:
    """Register ``oraclepriv experiment NAME``: a learner comparison with --out/--quick/--seed/--jobs that
    prints its slopes and ratios."""

    def command(
        out: Path = typer.Option(Path(default_out), "--out", help="Output folder (PNG + CSVs + README)."),
        quick: bool = typer.Option(False, "--quick", help="Tiny sizes (a smoke run)."),
        seed: int = typer.Option(0, "--seed"),
        jobs: int = typer.Option(1, "--jobs", help="Worker processes (joblib; -1: every CPU). Results do not depend on it."),
    ) -> None:
        import importlib

        run = getattr(importlib.import_module(module), function)
        try:
            result = run(out, quick=quick, random_state=seed, n_jobs=jobs)
        except ValueError as exc:
            _fail(str(exc))
            return
        typer.echo(result["slopes"].to_string(index=False))
        typer.echo(result["ratio"].to_string(index=False))
        typer.echo(f"wrote {out}")

    command.__doc__ = doc
    experiment_app.command(name)(command)


_register_comparison(
    "robust-tradeoff", "oraclepriv.experiments.robust_tradeoff", "run_robust_tradeoff", "docs/figures/robust",
    "SubsampleAggregate (private for any oracle) vs RRSPM vs ERM: excess error vs n, and vs solver failure rate.",
)
_register_comparison(
    "cover-baseline", "oraclepriv.experiments.cover_baseline", "run_cover_baseline", "docs/figures/cover",
    "PublicCoverEM (exponential mechanism over the public cover, no oracle call) vs RRSPM vs ERM: excess error vs n.",
)
