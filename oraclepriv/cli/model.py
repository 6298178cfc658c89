"""``oraclepriv predict`` and ``oraclepriv score``: use a released model (``oraclepriv learn --out MODEL.json``, or
:meth:`oraclepriv.release.Release.save`) on a CSV file of the format ``learn`` and ``erm`` read.

Only the release is read, the hypothesis and its privacy record: what the privacy guarantee covers, so using it
costs no privacy. Scoring on labelled data is a computation on that data, which is the user's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oraclepriv.cli.common import check_input_file, check_output_file, echo, fail, output_path

if TYPE_CHECKING:
    import numpy as np

    from oraclepriv.io import WeightedData
    from oraclepriv.release import Release

ModelFile = Annotated[Path, typer.Argument(help="A release saved by `oraclepriv learn --out` (JSON).")]


def predict(
    model: ModelFile,
    data: Annotated[Path, typer.Argument(help="CSV: the feature columns of the model (a y column is ignored).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the labels to this CSV file.", parser=output_path)
    ] = None,
) -> None:
    """The released hypothesis's label of every row of DATA.csv, one per row, as a CSV column y (on stdout, or in
    --out)."""
    check_input_file(model, "model file")
    check_input_file(data, "data file")
    check_output_file(out, "--out")
    release = load_model(model)
    problem = _read(data, labels=False, release=release)
    labels = _checked_predict(release, problem, model, data, codes=False)
    text = "y\n" + "".join(f"{_cell(label)}\n" for label in labels.tolist())
    if out is None:
        echo(text.rstrip("\n"))
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"--out {str(out)!r}: cannot write the labels ({exc.strerror or exc})")


def score(
    model: ModelFile,
    data: Annotated[
        Path, typer.Argument(help="CSV: the feature columns of the model, a 0/1 label column y, optional weight.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Accuracy and weighted 0-1 loss of the released hypothesis on labelled DATA.csv.

    The loss is the sum of the 'weight' column over the rows the model gets wrong (each row counts 1 without
    the column). Labels y are class codes 0 and 1: for a model whose classes are other labels (its release
    lists them), 0 stands for the first and 1 for the second."""
    import numpy as np

    from oraclepriv.hypotheses import weighted_zero_one_loss

    check_input_file(model, "model file")
    check_input_file(data, "data file")
    release = load_model(model)
    problem = _read(data, labels=True, release=release)
    codes = _checked_predict(release, problem, model, data, codes=True)
    labels = problem.y
    assert labels is not None  # read with require_labels: a file without them was refused
    correct = int(np.count_nonzero(codes == labels))
    n = len(labels)
    result = {
        "model": str(model),
        "data": str(data),
        "algorithm": release.algorithm,
        "n": n,
        "correct": correct,
        "accuracy": correct / n,
        "zero_one_loss": weighted_zero_one_loss(codes, labels, problem.weights_or_ones()),
        "weighted": problem.weights is not None,
    }
    if as_json:
        from oraclepriv.io import to_json

        echo(to_json(result, sort_keys=True))
        return
    weights = "the 'weight' column" if result["weighted"] else "1 per row"
    echo(f"accuracy          {result['accuracy']:.6g}  ({correct} of {n} rows of {str(data)!r})")
    echo(f"weighted 0-1 loss {result['zero_one_loss']:.12g}  (weights: {weights})")


def load_model(path: Path) -> Release:
    """The release in ``path``, or a one-line error naming the file and what is wrong with it."""
    from oraclepriv.release import Release

    shown = f"model file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{shown} cannot be read: {getattr(exc, 'strerror', None) or exc}")
    try:
        return Release.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:  # a hypothesis without its fields: KeyError, TypeError
        reason = str(exc).removeprefix("not a release: ") if isinstance(exc, ValueError) else f"missing {exc}"
        fail(f"{shown} is not a release saved by `oraclepriv learn --out` or Release.save: {reason}")


def _read(path: Path, *, labels: bool, release: Release) -> WeightedData:
    """The data file, as ``learn`` reads it; a column of privacy bits is not a feature for a model whose learner
    reads one (the file ``learn`` was given can be predicted on as it is)."""
    from dataclasses import replace

    from oraclepriv.cli.learn_fit import PRIVACY_BITS_COLUMN
    from oraclepriv.io import read_csv_problem

    try:
        problem = read_csv_problem(path, require_labels=labels)
    except ValueError as exc:
        fail(str(exc) + ("; score compares the model's labels with it" if "no label column" in str(exc) else ""))
    if PRIVACY_BITS_COLUMN in problem.feature_names and _reads_privacy_bits(release):
        keep = [i for i, name in enumerate(problem.feature_names) if name != PRIVACY_BITS_COLUMN]
        problem = replace(problem, X=problem.X[:, keep], feature_names=tuple(problem.feature_names[i] for i in keep))
    return problem


def _reads_privacy_bits(release: Release) -> bool:
    """Whether the learner that made ``release`` reads privacy bits from its data file (the learner registry)."""
    from oraclepriv.learners.registry import learner_entries

    return any(
        entry.data == "privacy-bits" and getattr(entry.estimator_class(), "algorithm", None) == release.algorithm
        for entry in learner_entries()
    )


def _feature_count(hypothesis: Any) -> int | None:
    """How many feature columns the hypothesis takes, when it says (None: a stump, which reads one column of any
    number)."""
    if getattr(hypothesis, "hypothesis_class", None) == "threshold":
        return 1
    for name in ("dim", "d"):
        value = getattr(hypothesis, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    w = getattr(hypothesis, "w", None)
    return None if w is None else len(w)


def _checked_predict(release: Release, problem: WeightedData, model: Path, data: Path, *, codes: bool) -> np.ndarray:
    """The model's labels (or 0/1 codes) of the rows, or a one-line error when the file's columns do not fit it."""
    import numpy as np

    d = problem.X.shape[1]
    columns = (
        f"data file {str(data)!r} has {d} feature column{'s' if d != 1 else ''} ({', '.join(problem.feature_names)})"
    )
    kind = getattr(release.hypothesis, "hypothesis_class", type(release.hypothesis).__name__)
    expected = _feature_count(release.hypothesis)
    if expected is not None and expected != d:
        fail(f"{columns} but the model in {str(model)!r} (a {kind}) takes {expected}")
    try:
        if codes:
            return np.asarray(release.hypothesis.predict(problem.X), dtype=np.int8)
        return release.predict(problem.X)
    except ValueError as exc:
        fail(f"{columns}, which the model in {str(model)!r} (a {kind}) cannot take: {exc}")


def _cell(label: Any) -> str:
    """A label as a CSV cell (quoted when it holds a comma or a quote)."""
    text = str(label)
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text
