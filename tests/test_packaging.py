"""The wheel is one package, ``oraclepriv``, with its solvers and bundled instances inside.

Builds the wheel from this checkout, installs it (without dependencies; they come from the running
interpreter's site-packages) into a fresh virtual environment, and from an unrelated directory that
holds a ``solvers/`` folder of its own (common in research code) lists the bundled instances, solves
one with ``oraclepriv erm`` and fits a private learner.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], cwd: Path, timeout: int = 300) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of this checkout."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"  # build from a copy: an in-tree build would leave build/ in the checkout
    source.mkdir()
    for item in ("pyproject.toml", "README.md", "oraclepriv", "solvers", "instances"):
        copy = shutil.copytree if (ROOT / item).is_dir() else shutil.copy2
        copy(
            ROOT / item,
            source / item,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if (ROOT / item).is_dir() else {}),
        )
    _run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(base)],
        base,
    )
    return next(base.glob("oraclepriv-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel: Path) -> tuple[Path, Path]:
    """The wheel installed into a fresh virtual environment, beside a foreign ``solvers/`` folder."""
    base = wheel.parent
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], base)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], base)
    elsewhere = base / "research"
    (elsewhere / "solvers").mkdir(parents=True)
    (elsewhere / "solvers" / "__init__.py").write_text("raise ImportError('a user solvers package, not ours')\n")
    (elsewhere / "solvers" / "base.py").write_text("X = 1\n")
    return wheel, python


def test_the_wheel_holds_one_package_with_solvers_and_instances(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"oraclepriv"}
    assert "oraclepriv/instance_data/manifest.json" in names
    # every module of the solvers/ tree and its subpackages is shipped (a subpackage missing from pyproject's
    # package list would be left out of the wheel silently)
    root = Path(__file__).resolve().parent.parent
    for source in sorted((root / "solvers").rglob("*.py")):
        assert "oraclepriv/solvers/" + source.relative_to(root / "solvers").as_posix() in names, source
    assert any(name.startswith("oraclepriv/instance_data/") and name.endswith(".csv") for name in names)


@pytest.mark.slow
def test_installed_wheel_works_next_to_a_foreign_solvers_folder(installed):
    _, python = installed
    cwd = python.parent.parent.parent / "research"
    location = _run([str(python), "-c", "import oraclepriv; print(oraclepriv.__file__)"], cwd)
    assert str(python.parent.parent) in location  # the wheel's copy, not this checkout
    listing = _run([str(python), "-m", "oraclepriv", "instances", "list"], cwd)
    assert "rrspm-2d-n300" in listing
    assert "rrspm-2d-n300" in _run([str(python.parent / "oraclepriv"), "instances", "list"], cwd)  # the console script
    data = _run(
        [str(python), "-c", "from oraclepriv.instances import instances_dir; print(instances_dir())"], cwd
    ).strip()
    solved = _run(
        [
            str(python),
            "-m",
            "oraclepriv",
            "erm",
            f"{data}/rrspm-2d-n300.csv",
            "--hypothesis-class",
            "halfspace",
            "--json",
        ],
        cwd,
    )
    assert '"certified": true' in solved
    fit = _run(
        [
            str(python),
            "-c",
            (
                "import numpy as np\n"
                "from oraclepriv.learners import RRSPM\n"
                "rng = np.random.default_rng(0); X = rng.normal(size=(200, 2)); y = (X[:, 0] > 0).astype(int)\n"
                "print(RRSPM(epsilon=1.0, random_state=0).fit(X, y, X_public=rng.normal(size=(6, 2))).release_.to_json())\n"
            ),
        ],
        cwd,
    )
    assert '"algorithm": "RRSPM"' in fit


def test_every_package_of_the_checkout_is_listed_for_the_wheel():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "oraclepriv").rglob("__init__.py")}
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"


@pytest.mark.slow
def test_installed_wheel_runs_the_main_job(installed):
    """The README's main job (``oraclepriv demo``) from the installed wheel, outside the checkout, beside a
    foreign ``solvers/`` folder: it runs to its picture."""
    _, python = installed
    cwd = python.parent.parent.parent / "research"
    out = _run([str(python), "-m", "oraclepriv", "demo", "--out", "demo.png"], cwd)
    assert "certified" in out and "audit" in out.lower()
    assert (cwd / "demo.png").stat().st_size > 10_000
