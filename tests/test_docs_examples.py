"""The documentation's examples run: every ```python block of the landing page and of the guides, in order, one page
per test, in a fresh namespace and a temporary working directory. The command lines of their ```bash blocks name
only commands and options that exist (each is checked against the command's --help)."""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path
from typing import Any

import pytest
import typer

from oraclepriv.cli import app

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = [DOCS / "index.md", *sorted((DOCS / "guide").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def blocks(page: Path, language: str) -> list[str]:
    """The bodies of the page's fenced blocks in ``language``, in order."""
    return [body for lang, body in FENCE.findall(page.read_text(encoding="utf-8")) if lang == language]


def command_lines(page: Path) -> list[list[str]]:
    """The ``oraclepriv`` command lines of the page's bash blocks (``python3 -m oraclepriv`` too), as argument lists
    without the program name; continuation lines joined, comments dropped."""
    found = []
    for body in blocks(page, "bash"):
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:3] == ["python3", "-m", "oraclepriv"]:
                found.append(words[3:])
            elif words[:1] == ["oraclepriv"]:
                found.append(words[1:])
    return found


def test_the_pages_are_found():
    names = {page.name for page in PAGES}
    assert {"index.md", "getting-started.md", "exact-erm.md", "private-learners.md"} <= names
    assert all(blocks(page, "python") for page in PAGES if page.parent.name == "guide")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the pages show warned-about reads (diagnostics) on purpose
        for number, code in enumerate(blocks(page, "python"), start=1):
            try:
                exec(compile(code, f"{page.name}, python block {number}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{page.name}: python block {number} failed: {exc!r}\n{code}") from exc


def resolve(words: list[str]) -> tuple[Any, list[str]]:
    """The (click) command a command line runs (e.g. ``bench mip``) and the words after its name."""
    command = typer.main.get_command(app)
    rest = list(words)
    while hasattr(command, "list_commands") and rest and not rest[0].startswith("-"):  # a group of commands
        sub = command.get_command(typer.Context(command), rest[0])
        assert sub is not None, f"`oraclepriv {' '.join(words)}`: {rest[0]!r} is not a command"
        command, rest = sub, rest[1:]
    return command, rest


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_command_lines_use_existing_options(page):
    for words in command_lines(page):
        command, rest = resolve(words)
        known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        used = {word.split("=")[0] for word in rest if word.startswith("--")}
        assert used <= known, f"{page.name}: `oraclepriv {' '.join(words)}` uses unknown options {sorted(used - known)}"
