"""``oraclepriv learn``: fit a private learner on CSV files and print its release (and, when asked,
its non-private diagnostics)."""

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from oraclepriv.cli.common import (
    backend_oracle,
    check_backend_time_limit,
    check_delta,
    check_epsilon,
    check_input_file,
    check_seed,
    check_threshold_features,
    check_time_limit,
    fail,
    restricted_backend_problem,
)


class Algorithm(str, Enum):
    rrspm = "rrspm"
    perturbation = "perturbation"
    regularization = "regularization"
    subsample = "subsample"
    public_cover_em = "public-cover-em"
    ppm = "ppm"


#: the data file's column of privacy bits for --algorithm ppm
PRIVACY_BITS_COLUMN = "public"
#: --teachers when it is not given
DEFAULT_TEACHERS = 16
#: the learners that make no oracle call, so that --backend, --time-limit and --on-uncertified do not apply
NO_ORACLE = {"public-cover-em": "makes no oracle call", "ppm": "makes no oracle call (exponential mechanism)"}
#: the learners whose release can carry a numerical delta, so that --allow-weak-guarantee applies
WEAK_GUARANTEE = (Algorithm.rrspm, Algorithm.perturbation)
#: the learners without a public_size parameter, so that --public-size and --public-seed do not apply
NO_PUBLIC_SIZE = {
    "subsample": "uses every public point of --public",
    "ppm": "reads its public examples from the data file's 'public' column",
}


def learn(
    ctx: typer.Context,
    private: Annotated[
        Path, typer.Argument(help="CSV: feature columns and label column y in {0,1} (ppm: plus a 0/1 column 'public').")
    ],
    public: Annotated[
        Path | None,
        typer.Option(
            "--public", help="Public CSV (the learners of Block et al.): the same feature columns, unlabelled."
        ),
    ] = None,
    algorithm: Annotated[
        Algorithm,
        typer.Option(
            "--algorithm",
            help="rrspm | perturbation | regularization (Block et al.: Alg 4, 2, 3); subsample (subsample-and-aggregate, "
            "private for any oracle); public-cover-em (exponential mechanism over the public labelings, "
            "Wang-Lei-Fienberg and Bassily-Mohri-Suresh; no oracle); ppm (Bassily-Moran-Nandi).",
        ),
    ] = ...,  # required: ... keeps the options in the order --help lists them
    epsilon: Annotated[float, typer.Option("--epsilon", help="Privacy parameter epsilon > 0.")] = ...,
    delta: Annotated[
        float | None, typer.Option("--delta", help="delta in [0, 1/n); for rrspm a delta > 0 selects Gaussian weights.")
    ] = None,
    hypothesis_class: Annotated[
        str, typer.Option("--hypothesis-class", help="threshold | stump | halfspace (regularization: linear).")
    ] = "halfspace",
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help="Oracle backend, NAME[:key=value,...] as for `oraclepriv erm` (e.g. scip-bc:workers=2; default: chosen "
            "per problem; regularization: highs-qp+kkt, its convex oracle's one backend, for which 'scipy' is a "
            "deprecated alias).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Random seed (default: OS entropy). Anyone who knows it can replay the noise and undo the release's "
            "privacy: omit it for a release you publish.",
        ),
    ] = None,
    public_size: Annotated[
        str | None,
        typer.Option(
            "--public-size",
            help="How many public points of --public to use: auto (the default: the theory's number for n, d and "
            "epsilon, docs/theory/block-et-al.md 'Choosing m', kept below a vacuous delta), all, or an integer M. A "
            "subsample is drawn uniformly with public randomness (--public-seed) and published in the release. "
            "Not for subsample and ppm.",
            show_default=False,
        ),
    ] = None,
    public_seed: Annotated[
        int | None,
        typer.Option(
            "--public-seed",
            help="Seed of the public subsample (default: one computed from the public points, so that --seed alone "
            "reproduces a run); the subsample is published, so the seed must differ from --seed.",
        ),
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Per-call oracle time limit (MIP backends).")
    ] = None,
    on_uncertified: Annotated[
        str | None,
        typer.Option(
            "--on-uncertified",
            help="raise | fallback | flag: what an uncertified private-data oracle call does (see oraclepriv.robust); "
            "default: raise (subsample: flag, its privacy does not depend on the oracle).",
        ),
    ] = None,
    teachers: Annotated[
        int | None,
        typer.Option("--teachers", help="subsample only: number of disjoint blocks / teachers k (default 16)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    diagnostics: Annotated[
        str | None,
        typer.Option(
            "--diagnostics",
            help="Also print NON-PRIVATE diagnostics (oracle calls with objectives and certificates, and the named "
            "values): 'all' or a comma-separated list of names. They depend on the private data beyond the "
            "release; no privacy proof covers them.",
        ),
    ] = None,
    allow_weak_guarantee: Annotated[
        bool,
        typer.Option(
            "--allow-weak-guarantee",
            help="rrspm and perturbation: release even when the total delta (design + the numerical delta of "
            "near-ties, which grows with the public points and e^epsilon) is >= 1/n, which certifies nothing; the "
            "release then says its guarantee is VACUOUS. Without it such a fit is refused before its oracle calls.",
        ),
    ] = False,
    budget: Annotated[
        Path | None,
        typer.Option(
            "--budget",
            help="A JSON privacy ledger (oraclepriv.PrivacyAccountant) that this run charges with its release's "
            "(epsilon, total delta), composed with the runs before it; a run past the ledger's budget is refused "
            "before anything is printed, and the ledger is left unchanged. An absent FILE is created with "
            "--budget-epsilon, or refused without it. FILE.lock beside it serialises concurrent runs.",
        ),
    ] = None,
    budget_epsilon: Annotated[
        float | None,
        typer.Option("--budget-epsilon", help="Creating --budget FILE: its epsilon budget (> 0; inf: no limit)."),
    ] = None,
    budget_delta: Annotated[
        float | None,
        typer.Option("--budget-delta", help="Creating --budget FILE: its delta budget in [0, 1) (default 0)."),
    ] = None,
    budget_slack: Annotated[
        float | None,
        typer.Option(
            "--budget-slack",
            help="Creating --budget FILE: the slack delta' in [0, 1) of its tighter composition theorems, valid when "
            "the runs' epsilons and deltas are fixed in advance (default 0: basic composition, valid however they are "
            "chosen; docs/theory/composition.md).",
        ),
    ] = None,
) -> None:
    """Fit a private learner and print its release: the hypothesis and its privacy record.

    The release is exactly what the privacy guarantee covers. The learners of Block, Bun, Desai, Shetty,
    Wu take private labelled data plus unlabelled public points (--public). The PPM learner (Bassily,
    Moran, Nandi) takes one file in which the 0/1 column 'public' holds each example's privacy bit.
    """
    from oraclepriv.learners import UncertifiedOracleError
    from oraclepriv.near_ties import VacuousGuaranteeError
    from oraclepriv.release import reading_diagnostics

    check_input_file(private, "data file")
    check_input_file(public, "--public")
    if seed is not None:
        check_seed(seed)
    if teachers is not None and algorithm is not Algorithm.subsample:
        fail(f"--teachers {teachers} applies to --algorithm subsample only; got --algorithm {algorithm.value}")
    size = _public_size_option(algorithm, public_size, public_seed, seed)
    if allow_weak_guarantee and algorithm not in WEAK_GUARANTEE:
        fail(
            f"--allow-weak-guarantee applies to --algorithm {' and '.join(a.value for a in WEAK_GUARANTEE)} only: "
            f"--algorithm {algorithm.value} has no numerical delta, so its total delta is its --delta (< 1/n)"
        )
    _check_options(algorithm, epsilon, delta, hypothesis_class, backend, time_limit, on_uncertified, teachers)
    if algorithm is Algorithm.regularization:
        backend = _convex_backend(backend)
    from oraclepriv.cli.budget import open_budget

    ledger = open_budget(ctx, budget, budget_epsilon, budget_delta, budget_slack, epsilon, delta)
    try:
        names = _diagnostic_names(algorithm, diagnostics)
        if algorithm is Algorithm.ppm:
            learner = _fit_ppm(private, public, epsilon, delta, hypothesis_class, seed)
        else:
            learner = _fit_with_public_points(
                private,
                public,
                algorithm,
                epsilon,
                delta,
                hypothesis_class,
                backend,
                seed,
                time_limit,
                on_uncertified,
                teachers,
                size,
                public_seed,
                allow_weak_guarantee,
            )
    except UncertifiedOracleError:  # named by the flags (the learner names its parameters)
        fail(_uncertified_message(algorithm, backend, time_limit, on_uncertified))
    except VacuousGuaranteeError as exc:  # named by the flags (the learner names its parameters)
        fail(_vacuous_message(algorithm, exc))
    except (ValueError, ImportError, RuntimeError) as exc:
        fail(str(exc))
    if ledger is not None:
        ledger.commit()  # the charge is saved before the release is printed
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


def _public_size_option(
    algorithm: Algorithm, public_size: str | None, public_seed: int | None, seed: int | None
) -> int | str | None:
    """--public-size as the learners' public_size ("auto", None for all, or an int), checked with --public-seed
    before any file is read; None for the learners that take no public_size."""
    if algorithm.value in NO_PUBLIC_SIZE:
        for flag, value in (("--public-size", public_size), ("--public-seed", public_seed)):
            if value is not None:
                fail(f"--algorithm {algorithm.value} {NO_PUBLIC_SIZE[algorithm.value]}; {flag} {value} does not apply")
        return None
    if public_seed is not None:
        if public_seed < 0:
            fail(f"--public-seed must be >= 0; got {public_seed}")
        if public_seed == seed:
            fail(
                f"--public-seed {public_seed} equals --seed: the published subsample would be the noise's own first "
                "draws, from which the noise can be replayed; use another --public-seed or omit it"
            )
    text = "auto" if public_size is None else public_size.strip()
    if text in ("auto", "all"):
        return None if text == "all" else "auto"
    if not text.isdigit() or int(text) < 1:
        fail(f"--public-size must be auto, all or a positive integer; got {public_size!r}")
    return int(text)


def _check_options(
    algorithm: Algorithm,
    epsilon: float,
    delta: float | None,
    hypothesis_class: str,
    backend: str | None,
    time_limit: float | None,
    on_uncertified: str | None,
    teachers: int | None,
) -> None:
    """The options' own errors, named by their flags, before any file is read (the learners would refuse the
    same values later, by their parameter names)."""
    from oraclepriv.robust import ON_UNCERTIFIED_MODES

    check_epsilon(epsilon, allow_inf="ppm's non-private debug mode" if algorithm is Algorithm.ppm else None)
    check_delta(delta)
    if algorithm.value in NO_ORACLE:
        # no oracle: the options that configure one are refused rather than silently ignored
        for flag, value in (("--backend", backend), ("--time-limit", time_limit), ("--on-uncertified", on_uncertified)):
            if value is not None:
                fail(f"--algorithm {algorithm.value} {NO_ORACLE[algorithm.value]}; {flag} {value!r} does not apply")
    check_time_limit(time_limit)
    check_backend_time_limit(backend, time_limit)
    if algorithm is Algorithm.regularization and time_limit is not None:
        fail(
            "--algorithm regularization's convex oracle solves its QP to a certified tolerance and takes no time "
            f"limit; --time-limit {time_limit:g} does not apply"
        )
    if on_uncertified is not None and on_uncertified not in ON_UNCERTIFIED_MODES:
        fail(f"--on-uncertified must be one of {list(ON_UNCERTIFIED_MODES)}; got {on_uncertified!r}")
    supported = getattr(_learner_class(algorithm), "supported_classes", ("halfspace",))
    if hypothesis_class not in supported:
        fail(
            f"--hypothesis-class {hypothesis_class!r} is not supported by --algorithm {algorithm.value}; "
            f"expected one of {list(supported)}"
        )
    if teachers is not None and teachers < 2:
        fail(f"--teachers must be an integer >= 2 (and at most the number of private records); got {teachers}")
    if delta == 0 and algorithm in (Algorithm.perturbation, Algorithm.regularization):
        default = _learner_default(algorithm, "delta")
        fail(
            f"--delta {delta:g}: --algorithm {algorithm.value} adds Gaussian noise, which is (epsilon, delta)-DP only, "
            f"so --delta must be > 0 (without --delta: {default:g})"
        )
    if algorithm is Algorithm.regularization:
        _check_convex_backend(backend, on_uncertified)
    elif algorithm.value not in NO_ORACLE and backend is not None:
        _check_exact_backend(algorithm, backend, hypothesis_class, on_uncertified)


def _uncertified_message(
    algorithm: Algorithm, backend: str | None, time_limit: float | None, on_uncertified: str | None = None
) -> str:
    """Why the fit stopped when an oracle call on the private data was not certified and --on-uncertified is
    raise (or the exact fallback failed too), and what to do, in the command's flags. Only the step is said: the
    call's status, objective and bound, or what a solver raised, depend on the private data (non-private
    diagnostics), so they are not printed."""
    if on_uncertified == "fallback":
        return (
            f"--algorithm {algorithm.value}: an oracle call on the private data failed, and so did its re-solve by "
            "the exact fallback backend (no time limit), so no certified answer exists for it; with the exact "
            "default backends only exhausted resources (memory) do that. Free resources, or use fewer public points "
            "(--public-size)"
        )
    by = f"--backend {backend!r}" if backend is not None else "the default backend"
    within = f" within --time-limit {time_limit:g} s" if time_limit is not None else ""
    if algorithm is Algorithm.subsample:
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
        f"--algorithm {algorithm.value}: an oracle call on the private data was not certified by {by}{within}, "
        f"and --on-uncertified raise stops the fit; {remedy}"
    )


def _vacuous_message(algorithm: Algorithm, exc: Any) -> str:
    """A fit refused because its total delta is >= 1/n, and what lowers it, in the command's flags."""
    public = "" if exc.m is None else f" with {exc.m} public points"
    return (
        f"--algorithm {algorithm.value}: the guarantee would be vacuous: total delta {exc.delta + exc.numerical_delta:.3g}"
        f" (--delta {exc.delta:.3g} + numerical delta {exc.numerical_delta:.3g} from near-ties within the "
        f"certification tolerance{public}) is >= 1/n = {1.0 / exc.n:.3g} for the n={exc.n} private records. Use "
        "fewer public points (--public-size auto, or a smaller --public-size), --hypothesis-class threshold or stump "
        "without --backend (compared exactly: no numerical delta), or a smaller --epsilon; or --allow-weak-guarantee "
        "to release anyway with a guarantee marked VACUOUS"
    )


def _learner_default(algorithm: Algorithm, parameter: str) -> Any:
    """The default of one of the learner's parameters (what the command passes when its option is not given)."""
    import inspect

    return inspect.signature(_learner_class(algorithm)).parameters[parameter].default


def _check_exact_backend(algorithm: Algorithm, backend: str, hypothesis_class: str, on_uncertified: str | None) -> None:
    """--backend built now (a bad name, option or value names --backend and the spec), and refused when its bounds
    cover a restricted class only while --on-uncertified is raise: the learner would refuse it too, by its
    parameter names (backend=, on_uncertified=)."""
    oracle = backend_oracle(backend, hypothesis_class)
    mode = on_uncertified if on_uncertified is not None else _learner_default(algorithm, "on_uncertified")
    restriction = oracle.restriction()
    if restriction is not None and mode == "raise":
        fail(
            f"{restricted_backend_problem(backend, restriction, hypothesis_class)}, so it certifies no answer and "
            f"--on-uncertified raise{' (the default)' if on_uncertified is None else ''} would abort --algorithm "
            f"{algorithm.value}: omit --backend (an exact backend is chosen per problem), or give --on-uncertified "
            "fallback to re-solve its answers exactly"
        )


def _check_convex_backend(backend: str | None, on_uncertified: str | None) -> None:
    """--backend and --on-uncertified of --algorithm regularization, whose convex oracle has one backend and takes
    no options, named by their flags (the learner would say backend=, backend_options= and on_uncertified=)."""
    from oraclepriv.backends import parse_backend_spec
    from oraclepriv.convex_oracle import CONVEX_BACKEND_ALIASES, CONVEX_BACKENDS

    if on_uncertified == "fallback":
        fail(
            "--on-uncertified fallback needs a second, exact backend for the same class; --algorithm regularization's "
            f"convex oracle has one backend ({', '.join(sorted(CONVEX_BACKENDS))}): use --on-uncertified raise or flag"
        )
    if backend is None:
        return
    try:
        name, options = parse_backend_spec(backend)
    except ValueError as exc:
        fail(f"--backend {backend!r}: {exc}")
    if name not in CONVEX_BACKENDS and name not in CONVEX_BACKEND_ALIASES:
        aliases = ", ".join(f"{old!r} (deprecated alias of {new!r})" for old, new in CONVEX_BACKEND_ALIASES.items())
        fail(
            f"--backend must be one of {sorted(CONVEX_BACKENDS)} for --algorithm regularization's convex oracle, or "
            f"omitted (also accepted: {aliases}); got {backend!r}"
        )
    if options:
        fail(f"--backend {backend!r}: --algorithm regularization's convex oracle takes no options; got {options}")


def _convex_backend(backend: str | None) -> str | None:
    """--backend for the regularization learner's convex oracle: a deprecated name ('scipy') is replaced by the
    backend it stands for, with a one-line warning naming the new value (the learner would warn with a traceback
    line)."""
    from oraclepriv.convex_oracle import CONVEX_BACKEND_ALIASES

    if backend not in CONVEX_BACKEND_ALIASES:
        return backend
    new = CONVEX_BACKEND_ALIASES[backend]
    typer.echo(
        f"warning: --backend {backend} is deprecated and will be removed in the next release; use --backend {new} "
        "(the same backend)",
        err=True,
    )
    return new


def _learner_class(algorithm: Algorithm) -> type:
    from oraclepriv.learners import (
        RRSPM,
        Perturbation,
        PPMHalfspaces,
        PublicCoverEM,
        Regularization,
        SubsampleAggregate,
    )

    return {
        Algorithm.rrspm: RRSPM,
        Algorithm.perturbation: Perturbation,
        Algorithm.regularization: Regularization,
        Algorithm.subsample: SubsampleAggregate,
        Algorithm.public_cover_em: PublicCoverEM,
        Algorithm.ppm: PPMHalfspaces,
    }[algorithm]


def _make_learner(
    algorithm: Algorithm,
    epsilon: float,
    delta: float | None,
    hypothesis_class: str,
    backend: str | None,
    seed: int | None,
    time_limit: float | None,
    on_uncertified: str | None = None,
    teachers: int | None = None,
    public_size: int | str | None = None,
    public_seed: int | None = None,
    allow_weak_guarantee: bool = False,
):
    cls = _learner_class(algorithm)
    public = (
        {} if algorithm.value in NO_PUBLIC_SIZE else {"public_size": public_size, "public_random_state": public_seed}
    )
    if algorithm is Algorithm.public_cover_em:
        if delta:
            raise ValueError(
                f"--algorithm public-cover-em is pure epsilon-DP (exponential mechanism); got --delta {delta}"
            )
        return cls(epsilon=epsilon, hypothesis_class=hypothesis_class, random_state=seed, **public)
    from oraclepriv.backends import parse_backend_spec

    # NAME[:key=value,...], as `oraclepriv erm` takes it: the options reach the oracle as backend_options
    name, options = parse_backend_spec(backend) if backend is not None else (None, {})
    common: dict[str, Any] = {
        "epsilon": epsilon,
        "backend": name,
        "random_state": seed,
        "time_limit": time_limit,
        "hypothesis_class": hypothesis_class,
    }
    if options:
        common["backend_options"] = options
    common.update(public)
    if allow_weak_guarantee:  # refused up front for the learners without a numerical delta
        common["allow_weak_guarantee"] = True
    if on_uncertified is not None:
        common["on_uncertified"] = on_uncertified
    if algorithm is Algorithm.subsample:
        # no --delta: Laplace noise, pure eps-DP; a delta > 0 selects the Gaussian mechanism
        teachers = DEFAULT_TEACHERS if teachers is None else teachers
        if delta:
            return cls(n_teachers=teachers, noise="gaussian", delta=delta, **common)
        return cls(n_teachers=teachers, noise="laplace", delta=0.0, **common)
    if algorithm is Algorithm.rrspm:
        return cls(noise="gaussian", delta=delta, **common) if delta else cls(**common)
    return cls(**common) if delta is None else cls(delta=delta, **common)


def _diagnostic_names(algorithm: Algorithm, requested: str | None) -> list[str] | None:
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


def _fit_ppm(
    private: Path, public: Path | None, epsilon: float, delta: float | None, hypothesis_class: str, seed: int | None
):
    import numpy as np

    from oraclepriv.io import read_csv_problem
    from oraclepriv.learners import PPMHalfspaces
    from oraclepriv.learners.ppm import ClassTooLargeError
    from oraclepriv.ppm.scoring import MembershipTooLargeError

    if public is not None:
        raise ValueError(
            "--algorithm ppm reads the privacy bits from the data file's 'public' column; do not pass --public"
        )
    if delta:
        raise ValueError(f"--algorithm ppm is pure epsilon-DP (exponential mechanism); got --delta {delta}")
    if hypothesis_class != "halfspace":
        raise ValueError(f"--algorithm ppm learns halfspaces; got --hypothesis-class {hypothesis_class}")
    data = read_csv_problem(private, mask_column=PRIVACY_BITS_COLUMN)
    if data.weights is not None:
        raise ValueError(f"data file {str(private)!r} has a 'weight' column; private learners take unweighted data")
    labelled = np.flatnonzero(data.mask & (data.y != 0))
    if labelled.size:  # the label-determined model (private_label=1): every public example has label 0
        raise ValueError(
            f"data file {str(private)!r}: row {int(labelled[0]) + 1} is public ({PRIVACY_BITS_COLUMN}=1) but has label "
            f"y=1; --algorithm ppm learns in the label-determined model, where public examples have label 0 and "
            f"private ones label 1: mark the row private ({PRIVACY_BITS_COLUMN}=0) or correct its label"
        )
    try:
        return PPMHalfspaces(epsilon=epsilon, random_state=seed).fit(data.X, data.y, data.mask)
    except (ClassTooLargeError, MembershipTooLargeError) as exc:  # the library names its Python parameters
        raise ValueError(_ppm_too_large_message(exc, private)) from None


def _ppm_too_large_message(exc: Exception, private: Path) -> str:
    """A too-large PPM problem in the command line's terms: the command line has no cap on the public points
    (PPMHalfspaces(max_public=...)) nor on |G| (max_hypotheses=...), so its levers are the data file's rows
    and columns; the Python parameters are named as such."""
    from oraclepriv.learners.ppm import ClassTooLargeError, largest_public_sample
    from oraclepriv.ppm.scoring import MembershipTooLargeError

    shown, bits = repr(str(private)), f"{PRIVACY_BITS_COLUMN}=1"
    python_api = (
        "No option of `oraclepriv learn` caps this (in the Python API, PPMHalfspaces(max_public=...) builds G "
        "from a random subset of the public points"
    )
    if isinstance(exc, ClassTooLargeError):
        fits = largest_public_sample(exc.d, exc.limit)
        return (
            f"--algorithm ppm would sample from |G| = {exc.size:.3g} hypotheses, more than the {exc.limit:.3g} it "
            f"enumerates: data file {shown} has {exc.n_public} distinct public points ({bits}) in d={exc.d} feature "
            f"columns, and |G| grows like (distinct public points)^(d^2). Keep at most {fits} distinct public rows "
            f"(any {fits} fit; pick them without looking at the private rows), or use fewer feature columns. "
            + python_api
            + ", and max_hypotheses=... raises the limit)"
        )
    if not isinstance(exc, MembershipTooLargeError):
        raise TypeError(f"not a too-large PPM problem: {exc!r}")
    return (
        f"--algorithm ppm's scoring needs a {exc.nbytes / 1e9:.1f} GB membership matrix, more than the "
        f"{exc.limit / 1e9:.1f} GB it allocates: its {exc.n_base} base hyperplanes (built from the distinct public "
        f"points, {bits}) times the {exc.n} rows of data file {shown}, public and private. Use fewer distinct "
        "public rows or fewer rows. " + python_api + ")"
    )


def _fit_with_public_points(
    private: Path,
    public: Path | None,
    algorithm: Algorithm,
    epsilon: float,
    delta: float | None,
    hypothesis_class: str,
    backend: str | None,
    seed: int | None,
    time_limit: float | None,
    on_uncertified: str | None = None,
    teachers: int | None = None,
    public_size: int | str | None = None,
    public_seed: int | None = None,
    allow_weak_guarantee: bool = False,
):
    from oraclepriv.cover import CoverTooLargeError, largest_halfspace_cover
    from oraclepriv.io import read_csv_problem
    from oraclepriv.public_data import PublicData

    if public is None:
        raise ValueError(f"--public is required for --algorithm {algorithm.value}")
    data = read_csv_problem(private)
    check_threshold_features(hypothesis_class, private, data.feature_names)
    pub = read_csv_problem(public, require_labels=False)
    ignored = [name for name, values in (("y", pub.y), ("weight", pub.weights)) if values is not None]
    if ignored:
        typer.echo(
            f"warning: --public {str(public)!r} has the column(s) {ignored}: the learners take public points "
            "unlabelled and unweighted, so they are ignored",
            err=True,
        )
    if pub.feature_names != data.feature_names:
        raise ValueError(
            f"public data file {str(public)!r} has feature columns {list(pub.feature_names)} but the private "
            f"data have {list(data.feature_names)}"
        )
    if data.weights is not None:
        raise ValueError(
            f"private data file {str(private)!r} has a 'weight' column; private learners take unweighted data"
        )
    n = len(data.y)
    if delta and delta >= 1.0 / n:
        raise ValueError(
            f"--delta {delta:g} is >= 1/n = {1.0 / n:.3g} for the n={n} private records of {str(private)!r}; such a "
            "delta allows publishing a private record verbatim: use --delta < 1/n (typically << 1/n)"
        )
    if algorithm is Algorithm.subsample and n < (DEFAULT_TEACHERS if teachers is None else teachers):
        given = (
            f"--teachers {teachers} is"
            if teachers is not None
            else f"--teachers was not given and its default, {DEFAULT_TEACHERS}, is"
        )
        raise ValueError(
            f"{given} more than the n={n} private records of {str(private)!r}: --algorithm subsample splits them "
            f"into --teachers disjoint blocks, so it needs 2 <= --teachers <= {n}"
        )
    if isinstance(public_size, int) and public_size > len(pub.X):
        raise ValueError(
            f"--public-size {public_size} is more than the {len(pub.X)} rows of --public {str(public)!r}; use at most "
            f"{len(pub.X)}, auto or all"
        )
    if algorithm is Algorithm.regularization:  # named by the file and its 1-based data rows, not X_private
        _check_l1_ball(data.X, f"data file {str(private)!r}", data.feature_names, private=True)
        _check_l1_ball(pub.X, f"--public {str(public)!r}", pub.feature_names)
    learner = _make_learner(
        algorithm,
        epsilon,
        delta,
        hypothesis_class,
        backend,
        seed,
        time_limit,
        on_uncertified,
        teachers,
        public_size,
        public_seed,
        allow_weak_guarantee,
    )
    try:
        return learner.fit(data.X, data.y, X_public=PublicData(pub.X))
    except CoverTooLargeError as exc:  # the library names its Python parameters (max_public, max_candidates)
        fits = largest_halfspace_cover(exc.d, exc.limit)
        raise ValueError(
            f"--algorithm {algorithm.value}: the halfspace cover of the {exc.m} public points of --public "
            f"{str(public)!r} in d={exc.d} feature columns scores {exc.candidates:,} candidates (C(m, d) 2^(d+1)), "
            f"more than the {exc.limit:,} it enumerates. Give --public-size {fits} or less (or --public-size auto, "
            f"which stays within the limit), keep at most {fits} rows in the public file (pick them without looking "
            "at the private data), or use fewer feature columns (in the Python API, max_candidates=... raises the "
            "limit)"
        ) from None


def _check_l1_ball(X: Any, shown: str, feature_names: tuple[str, ...], private: bool = False) -> None:
    """Every row of a file inside the l1 unit ball (the bounded linear class of --algorithm regularization), or a
    ValueError naming the file (``shown``) and the first row outside, counted from 1 after the header; the norm
    is shown for public rows only (an error message never echoes a private value)."""
    from oraclepriv.learners.regularization import first_outside_l1_ball

    outside = first_outside_l1_ball(X)
    if outside is not None:
        row, norm = outside
        value = "" if private else f" {norm!r}"
        raise ValueError(
            f"{shown}: row {row + 1} has l1 norm{value} > 1 (|{'| + |'.join(feature_names)}|); --algorithm "
            "regularization's bounded linear class needs every row's l1 norm <= 1 (rescale the features)"
        )


def _print_report(report: dict, as_json: bool) -> None:
    """The release (and, when asked for, the diagnostics) as JSON or as text."""
    from oraclepriv.io import to_json

    if as_json:
        typer.echo(to_json(report, sort_keys=True))
        return
    privacy = report["privacy"]
    typer.echo(f"{report['algorithm']}  released hypothesis {report['hypothesis']}")
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
                typer.echo(f"    {name}: {value}")
