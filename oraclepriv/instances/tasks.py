"""Learning tasks for the private learners: private labelled data plus public unlabelled points."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.io import read_csv_problem, write_csv_problem

if TYPE_CHECKING:
    pass
from oraclepriv.instances.manifest import _sha256
from oraclepriv.instances.specs import instances_dir


@dataclass(frozen=True)
class LearningTaskSpec:
    """A private/public pair for the learners of Block et al. (Algorithms 2-4): n private points with
    labels from a
    noisy rule, m public points from the same marginal (sigma = 1), d features. ``l1_ball`` scales
    every point into the unit l1 ball (the input domain of Algorithm 3's bounded linear class)."""

    name: str
    n: int
    m: int
    d: int
    seed: int
    l1_ball: bool = False

    @property
    def private_file(self) -> str:
        return f"{self.name}-private.csv"

    @property
    def public_file(self) -> str:
        return f"{self.name}-public.csv"


LEARNING_TASKS: tuple[LearningTaskSpec, ...] = (
    LearningTaskSpec("task-5d-n20000", 20_000, 50, 5, 21),
    LearningTaskSpec("task-2d-n2000", 2_000, 20, 2, 22),
    LearningTaskSpec("task-l1-3d-n300", 300, 50, 3, 23, l1_ball=True),
)


def generate_task(spec: LearningTaskSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_private, y_private, X_public): uniform points in [-1,1]^d, labels 1[x.w > 0] flipped w.p. 0.1."""
    rng = np.random.default_rng(spec.seed)
    X = rng.uniform(-1.0, 1.0, (spec.n, spec.d))
    Z = rng.uniform(-1.0, 1.0, (spec.m, spec.d))
    if spec.l1_ball:
        X /= np.maximum(1.0, np.abs(X).sum(axis=1, keepdims=True))
        Z /= np.maximum(1.0, np.abs(Z).sum(axis=1, keepdims=True))
    w = np.linspace(1.0, -0.5, spec.d)
    y = ((X @ w > 0) ^ (rng.random(spec.n) < 0.1)).astype(np.int8)
    return X, y, Z


def build_learning_tasks(out: Path | None = None) -> list[dict[str, Any]]:
    """Write every learning task's two files and ``learning_tasks.json`` (with sha256 checksums)."""
    out = Path(out) if out is not None else instances_dir()
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for spec in LEARNING_TASKS:
        X, y, Z = generate_task(spec)
        write_csv_problem(out / spec.private_file, X, y)
        write_csv_problem(out / spec.public_file, Z, None)
        entries.append(
            {
                "name": spec.name,
                "private_file": spec.private_file,
                "public_file": spec.public_file,
                "n": spec.n,
                "m": spec.m,
                "d": spec.d,
                "seed": spec.seed,
                "l1_ball": spec.l1_ball,
                "sha256": {f: _sha256(out / f) for f in (spec.private_file, spec.public_file)},
            }
        )
    (out / "learning_tasks.json").write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    return entries


def load_learning_task(name: str, directory: Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_private, y_private, X_public) of a bundled learning task."""
    directory = Path(directory) if directory is not None else instances_dir()
    entries = {e["name"]: e for e in json.loads((directory / "learning_tasks.json").read_text(encoding="utf-8"))}
    if name not in entries:
        raise ValueError(f"unknown learning task {name!r}; bundled: {sorted(entries)}")
    entry = entries[name]
    private = read_csv_problem(directory / entry["private_file"])
    public = read_csv_problem(directory / entry["public_file"], require_labels=False)
    return private.X, private.y, public.X
