"""``oraclepriv learn``: fit a private learner on CSV files and print its release (and, when asked, its
non-private diagnostics); ``--out MODEL.json`` saves the release for ``oraclepriv predict`` and ``score``.

The learners are those of the learner registry (:mod:`oraclepriv.learners.registry`): ``--algorithm``'s
choices, the list under ``--help`` and the estimator fitted all come from it, and a common flag applies to a
learner exactly when its estimator takes the parameter the flag sets. The options in detail (``--help``
gives one line each):

``--delta``
    In [0, 1/n) for n private records. What it selects is the learner's: rrspm and subsample take a
    delta > 0 as the Gaussian variant's (none: Laplace, pure epsilon-DP); perturbation and regularization add
    Gaussian noise only, so their delta must be > 0 (none: the learner's default); public-cover-em and ppm
    are pure epsilon-DP and take none.
``--backend NAME[:key=value,...]``
    As for ``oraclepriv erm`` (e.g. ``scip-bc:workers=2``); default: chosen per problem. regularization's
    convex oracle has one backend, ``highs-qp+kkt`` (``scipy`` is a deprecated alias of it).
``--seed``
    Anyone who knows it can replay the noise and undo the release's privacy: omit it (OS entropy) for a
    release you publish.
``--public-size``
    ``auto`` (the default: the theory's number for n, d and epsilon, docs/theory/block-et-al.md "Choosing
    m", kept below a vacuous delta), ``all``, or an integer M: a subsample drawn uniformly with public
    randomness (``--public-seed``; default: a seed computed from the public points, so that ``--seed`` alone
    reproduces a run) and published in the release. The public seed must differ from ``--seed``.
``--on-uncertified raise|fallback|flag``
    What an uncertified private-data oracle call does (:mod:`oraclepriv.robust`); default raise (subsample:
    flag, its privacy does not depend on the oracle).
``--allow-weak-guarantee``
    Release even when the total delta (design plus the numerical delta of near-ties, which grows with the
    public points and e^epsilon) is >= 1/n, which certifies nothing; the release then says its guarantee is
    VACUOUS. Without it such a fit is refused before its oracle calls.
``--diagnostics all|NAME,...``
    Also print NON-PRIVATE diagnostics (oracle calls with objectives and certificates, and the named
    values). They depend on the private data beyond the release; no privacy proof covers them.
``--budget FILE``
    A JSON privacy ledger (:class:`oraclepriv.PrivacyAccountant`) this run charges with its release's
    (epsilon, total delta), composed with the runs before it (:mod:`oraclepriv.cli.budget`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from oraclepriv.cli.common import (
    backend_oracle,
    check_backend_time_limit,
    check_delta,
    check_epsilon,
    check_input_file,
    check_output_file,
    check_seed,
    check_time_limit,
    fail,
    output_path,
    restricted_backend_problem,
)
from oraclepriv.cli.learn_fit import Options, fit_private_only, fit_with_privacy_bits, fit_with_public_points
from oraclepriv.learners.registry import FLAG_PARAMETERS, LearnerEntry, learner_entries, learner_entry

if TYPE_CHECKING:
    pass

#: the flags that configure an oracle: refused together for a learner that makes no oracle call
ORACLE_FLAGS = ("--backend", "--time-limit", "--on-uncertified")
#: a flag whose refusal gives the reason of another (the public seed goes with the public size)
SAME_REASON = {"--time-limit": "--backend", "--on-uncertified": "--backend", "--public-seed": "--public-size"}


class LearnCommand(TyperCommand):
    """``learn``'s command: its help ends with the registered learners, read from the registry when the help is
    shown (a learner registered after import is listed too; no learner module is imported)."""

    @property
    def epilog(self) -> str:
        lines = [f"  {entry.name:<16} {entry.summary}" for entry in learner_entries()]
        return (
            "\b\nAlgorithms (--algorithm):\n" + "\n".join(lines) + "\n\nEvery option in detail: oraclepriv.cli.learn."
        )

    @epilog.setter
    def epilog(self, value: str | None) -> None:
        """typer sets the epilog when it builds the command; the registry's is the one shown."""


def algorithm_name(value: str) -> str:
    """``--algorithm``'s parser: a name of the learner registry (read now, so a learner registered after import
    is taken)."""
    names = [entry.name for entry in learner_entries()]
    if value not in names:
        raise typer.BadParameter(f"{value!r} is not one of {names}")
    return value


def learn(
    ctx: typer.Context,
    private: Annotated[Path, typer.Argument(help="CSV: feature columns and a 0/1 label column y.")],
    algorithm: Annotated[
        str,
        typer.Option("--algorithm", metavar="NAME", parser=algorithm_name, help="The learner (listed below)."),
    ],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Privacy parameter, in (0, 700].")],
    public: Annotated[
        Path | None, typer.Option("--public", help="Public CSV: the same feature columns, unlabelled.")
    ] = None,
    delta: Annotated[float | None, typer.Option("--delta", help="Privacy parameter, in [0, 1/n).")] = None,
    hypothesis_class: Annotated[
        str, typer.Option("--hypothesis-class", help="threshold | stump | halfspace | linear.")
    ] = "halfspace",
    backend: Annotated[str | None, typer.Option("--backend", help="Oracle backend NAME[:key=value,...].")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Noise seed; omit it for a release you publish.")] = None,
    public_size: Annotated[
        str | None, typer.Option("--public-size", help="auto (default), all or M public points.", show_default=False)
    ] = None,
    public_seed: Annotated[int | None, typer.Option("--public-seed", help="Seed of the public subsample.")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Seconds per oracle call.")] = None,
    on_uncertified: Annotated[
        str | None, typer.Option("--on-uncertified", help="raise | fallback | flag (default: the learner's).")
    ] = None,
    teachers: Annotated[int | None, typer.Option("--teachers", help="Disjoint blocks (subsample; default 16).")] = None,
    allow_weak_guarantee: Annotated[
        bool, typer.Option("--allow-weak-guarantee", help="Release even if the total delta is >= 1/n.")
    ] = False,
    margin: Annotated[float | None, typer.Option("--margin", help="rho > 0 (margin-erm; default 0.1).")] = None,
    radius: Annotated[
        float | None, typer.Option("--radius", help="Data ball's radius r, fixed without the data (margin learners).")
    ] = None,
    norm_bound: Annotated[
        float | None, typer.Option("--norm-bound", help="Weight norm bound Lambda (margin learners; default 1).")
    ] = None,
    accounting: Annotated[
        str | None,
        typer.Option("--accounting", help="paper | resampling-gaussian | direct-gaussian (margin learners)."),
    ] = None,
    rounds: Annotated[
        str | None, typer.Option("--rounds", help="auto or M >= 1 rounds (margin learners).", show_default=False)
    ] = None,
    jl_dim: Annotated[
        str | None,
        typer.Option("--jl-dim", help="auto, none (no projection) or k >= 1 (margin learners).", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    diagnostics: Annotated[
        str | None, typer.Option("--diagnostics", help="Also print NON-PRIVATE diagnostics: all or NAME,...")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also save the release (for predict, score).", parser=output_path),
    ] = None,
    budget: Annotated[Path | None, typer.Option("--budget", help="A JSON privacy ledger this run charges.")] = None,
    budget_epsilon: Annotated[
        float | None, typer.Option("--budget-epsilon", help="New --budget: its epsilon (inf: no limit).")
    ] = None,
    budget_delta: Annotated[
        float | None, typer.Option("--budget-delta", help="New --budget: its delta (default 0).")
    ] = None,
    budget_slack: Annotated[
        float | None, typer.Option("--budget-slack", help="New --budget: its composition slack delta'.")
    ] = None,
) -> None:
    """Fit a private learner and print its release: the hypothesis and its privacy record.

    The release is exactly what the privacy guarantee covers. The learners of Block, Bun, Desai, Shetty, Wu
    take private labelled data plus unlabelled public points (--public); ppm (Bassily, Moran, Nandi) takes one
    file whose 0/1 column 'public' holds each example's privacy bit.
    """
    from oraclepriv.learners import UncertifiedOracleError
    from oraclepriv.near_ties import VacuousGuaranteeError
    from oraclepriv.release import reading_diagnostics

    entry = learner_entry(algorithm)
    check_input_file(private, "data file")
    check_input_file(public, "--public")
    if seed is not None:
        check_seed(seed)
    options = Options(
        epsilon=epsilon,
        delta=delta,
        hypothesis_class=hypothesis_class,
        backend=backend,
        seed=seed,
        time_limit=time_limit,
        on_uncertified=on_uncertified,
        teachers=teachers,
        public_size=public_size,
        public_seed=public_seed,
        allow_weak_guarantee=allow_weak_guarantee,
        margin=margin,
        radius=radius,
        norm_bound=norm_bound,
        accounting=accounting,
        rounds=rounds,
        jl_dim=jl_dim,
    )
    _check_flags_apply(entry, options)
    options = _check_options(entry, options)
    check_output_file(out, "--out")
    from oraclepriv.cli.budget import open_budget

    ledger = open_budget(ctx, budget, budget_epsilon, budget_delta, budget_slack, epsilon, delta)
    try:
        names = _diagnostic_names(entry, diagnostics)
        if entry.data == "privacy-bits":
            learner = fit_with_privacy_bits(entry, private, public, options)
        elif entry.data == "private":
            learner = fit_private_only(entry, private, public, options)
        else:
            learner = fit_with_public_points(entry, private, public, options)
    except UncertifiedOracleError:  # named by the flags (the learner names its parameters)
        fail(_uncertified_message(entry, options))
    except VacuousGuaranteeError as exc:  # named by the flags (the learner names its parameters)
        fail(_vacuous_message(entry, exc))
    except (ValueError, ImportError, RuntimeError) as exc:
        fail(str(exc))
    if ledger is not None:
        ledger.commit()  # the charge is saved before the release is printed
    if out is not None:
        try:
            learner.release_.save(out)
        except OSError as exc:
            fail(f"--out {str(out)!r}: cannot write the release ({exc.strerror or exc})")
    report = learner.release_.to_dict()
    if names is not None:
        typer.echo(
            "warning: printing NON-PRIVATE diagnostics (--diagnostics): they depend on the private data "
            "beyond the release and void its guarantee if published",
            err=True,
        )
        with reading_diagnostics():
            report["diagnostics"] = learner.diagnostics_.to_dict(names)
    _print_report(report, as_json)


# ------------------------------------------------------------------------------------------ the flags


def _given_flags(options: Options) -> dict[str, Any]:
    """The common flags given on the command line, with their values (the ones every learner takes left out)."""
    given = {
        "--delta": options.delta,
        "--backend": options.backend,
        "--time-limit": options.time_limit,
        "--on-uncertified": options.on_uncertified,
        "--public-size": options.public_size,
        "--public-seed": options.public_seed,
        "--teachers": options.teachers,
        "--allow-weak-guarantee": True if options.allow_weak_guarantee else None,
        "--margin": options.margin,
        "--radius": options.radius,
        "--norm-bound": options.norm_bound,
        "--accounting": options.accounting,
        "--rounds": options.rounds,
        "--jl-dim": options.jl_dim,
    }
    return {flag: value for flag, value in given.items() if value is not None}


def _check_flags_apply(entry: LearnerEntry, options: Options) -> None:
    """A flag the learner does not take is refused, not silently ignored: the error names the flag, why it does
    not apply, and the learners it applies to (all from the registry)."""
    for flag, value in _given_flags(options).items():
        if flag == "--delta" and not value:
            continue  # --delta 0 is every learner's pure epsilon-DP
        if entry.takes(flag) and not (flag in ORACLE_FLAGS and entry.oracle is None):
            continue
        reason_flag = SAME_REASON.get(flag, flag)
        why = entry.why_not.get(reason_flag)
        if why is None:
            why = "is pure epsilon-DP" if flag == "--delta" else f"takes no {FLAG_PARAMETERS[flag]}"
        shown = "" if value is True else f" {value}" if isinstance(value, str) else f" {value:g}"  # as typed
        takers = [
            e.name for e in learner_entries() if e.takes(flag) and not (flag in ORACLE_FLAGS and e.oracle is None)
        ]
        where = f"; {flag} applies to --algorithm {_and(takers)} only" if takers else ""
        fail(f"--algorithm {entry.name} {why}: {flag}{shown} does not apply{where}")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _check_options(entry: LearnerEntry, options: Options) -> Options:
    """The options' own errors, named by their flags, before any file is read (the learners would refuse the
    same values later, by their parameter names); returns the options with --public-size parsed and a deprecated
    convex backend name replaced."""
    from oraclepriv.robust import ON_UNCERTIFIED_MODES

    check_epsilon(options.epsilon, allow_inf=_takes_inf(entry))
    check_delta(options.delta)
    if options.delta == 0 and entry.delta == "gaussian":
        fail(
            f"--delta {options.delta:g}: --algorithm {entry.name} adds Gaussian noise, which is (epsilon, delta)-DP "
            f"only, so --delta must be > 0 (without --delta: {entry.default('delta'):g})"
        )
    check_time_limit(options.time_limit)
    check_backend_time_limit(options.backend, options.time_limit)
    if entry.oracle == "convex" and options.time_limit is not None:
        fail(
            f"--algorithm {entry.name}'s convex oracle solves its QP to a certified tolerance and takes no time "
            f"limit; --time-limit {options.time_limit:g} does not apply"
        )
    if options.on_uncertified is not None and options.on_uncertified not in ON_UNCERTIFIED_MODES:
        fail(f"--on-uncertified must be one of {list(ON_UNCERTIFIED_MODES)}; got {options.on_uncertified!r}")
    supported = entry.classes()
    if options.hypothesis_class not in supported:
        fail(
            f"--hypothesis-class {options.hypothesis_class!r} is not supported by --algorithm {entry.name}; "
            f"expected one of {list(supported)}"
        )
    if options.teachers is not None and options.teachers < 2:
        fail(f"--teachers must be an integer >= 2 (and at most the number of private records); got {options.teachers}")
    size = _public_size_option(options.public_size, options.public_seed, options.seed)
    margin_options = _margin_options(options)
    backend = options.backend
    if entry.oracle == "convex":
        _check_convex_backend(entry, backend, options.on_uncertified)
        backend = _convex_backend(backend)
    elif entry.oracle == "0-1" and backend is not None:
        _check_exact_backend(entry, backend, options.hypothesis_class, options.on_uncertified)
    return Options(**{**options.__dict__, **margin_options, "public_size": size, "backend": backend})


def _margin_options(options: Options) -> dict[str, Any]:
    """The margin learners' flags checked and parsed (--rounds and --jl-dim to "auto", "none" or an int)."""
    import math

    from oraclepriv.learners.margin_privacy import ACCOUNTINGS

    for flag, value in (
        ("--margin", options.margin),
        ("--radius", options.radius),
        ("--norm-bound", options.norm_bound),
    ):
        if value is not None and not (math.isfinite(value) and value > 0):
            fail(f"{flag} must be a finite number > 0; got {value:g}")
    if options.accounting is not None and options.accounting not in ACCOUNTINGS:
        fail(f"--accounting must be one of {list(ACCOUNTINGS)}; got {options.accounting!r}")
    parsed: dict[str, Any] = {}
    for flag, key, words in (("--rounds", "rounds", ("auto",)), ("--jl-dim", "jl_dim", ("auto", "none"))):
        value = getattr(options, key)
        if value is None or value in words:
            continue
        try:
            number = int(str(value))
        except ValueError:
            number = 0
        if number < 1:
            fail(f"{flag} must be {' or '.join(words)} or an integer >= 1; got {value!r}")
        parsed[key] = number
    return parsed


def _takes_inf(entry: LearnerEntry) -> bool:
    """Whether the learner's epsilon constraint takes inf (a mechanism's non-private debug mode, e.g. ppm's)."""
    from oraclepriv.validation import INFINITE_EPSILON

    constraints = getattr(entry.estimator_class(), "_parameter_constraints", {}).get("epsilon", ())
    return not isinstance(constraints, str) and INFINITE_EPSILON in constraints


def _public_size_option(public_size: int | str | None, public_seed: int | None, seed: int | None) -> int | str | None:
    """--public-size as the learners' public_size ("auto", None for all, or an int), checked with --public-seed."""
    if public_seed is not None:
        if public_seed < 0:
            fail(f"--public-seed must be >= 0; got {public_seed}")
        if public_seed == seed:
            fail(
                f"--public-seed {public_seed} equals --seed: the published subsample would be the noise's own first "
                "draws, from which the noise can be replayed; use another --public-seed or omit it"
            )
    text = "auto" if public_size is None else str(public_size).strip()
    if text in ("auto", "all"):
        return None if text == "all" else "auto"
    if not text.isdigit() or int(text) < 1:
        fail(f"--public-size must be auto, all or a positive integer; got {public_size!r}")
    return int(text)


def _check_exact_backend(entry: LearnerEntry, backend: str, hypothesis_class: str, on_uncertified: str | None) -> None:
    """--backend built now (a bad name, option or value names --backend and the spec), and refused when its bounds
    cover a restricted class only while --on-uncertified is raise: the learner would refuse it too, by its
    parameter names (backend=, on_uncertified=)."""
    oracle = backend_oracle(backend, hypothesis_class)
    mode = on_uncertified if on_uncertified is not None else entry.default("on_uncertified")
    restriction = oracle.restriction()
    if restriction is not None and mode == "raise":
        fail(
            f"{restricted_backend_problem(backend, restriction, hypothesis_class)}, so it certifies no answer and "
            f"--on-uncertified raise{' (the default)' if on_uncertified is None else ''} would abort --algorithm "
            f"{entry.name}: omit --backend (an exact backend is chosen per problem), or give --on-uncertified "
            "fallback to re-solve its answers exactly"
        )


def _check_convex_backend(entry: LearnerEntry, backend: str | None, on_uncertified: str | None) -> None:
    """--backend and --on-uncertified of a learner on the convex oracle, which has one backend and takes no
    options, named by their flags (the learner would say backend=, backend_options= and on_uncertified=)."""
    from oraclepriv.backends import CONVEX_BACKENDS, parse_backend_spec

    if on_uncertified == "fallback":
        fail(
            f"--on-uncertified fallback needs a second, exact backend for the same class; --algorithm {entry.name}'s "
            f"convex oracle has one backend ({', '.join(CONVEX_BACKENDS.names())}): use --on-uncertified raise or flag"
        )
    if backend is None:
        return
    try:
        name, options = parse_backend_spec(backend)
    except ValueError as exc:
        fail(f"--backend {backend!r}: {exc}")
    if name not in CONVEX_BACKENDS and name not in CONVEX_BACKENDS.aliases:
        aliases = ", ".join(f"{old!r} (deprecated alias of {new!r})" for old, new in CONVEX_BACKENDS.aliases.items())
        fail(
            f"--backend must be one of {CONVEX_BACKENDS.names()} for --algorithm {entry.name}'s convex oracle, or "
            f"omitted (also accepted: {aliases}); got {backend!r}"
        )
    if options:
        fail(f"--backend {backend!r}: --algorithm {entry.name}'s convex oracle takes no options; got {options}")


def _convex_backend(backend: str | None) -> str | None:
    """--backend for the convex oracle: a deprecated name ('scipy') is replaced by the backend it stands for, with
    a one-line warning naming the new value (the learner would warn with a traceback line)."""
    from oraclepriv.backends import CONVEX_BACKENDS

    if backend is None or backend not in CONVEX_BACKENDS.aliases:
        return backend
    new = CONVEX_BACKENDS.canonical(backend)
    typer.echo(
        f"warning: --backend {backend} is deprecated and will be removed in the next release; use --backend {new} "
        "(the same backend)",
        err=True,
    )
    return new


def _diagnostic_names(entry: LearnerEntry, requested: str | None) -> list[str] | None:
    """The diagnostics ``--diagnostics`` asks for (None: none), checked against what the learner records."""
    if requested is None:
        return None
    known = list(entry.estimator_class().diagnostic_names)
    if requested.strip() == "all":
        return known
    names = [name.strip() for name in requested.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        raise ValueError(
            f"--diagnostics {requested!r}: {entry.name} records no diagnostic named "
            f"{', '.join(map(repr, unknown)) or '(empty)'}; it records {known} (or use 'all')"
        )
    return names


# ------------------------------------------------------------------------------------------ the messages


def _uncertified_message(entry: LearnerEntry, options: Options) -> str:
    """Why the fit stopped when an oracle call on the private data was not certified and --on-uncertified is
    raise (or the exact fallback failed too), and what to do, in the command's flags. Only the step is said: the
    call's status, objective and bound, or what a solver raised, depend on the private data (non-private
    diagnostics), so they are not printed."""
    if options.on_uncertified == "fallback":
        return (
            f"--algorithm {entry.name}: an oracle call on the private data failed, and so did its re-solve by "
            "the exact fallback backend (no time limit), so no certified answer exists for it; with the exact "
            "default backends only exhausted resources (memory) do that. Free resources, or use fewer public points "
            "(--public-size)"
        )
    by = f"--backend {options.backend!r}" if options.backend is not None else "the default backend"
    within = f" within --time-limit {options.time_limit:g} s" if options.time_limit is not None else ""
    if not getattr(entry.estimator_class(), "needs_exact_oracle", True):
        remedy = (
            "--on-uncertified flag lets such a teacher abstain (the aggregation's privacy does not need exact "
            "teachers), or give a longer --time-limit"
        )
    else:
        remedy = (
            "the privacy proof needs an exact argmin: give a longer --time-limit, omit --backend (an exact backend "
            "is chosen per problem), or --on-uncertified fallback (an exact backend re-solves such calls)"
        )
    return (
        f"--algorithm {entry.name}: an oracle call on the private data was not certified by {by}{within}, "
        f"and --on-uncertified raise stops the fit; {remedy}"
    )


def _vacuous_message(entry: LearnerEntry, exc: Any) -> str:
    """A fit refused because its total delta is >= 1/n, and what lowers it, in the command's flags."""
    public = "" if exc.m is None else f" with {exc.m} public points"
    return (
        f"--algorithm {entry.name}: the guarantee would be vacuous: total delta {exc.delta + exc.numerical_delta:.3g}"
        f" (--delta {exc.delta:.3g} + numerical delta {exc.numerical_delta:.3g} from near-ties within the "
        f"certification tolerance{public}) is >= 1/n = {1.0 / exc.n:.3g} for the n={exc.n} private records. Use "
        "fewer public points (--public-size auto, or a smaller --public-size), --hypothesis-class threshold or stump "
        "without --backend (compared exactly: no numerical delta), or a smaller --epsilon; or --allow-weak-guarantee "
        "to release anyway with a guarantee marked VACUOUS"
    )


def _print_report(report: dict[str, Any], as_json: bool) -> None:
    """The release (and, when asked for, the diagnostics) as JSON or as text; structures inside the text (the
    hypothesis, a diagnostic's value) are JSON too."""
    from oraclepriv.io import to_json

    if as_json:
        typer.echo(to_json(report, sort_keys=True))
        return
    privacy = report["privacy"]
    typer.echo(f"{report['algorithm']}  released hypothesis {to_json(report['hypothesis'], sort_keys=True)}")
    typer.echo(f"  privacy: {privacy['guarantee']}")
    if privacy.get("vacuous"):
        typer.echo(
            "  caveat: NO meaningful privacy guarantee: the total delta is >= 1/n (--allow-weak-guarantee); such a "
            "delta allows publishing a private record verbatim"
        )
    if privacy.get("on_uncertified") == "flag" and str(privacy["guarantee"]).startswith("none"):
        typer.echo(
            f"  caveat: NO privacy guarantee (epsilon={privacy.get('epsilon')} is not a claim): --on-uncertified "
            "flag keeps uncertified oracle answers; use raise or fallback for a private release"
        )
    typer.echo(f"  neighbouring: {privacy['neighbouring']}")
    if "public_subsample" in privacy:
        typer.echo(
            f"  public points: {len(privacy['public_subsample'])} of the {privacy['public_points_given']} given "
            f"({privacy['public_size_rule']}); which ones is published (--json: public_subsample)"
        )
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
                shown = to_json(value, sort_keys=True) if isinstance(value, (dict, list, tuple)) else value
                typer.echo(f"    {name}: {shown}")
