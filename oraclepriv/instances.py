"""Benchmark instances: deterministic generators, the bundled library and its manifest.

Each instance is a CSV file in the format of :mod:`oraclepriv.io` plus a manifest entry
(name, class, n, d, generator, seed, sha256 of the file, best known objective and whether it
is proved optimal). ``oraclepriv instances build`` regenerates every file from its generator
and seed and recomputes the manifest; ``oraclepriv instances check`` verifies the checksums.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from oraclepriv.io import write_csv_problem

__all__ = ["InstanceSpec", "INSTANCE_SPECS", "DEFAULT_INSTANCE", "generate", "build_library", "check_library", "instances_dir"]

Generated = tuple[np.ndarray, np.ndarray, np.ndarray | None]


def noisy_halfspace(rng: np.random.Generator, n: int, d: int, noise: float = 0.1) -> Generated:
    """Gaussian points labelled by a random halfspace, each label flipped with prob. ``noise``; unit weights."""
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w + 0.2 >= 0).astype(np.int8)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y, None


def rrspm_signed(rng: np.random.Generator, n: int, d: int, m: int = 20, epsilon: float = 1.0) -> Generated:
    """The first oracle call of RRSPM (seed 000, Alg. 4): n - m private points with unit weights
    and noisy-halfspace labels, plus m public points with uniform random labels and
    Laplace(scale 2m/epsilon) weights (negative about half the time)."""
    n_private = n - m
    X_private, y_private, _ = noisy_halfspace(rng, n_private, d)
    Z = rng.normal(size=(m, d))
    y_tilde = rng.integers(0, 2, size=m).astype(np.int8)
    xi = rng.laplace(0.0, 2.0 * m / epsilon, size=m)
    X = np.vstack((X_private, Z))
    y = np.concatenate((y_private, y_tilde))
    weights = np.concatenate((np.ones(n_private), xi))
    return X, y, weights


def duplicated_grid(rng: np.random.Generator, n: int, d: int) -> Generated:
    """Integer-grid points in {-3..3}^d: many duplicates (with conflicting labels), collinear and
    coplanar points; integer signed weights including zeros."""
    X = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    y = ((X.sum(axis=1) + rng.integers(-2, 3, size=n)) >= 0).astype(np.int8)
    weights = rng.integers(-3, 6, size=n).astype(np.float64)
    return X, y, weights


def heavy_tailed(rng: np.random.Generator, n: int, d: int) -> Generated:
    """Student-t (2 degrees of freedom) features, noisy-halfspace labels, unit weights."""
    X = rng.standard_t(2.0, size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w >= 0).astype(np.int8)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y, None


GENERATORS: dict[str, Callable[..., Generated]] = {
    "noisy_halfspace": noisy_halfspace,
    "rrspm_signed": rrspm_signed,
    "duplicated_grid": duplicated_grid,
    "heavy_tailed": heavy_tailed,
}


@dataclass(frozen=True)
class InstanceSpec:
    name: str
    hypothesis_class: str
    generator: str
    n: int
    d: int
    seed: int

    @property
    def filename(self) -> str:
        return f"{self.name}.csv"


INSTANCE_SPECS: tuple[InstanceSpec, ...] = (
    InstanceSpec("rrspm-2d-n300", "halfspace", "rrspm_signed", 300, 2, 1),
    InstanceSpec("noisy-2d-n500", "halfspace", "noisy_halfspace", 500, 2, 2),
    InstanceSpec("grid-2d-n200", "halfspace", "duplicated_grid", 200, 2, 3),
    InstanceSpec("grid-3d-n80", "halfspace", "duplicated_grid", 80, 3, 4),
    InstanceSpec("heavy-3d-n60", "halfspace", "heavy_tailed", 60, 3, 5),
    InstanceSpec("rrspm-stump-5d-n2000", "stump", "rrspm_signed", 2000, 5, 6),
    InstanceSpec("noisy-threshold-n1000", "threshold", "noisy_halfspace", 1000, 1, 7),
)

DEFAULT_INSTANCE = "rrspm-2d-n300"


def instances_dir() -> Path:
    """The repository's ``instances/`` folder."""
    return Path(__file__).resolve().parent.parent / "instances"


def generate(spec: InstanceSpec) -> Generated:
    rng = np.random.default_rng(spec.seed)
    return GENERATORS[spec.generator](rng, spec.n, spec.d)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_library(out: Path | None = None, solve: bool = True) -> list[dict]:
    """Regenerate every instance file and the manifest (solving each with the default exact oracle)."""
    from oraclepriv.oracle import make_oracle

    out = Path(out) if out is not None else instances_dir()
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for spec in INSTANCE_SPECS:
        X, y, weights = generate(spec)
        path = out / spec.filename
        write_csv_problem(path, X, y, weights)
        entry = {
            "name": spec.name,
            "file": spec.filename,
            "class": spec.hypothesis_class,
            "n": spec.n,
            "d": spec.d,
            "generator": spec.generator,
            "seed": spec.seed,
            "sha256": _sha256(path),
            "best_objective": None,
            "proved_optimal": False,
            "solved_by": None,
        }
        if solve:
            result = make_oracle(spec.hypothesis_class).solve(X, y, weights)
            entry.update(best_objective=result.objective, proved_optimal=result.certified, solved_by=result.backend)
        manifest.append(entry)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def check_library(directory: Path | None = None) -> list[str]:
    """Problems found: files missing or differing from their manifest checksum / generator output."""
    directory = Path(directory) if directory is not None else instances_dir()
    problems = []
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:
        path = directory / entry["file"]
        if not path.is_file():
            problems.append(f"{entry['name']}: file {path} is missing")
        elif _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['name']}: checksum mismatch for {path}")
    return problems
