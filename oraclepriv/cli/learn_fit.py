"""The estimator of one ``oraclepriv learn`` run and its fit on the command's CSV files: the common flags mapped to
the parameters of the learner the registry names (:mod:`oraclepriv.learners.registry`), the data read and
checked by the flags' and the files' names, and the fit, whose library errors are said in the command's terms."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from oraclepriv.cli.common import check_threshold_features
from oraclepriv.learners.registry import LearnerEntry

if TYPE_CHECKING:
    from oraclepriv.io import WeightedData

__all__ = ["PRIVACY_BITS_COLUMN", "Options", "fit_with_privacy_bits", "fit_with_public_points", "make_learner"]

#: the data file's column of privacy bits for a learner whose ``data`` is "privacy-bits"
PRIVACY_BITS_COLUMN = "public"


@dataclass(frozen=True)
class Options:
    """The common flags of one ``learn`` run, as given (None: not given)."""

    epsilon: float
    delta: float | None
    hypothesis_class: str
    backend: str | None
    seed: int | None
    time_limit: float | None
    on_uncertified: str | None
    teachers: int | None
    public_size: int | str | None
    public_seed: int | None
    allow_weak_guarantee: bool
    margin: float | None = None
    radius: float | None = None
    norm_bound: float | None = None
    accounting: str | None = None
    rounds: int | str | None = None
    jl_dim: int | str | None = None


def make_learner(entry: LearnerEntry, options: Options) -> Any:
    """The estimator of ``entry`` with the command's flags as its parameters (``FLAG_PARAMETERS``; a flag not
    given leaves the estimator's default, except ``entry.defaults``), ``--delta`` as ``entry.delta`` says."""
    from oraclepriv.backends import parse_backend_spec

    takes = entry.parameters()
    params: dict[str, Any] = {"epsilon": options.epsilon}
    given = {
        "random_state": options.seed,
        "time_limit": options.time_limit,
        "on_uncertified": options.on_uncertified,
        "public_random_state": options.public_seed,
        "n_teachers": options.teachers,
        "margin": options.margin,
        "radius": options.radius,
        "norm_bound": options.norm_bound,
        "accounting": options.accounting,
        "rounds": options.rounds,
    }
    params.update({name: value for name, value in given.items() if value is not None and name in takes})
    if options.jl_dim is not None and "jl_dim" in takes:  # "none" (no projection) is the parameter's None
        params["jl_dim"] = None if options.jl_dim == "none" else options.jl_dim
    if "hypothesis_class" in takes:
        params["hypothesis_class"] = options.hypothesis_class
    if "public_size" in takes:
        params["public_size"] = options.public_size
    if options.allow_weak_guarantee:  # refused up front for the learners without the parameter
        params["allow_weak_guarantee"] = True
    if options.backend is not None:  # NAME[:key=value,...], as `oraclepriv erm` takes it
        name, backend_options = parse_backend_spec(options.backend)
        params["backend"] = name
        if backend_options:
            params["backend_options"] = backend_options
    if entry.delta == "selects-noise":
        params.update(
            {"noise": "gaussian", "delta": options.delta} if options.delta else {"noise": "laplace", "delta": 0.0}
        )
    elif entry.delta != "pure" and options.delta is not None:
        params["delta"] = options.delta
    for name, value in entry.defaults.items():
        params.setdefault(name, value)
    return entry.estimator_class()(**params)


def fit_with_privacy_bits(entry: LearnerEntry, private: Path, public: Path | None, options: Options) -> Any:
    """A learner that reads each example's privacy bit from the data file (``fit(X, y, public_mask)``)."""
    import numpy as np

    from oraclepriv.io import read_csv_problem
    from oraclepriv.learners.ppm import ClassTooLargeError
    from oraclepriv.ppm.scoring import MembershipTooLargeError

    if public is not None:
        raise ValueError(
            f"--algorithm {entry.name} reads the privacy bits from the data file's {PRIVACY_BITS_COLUMN!r} column; "
            "do not pass --public"
        )
    data = read_csv_problem(private, mask_column=PRIVACY_BITS_COLUMN)
    _refuse_weights(data, private)
    assert data.mask is not None  # asked for: read_csv_problem refuses a file without the column
    labelled = np.flatnonzero(data.mask & (data.y != 0))
    if labelled.size and "label_determined" in entry.parameters() and entry.default("label_determined"):
        # the label-determined model (private_label=1): every public example has label 0
        raise ValueError(
            f"data file {str(private)!r}: row {int(labelled[0]) + 1} is public ({PRIVACY_BITS_COLUMN}=1) but has label "
            f"y=1; --algorithm {entry.name} learns in the label-determined model, where public examples have label 0 "
            f"and private ones label 1: mark the row private ({PRIVACY_BITS_COLUMN}=0) or correct its label"
        )
    try:
        return make_learner(entry, options).fit(data.X, data.y, data.mask)
    except (ClassTooLargeError, MembershipTooLargeError) as exc:  # the library names its Python parameters
        raise ValueError(_ppm_too_large_message(entry, exc, private)) from None


def _ppm_too_large_message(entry: LearnerEntry, exc: Exception, private: Path) -> str:
    """A too-large PPM problem in the command line's terms: the command line has no cap on the public points
    (PPMHalfspaces(max_public=...)) nor on |G| (max_hypotheses=...), so its levers are the data file's rows
    and columns; the Python parameters are named as such."""
    from oraclepriv.learners.ppm import ClassTooLargeError, largest_public_sample
    from oraclepriv.ppm.scoring import MembershipTooLargeError

    shown, bits = repr(str(private)), f"{PRIVACY_BITS_COLUMN}=1"
    python_api = (
        f"No option of `oraclepriv learn` caps this (in the Python API, {entry.estimator_class().__name__}"
        "(max_public=...) builds G from a random subset of the public points"
    )
    if isinstance(exc, ClassTooLargeError):
        fits = largest_public_sample(exc.d, exc.limit)
        return (
            f"--algorithm {entry.name} would sample from |G| = {exc.size:.3g} hypotheses, more than the "
            f"{exc.limit:.3g} it enumerates: data file {shown} has {exc.n_public} distinct public points ({bits}) in "
            f"d={exc.d} feature columns, and |G| grows like (distinct public points)^(d^2). Keep at most {fits} "
            f"distinct public rows (any {fits} fit; pick them without looking at the private rows), or use fewer "
            "feature columns. " + python_api + ", and max_hypotheses=... raises the limit)"
        )
    if not isinstance(exc, MembershipTooLargeError):
        raise TypeError(f"not a too-large PPM problem: {exc!r}")
    return (
        f"--algorithm {entry.name}'s scoring needs a {exc.nbytes / 1e9:.1f} GB membership matrix, more than the "
        f"{exc.limit / 1e9:.1f} GB it allocates: its {exc.n_base} base hyperplanes (built from the distinct public "
        f"points, {bits}) times the {exc.n} rows of data file {shown}, public and private. Use fewer distinct "
        "public rows or fewer rows. " + python_api + ")"
    )


def _refuse_weights(data: WeightedData, path: Path) -> None:
    if data.weights is not None:
        raise ValueError(f"data file {str(path)!r} has a 'weight' column; private learners take unweighted data")


def fit_private_only(entry: LearnerEntry, private: Path, public: Path | None, options: Options) -> Any:
    """A learner on private labelled records alone (``fit(X, y)``): it takes no public data, so ``--public`` is
    refused rather than ignored."""
    from oraclepriv.io import read_csv_problem
    from oraclepriv.validation import check_delta_for_n

    if public is not None:
        raise ValueError(f"--algorithm {entry.name} uses no public data; drop --public {str(public)!r}")
    data = read_csv_problem(private)
    _refuse_weights(data, private)
    if options.delta:
        try:
            check_delta_for_n(options.delta, len(data.y), "--delta")
        except ValueError as exc:
            raise ValueError(f"data file {str(private)!r}: {exc}") from None
    if "radius" in entry.parameters():
        _check_in_ball(data.X, entry, options, private)
    return make_learner(entry, options).fit(data.X, data.y)


def _check_in_ball(X: Any, entry: LearnerEntry, options: Options, private: Path) -> None:
    """Every private row inside the declared ball of radius --radius, or a ValueError naming the file, the first
    row outside (counted from 1 after the header) and how many are; never a private value (an error message is
    output too)."""
    import numpy as np

    radius = options.radius if options.radius is not None else float(entry.default("radius"))
    outside = np.flatnonzero(np.linalg.norm(X, axis=1) > radius)
    if outside.size:
        given = f"--radius {radius:g}" if options.radius is not None else f"the default radius {radius:g} (--radius)"
        raise ValueError(
            f"data file {str(private)!r}: row {int(outside[0]) + 1} lies outside the ball of {given} "
            f"({outside.size} of its {len(X)} rows do): --algorithm {entry.name} learns on records in that ball. "
            "Give a --radius that bounds every possible record, chosen without looking at the data, or map the "
            "features into the ball by bounds fixed in advance"
        )


def fit_with_public_points(entry: LearnerEntry, private: Path, public: Path | None, options: Options) -> Any:
    """A learner on private labelled records and public points (``fit(X, y, X_public=PublicData(Z))``)."""
    from oraclepriv.cover import CoverTooLargeError, largest_halfspace_cover
    from oraclepriv.io import read_csv_problem
    from oraclepriv.public_data import PublicData
    from oraclepriv.validation import check_delta_for_n

    if public is None:
        raise ValueError(f"--public is required for --algorithm {entry.name}")
    data = read_csv_problem(private)
    check_threshold_features(options.hypothesis_class, private, data.feature_names)
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
    _refuse_weights(data, private)
    n = len(data.y)
    if options.delta:
        try:
            check_delta_for_n(options.delta, n, "--delta")
        except ValueError as exc:
            raise ValueError(f"data file {str(private)!r}: {exc}") from None
    if entry.takes("--teachers"):
        teachers = options.teachers if options.teachers is not None else entry.default("n_teachers")
        if n < teachers:
            given = (
                f"--teachers {teachers} is"
                if options.teachers is not None
                else f"--teachers was not given and its default, {teachers}, is"
            )
            raise ValueError(
                f"{given} more than the n={n} private records of {str(private)!r}: --algorithm {entry.name} splits "
                f"them into --teachers disjoint blocks, so it needs 2 <= --teachers <= {n}"
            )
    if isinstance(options.public_size, int) and options.public_size > len(pub.X):
        raise ValueError(
            f"--public-size {options.public_size} is more than the {len(pub.X)} rows of --public {str(public)!r}; use "
            f"at most {len(pub.X)}, auto or all"
        )
    if options.hypothesis_class == "linear":  # named by the file and its 1-based data rows, not X_private
        _check_l1_ball(entry, data.X, f"data file {str(private)!r}", data.feature_names, private=True)
        _check_l1_ball(entry, pub.X, f"--public {str(public)!r}", pub.feature_names)
    learner = make_learner(entry, options)
    try:
        return learner.fit(data.X, data.y, X_public=PublicData(pub.X))
    except CoverTooLargeError as exc:  # the library names its Python parameters (max_public, max_candidates)
        fits = largest_halfspace_cover(exc.d, exc.limit)
        raise ValueError(
            f"--algorithm {entry.name}: the halfspace cover of the {exc.m} public points of --public "
            f"{str(public)!r} in d={exc.d} feature columns scores {exc.candidates:,} candidates (C(m, d) 2^(d+1)), "
            f"more than the {exc.limit:,} it enumerates. Give --public-size {fits} or less (or --public-size auto, "
            f"which stays within the limit), keep at most {fits} rows in the public file (pick them without looking "
            "at the private data), or use fewer feature columns (in the Python API, max_candidates=... raises the "
            "limit)"
        ) from None


def _check_l1_ball(
    entry: LearnerEntry, X: Any, shown: str, feature_names: tuple[str, ...], private: bool = False
) -> None:
    """Every row of a file inside the l1 unit ball (the bounded linear class), or a ValueError naming the file
    (``shown``) and the first row outside, counted from 1 after the header; the norm is shown for public rows
    only (an error message never echoes a private value)."""
    from oraclepriv.learners.regularization import first_outside_l1_ball

    outside = first_outside_l1_ball(X)
    if outside is not None:
        row, norm = outside
        value = "" if private else f" {norm!r}"
        raise ValueError(
            f"{shown}: row {row + 1} has l1 norm{value} > 1 (|{'| + |'.join(feature_names)}|); --algorithm "
            f"{entry.name}'s bounded linear class needs every row's l1 norm <= 1 (rescale the features)"
        )
