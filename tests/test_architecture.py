"""The module graph: no import cycles (lazy imports inside functions included), and the layers point
one way: the solvers never import the learners, the audits or the verifier, and the core (oracle,
hypotheses, release, ledger) imports none of the packages built on it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "solvers":  # installed as oraclepriv.solvers
        parts = ["oraclepriv", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    files = list((ROOT / "oraclepriv").rglob("*.py")) + list((ROOT / "solvers").glob("*.py"))
    modules = {_module_name(f): f for f in files}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def test_the_module_graph_has_no_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == [], cycles


def test_layers_point_one_way():
    graph = _graph()
    upper = ("oraclepriv.learners", "oraclepriv.audit", "oraclepriv.verify", "oraclepriv.experiments", "oraclepriv.cli")
    for name, targets in graph.items():
        if name.startswith("oraclepriv.solvers"):
            bad = [t for t in targets if t.startswith(upper) or t in ("oraclepriv.oracle", "oraclepriv.backends")]
            assert not bad, f"{name} imports {bad}: backends only search, they never reach up"
        if name in ("oraclepriv.hypotheses", "oraclepriv.oracle", "oraclepriv.release", "oraclepriv.ledger",
                    "oraclepriv.backends", "oraclepriv.validation", "oraclepriv.io"):
            bad = [t for t in targets if t.startswith(upper)]
            assert not bad, f"the core module {name} imports {bad}"
