"""Input validation at the library boundary.

Every public entry point funnels its arrays through these helpers, so a bad input fails
once, early, with a message naming the argument and the offending value — never a silently
wrong answer downstream. The private learners' labels (:func:`encode_binary_labels`) are private
data: their messages name the index or the count, never a label's value.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "BOOLEAN",
    "DELTA",
    "EPSILON",
    "INFINITE_EPSILON",
    "MAX_EPSILON",
    "NO_VALIDATION",
    "POSITIVE_INTEGER",
    "POSITIVE_REAL",
    "Constraint",
    "InstanceOf",
    "Interval",
    "StrOptions",
    "as_features",
    "as_labels",
    "as_weights",
    "weights_and_magnitudes",
    "check_delta",
    "check_delta_for_n",
    "check_epsilon",
    "check_param",
    "check_positive",
    "encode_binary_labels",
    "validate_params",
]


def _describe_bad(values: np.ndarray, mask: np.ndarray) -> str:
    index = np.argwhere(mask)[0]
    where = tuple(int(i) for i in index) if len(index) > 1 else int(index[0])
    return f"index {where} has value {_plain(values[tuple(index)])!r}"


def _plain(value):
    """Show 2, nan, 'a' rather than np.int64(2), np.float64(nan), np.str_('a') in messages."""
    return value.item() if isinstance(value, np.generic) else value


def _refuse_complex(values, name: str) -> None:
    """Complex input would lose its imaginary part in the float64 conversion (numpy only warns): refuse it."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind is None and isinstance(values, (list, tuple)):
        kind = np.asarray(values).dtype.kind
    if kind is None and hasattr(values, "dtypes"):  # a pandas DataFrame
        kind = "c" if any(getattr(t, "kind", "") == "c" for t in values.dtypes) else None
    if kind == "c" or isinstance(values, complex):
        raise ValueError(f"{name} must be real; got complex values (the imaginary part would be dropped)")


def as_features(X, name: str = "X", *, allow_1d: bool = True) -> np.ndarray:
    """Return X as a float64 array of shape (n, d), n >= 1, d >= 1, all finite (complex X is refused).

    The memory layout of a contiguous input is kept: a C- or Fortran-ordered float64 array is
    returned without a copy (pandas' ``DataFrame.to_numpy()`` is Fortran-ordered; forcing C order
    cost a full transposing copy of the private data in every learner fit). Anything else is
    copied to C order.
    """
    _refuse_complex(X, name)
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; could not convert it to float64 ({exc})") from None
    if arr.ndim == 1 and allow_1d:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d); got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one example is required")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {arr.shape})")
    if not _all_finite(arr):
        raise ValueError(f"{name} must be finite; {_describe_bad(arr, ~np.isfinite(arr))}")
    if arr.flags.c_contiguous or arr.flags.f_contiguous:
        return arr
    return np.ascontiguousarray(arr)


def _all_finite(arr: np.ndarray) -> bool:
    """True iff every entry is finite (one temporary; the entry-wise mask is built only on failure)."""
    return bool(np.isfinite(arr).all())


def as_labels(y, n: int, name: str = "y") -> np.ndarray:
    """Return y as an int8 array of length n with values in {0, 1}."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {np.asarray(y).shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n} rows (shape mismatch)")
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must contain labels in {{0, 1}}; got complex values (dtype {arr.dtype})")
    if arr.dtype.kind in "iu":  # integer labels: one pass, no float copy; int8 input is returned as is
        unsigned = arr.view(arr.dtype.str.replace("i", "u")) if arr.dtype.kind == "i" else arr  # a negative is > 1
        if unsigned.size and unsigned.max() > 1:  # one pass, no mask unless a label is bad
            raise ValueError(f"{name} must contain labels in {{0, 1}}; {_describe_bad(arr, unsigned > 1)}")
        return arr if arr.dtype == np.int8 else arr.astype(np.int8)
    try:
        numeric = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must contain labels in {{0, 1}}; got non-numeric values such as {_plain(arr[0])!r}"
        ) from None
    bad = ~((numeric == 0) | (numeric == 1))
    if bad.any():
        raise ValueError(f"{name} must contain labels in {{0, 1}}; {_describe_bad(arr, bad)}")
    return numeric.astype(np.int8)


def encode_binary_labels(y, n: int, name: str = "y") -> tuple[np.ndarray, np.ndarray, bool]:
    """Encode binary class labels as int8 {0, 1}: returns ``(codes, classes, inferred)``.

    Labels in {0, 1} (or booleans) keep their meaning and ``classes = [0, 1]`` whatever labels
    occur, so the label set is fixed in advance and reveals nothing about the data. Any other two
    labels are sorted (``classes[1]`` is coded 1) and ``inferred`` is True: the label names then
    come from the data, as scikit-learn classifiers take them (the caller says so in its release).
    One label outside {0, 1}, or more than two labels, is refused: these are binary learners.
    """
    if y is None:
        raise ValueError(f"{name} is None: these learners requires y to be passed, but the target y is None")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        from sklearn.utils.validation import column_or_1d  # here: scikit-learn takes a second to import

        arr = column_or_1d(arr, warn=True)  # scikit-learn's DataConversionWarning, then ravelled
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {np.asarray(y).shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n} rows (shape mismatch)")
    classes01 = np.array([0, 1], dtype=np.int8)
    if arr.dtype == bool or arr.dtype.kind in "iuf":
        if arr.dtype.kind == "f" and not _all_finite(arr):
            bad = ~np.isfinite(arr)
            raise ValueError(
                f"{name} must contain finite labels; index {int(np.argmax(bad))} is NaN or infinite "
                f"({int(bad.sum())} of {n} labels are)"
            )
        if np.all((arr == 0) | (arr == 1)):
            return as_labels(arr, n, name), classes01, False
    elif arr.dtype.kind == "O" and any(v is None for v in arr.tolist()):
        raise ValueError(f"{name} contains None; every example needs a class label")
    try:
        classes = np.unique(arr)
    except TypeError:
        raise ValueError(f"{name} mixes label types (e.g. strings and numbers); use one type of label") from None
    if classes.size > 2:  # the count only: the labels are private data
        raise ValueError(
            f"{name} has {classes.size} distinct class labels. Only binary classification is supported: give "
            "exactly two classes (multiclass and continuous targets are not)"
        )
    if classes.size < 2:
        raise ValueError(
            f"{name} has a single class label, outside {{0, 1}}: a binary learner cannot tell which class it is; "
            "use labels in {0, 1} (the label set is then fixed in advance) or data with both classes"
        )
    return (arr == classes[1]).astype(np.int8), classes, True


def as_weights(weights, n: int, name: str = "weights") -> np.ndarray:
    """Return weights as a finite float64 array of length n (any sign); None means all ones.

    Refused: complex values, and weights whose total sum_i |w_i| overflows float64 (every loss and
    bound is a partial sum of them; scaling all weights by one positive factor changes no minimiser)."""
    return weights_and_magnitudes(weights, n, name)[0]


def weights_and_magnitudes(weights, n: int, name: str = "weights") -> tuple[np.ndarray, np.ndarray, float]:
    """(the weights as :func:`as_weights` returns them, their absolute values, the float64 sum of those).

    The checks are :func:`as_weights`'s, made by the pass that computes the absolute values and their
    sum (a NaN or an infinity makes the sum non-finite too); a caller that needs those as well (the
    oracle protocol's sign reduction and its certificate's tolerance) does not compute them again."""
    if weights is None:
        return np.ones(n, dtype=np.float64), np.ones(n, dtype=np.float64), float(n)
    _refuse_complex(weights, name)
    try:
        arr = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric ({exc})") from None
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a 1-D array of length {n}; got a scalar {arr!r}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n} rows (shape mismatch)")
    with np.errstate(over="ignore", invalid="ignore"):
        magnitudes = np.abs(arr)
        total = float(magnitudes.sum())
    if not math.isfinite(total):
        if not _all_finite(arr):
            raise ValueError(f"{name} must be finite; {_describe_bad(arr, ~np.isfinite(arr))}")
        raise ValueError(f"{name}: {weight_total_problem(arr, name, 'the weights')}")
    return arr, magnitudes, total


def weight_total_problem(weights: np.ndarray, what: str, holder: str) -> str | None:
    """None when sum |weights| is a finite float64 (every loss and bound is a partial sum of it), else what is
    wrong and what to do, naming the weights as the caller's user knows them: ``what`` inside |.| (a
    parameter name, a column name), ``holder`` as what to divide (the weights, a file's column)."""
    with np.errstate(over="ignore"):
        total = float(np.abs(weights).sum())
    if np.isfinite(total):
        return None
    return (
        f"the sum of |{what}| overflows float64 (largest |{what}| {_plain(np.abs(weights).max())!r} among "
        f"{len(weights)}; the limit is a total of about 1.8e308). Divide {holder} by a common factor: the "
        "minimiser does not change"
    )


def check_positive(value: Any, name: str) -> float:
    """A finite real > 0 (e.g. a time limit, a tolerance)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number; got {value!r}") from None
    if not (v > 0) or not np.isfinite(v):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return v


# ------------------------------------------------------------------------------ declarative constraints
#
# The learners declare their constructor parameters' constraints as data, in scikit-learn's style (a mapping
# ``_parameter_constraints`` from each parameter to the alternatives it may take), and one validator checks
# them at ``fit``. scikit-learn's own machinery (``sklearn.utils._param_validation``) is private API, so this
# is a small layer of the same shape: intervals of reals or integers, string options, types, and None.


class Constraint(ABC):
    """One alternative a parameter's value may satisfy."""

    @abstractmethod
    def accepts(self, value: Any) -> bool:
        """Whether ``value`` satisfies this alternative."""

    @abstractmethod
    def describe(self) -> str:
        """The alternative in words, as an error message shows it ("a real number in (0, 700]")."""


def _is_real(value: Any) -> bool:
    """A real number: Python or numpy ints and floats; not a bool (True is not an epsilon), not a string."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Interval(Constraint):
    """Reals (``kind="real"``: ints and floats, NaN never) or integers (``"integer"``: floats such as 4.0 are
    refused) between ``low`` and ``high`` (None: unbounded), ``closed`` on the sides it names."""

    kind: Literal["real", "integer"]
    low: float | None
    high: float | None
    closed: Literal["both", "left", "right", "neither"]
    #: why the bounds are what they are, shown after the interval in an error
    why: str = ""

    def accepts(self, value: Any) -> bool:
        if not (_is_integer(value) if self.kind == "integer" else _is_real(value)):
            return False
        if math.isnan(value):
            return False
        if self.low is not None and (value < self.low or (value == self.low and self.closed in ("right", "neither"))):
            return False
        return not (
            self.high is not None and (value > self.high or (value == self.high and self.closed in ("left", "neither")))
        )

    def describe(self) -> str:
        what = "an integer" if self.kind == "integer" else "a real number"
        if self.low is not None and self.low == self.high:
            return f"{self.low:g}"
        if self.high is None and self.low is not None:
            text = f"{what} {'>=' if self.closed in ('left', 'both') else '>'} {self.low:g}"
        elif self.low is None and self.high is not None:
            text = f"{what} {'<=' if self.closed in ('right', 'both') else '<'} {self.high:g}"
        elif self.low is None:
            text = what
        else:
            left = "[" if self.closed in ("left", "both") else "("
            right = "]" if self.closed in ("right", "both") else ")"
            text = f"{what} in {left}{self.low:g}, {self.high:g}{right}"
        return f"{text} ({self.why})" if self.why else text


@dataclass(frozen=True)
class StrOptions(Constraint):
    """One of a fixed set of strings."""

    options: tuple[str, ...]

    def __init__(self, *options: str) -> None:
        object.__setattr__(self, "options", tuple(options))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def describe(self) -> str:
        return f"one of {list(self.options)}"


@dataclass(frozen=True)
class InstanceOf(Constraint):
    """An instance of one of ``types``, described as ``what``."""

    types: tuple[type, ...]
    what: str

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def describe(self) -> str:
        return self.what


#: True or False (numpy's bool too; not 0 and 1)
BOOLEAN = InstanceOf((bool, np.bool_), "True or False")
#: a finite real > 0 (a tolerance, a time limit, a scale)
POSITIVE_REAL = Interval("real", 0.0, math.inf, "neither")
#: an integer >= 1 (a count)
POSITIVE_INTEGER = Interval("integer", 1, None, "left")
#: a parameter validated elsewhere (a backend, by the registry; a random state, by the fit's generator)
NO_VALIDATION = "no_validation"

#: the largest epsilon taken anywhere (library and command line): e^epsilon must stay a finite float64 (it
#: overflows beyond 709.78) in the privacy computations (numerical delta, calibrations, verification, audits),
#: and no privacy guarantee means anything long before
MAX_EPSILON = 700.0
#: a privacy parameter epsilon
EPSILON = Interval("real", 0.0, MAX_EPSILON, "right", why="e^epsilon must stay a finite float64")
#: epsilon = inf, the non-private limit a mechanism may define (the exponential mechanism's argmin debug mode)
INFINITE_EPSILON = Interval("real", math.inf, math.inf, "both")
#: a privacy parameter delta
DELTA = Interval("real", 0.0, 1.0, "left")
#: an amount of epsilon in an account (a spend, a budget, a composed total): 0 is a free release, inf no guarantee
EPSILON_AMOUNT = Interval("real", 0.0, math.inf, "both")
#: an amount of delta in an account (a spend, a budget, a slack): 1 is no guarantee
DELTA_AMOUNT = Interval("real", 0.0, 1.0, "both")

#: a parameter's alternatives: constraints, None (the value None), or :data:`NO_VALIDATION`
Alternatives = Sequence[Constraint | None] | str


def _shown(value: Any) -> str:
    text = repr(_plain(value))
    return text if len(text) <= 80 else text[:77] + "..."


def check_param(value: Any, name: str, alternatives: Alternatives, owner: str = "") -> None:
    """Refuse ``value`` unless it satisfies one of ``alternatives``: a ValueError naming ``name`` (and the
    estimator, ``owner``), what it may be and the value given."""
    if isinstance(alternatives, str):  # NO_VALIDATION
        return
    for alternative in alternatives:
        if (value is None) if alternative is None else alternative.accepts(value):
            return
    described = ["None" if a is None else a.describe() for a in alternatives]
    expected = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
    prefix = f"{owner}: " if owner else ""
    raise ValueError(f"{prefix}{name} must be {expected}; got {_shown(value)}")


def validate_params(params: Mapping[str, Any], constraints: Mapping[str, Alternatives], owner: str) -> None:
    """Check every declared parameter against its alternatives (scikit-learn's ``_parameter_constraints`` format,
    with this module's constraints). As in scikit-learn, a parameter without a declaration is not checked (a
    subclass may add one); the package's learners declare every one, those checked elsewhere as
    :data:`NO_VALIDATION` (a test holds them to it)."""
    for name, alternatives in constraints.items():
        if name in params:
            check_param(params[name], name, alternatives, owner)


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """The privacy parameter epsilon, one rule for the library and the command line: a real number (Python or
    numpy; not a bool, not a string) in (0, :data:`MAX_EPSILON`]; ``inf`` only where the mechanism defines it
    (``allow_inf``: the exponential mechanism's non-private debug mode). ``name`` is how the caller's user
    knows it (``epsilon``, ``--epsilon``)."""
    check_param(value, name, (EPSILON, INFINITE_EPSILON) if allow_inf else (EPSILON,))
    return float(value)


def check_delta(value: Any, name: str = "delta") -> float:
    """The privacy parameter delta, one rule for the library and the command line: a real number (not a bool,
    not a string) in [0, 1)."""
    check_param(value, name, (DELTA,))
    return float(value)


def check_delta_for_n(delta: Any, n: int, name: str = "delta") -> float:
    """delta in [0, 1) and, if positive, delta < 1/n for n private records: a mechanism that publishes one
    random record verbatim is (0, 1/n)-DP, so a larger delta certifies nothing."""
    value = check_delta(delta, name)
    if value > 0 and value >= 1.0 / n:
        raise ValueError(
            f"{name} {value!r} is >= 1/n = {1.0 / n:.3g} for n={n} private records; such a delta allows "
            "publishing a private record verbatim. Use delta < 1/n (typically << 1/n)."
        )
    return value
