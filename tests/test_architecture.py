"""The module graph: no import cycles (lazy imports inside functions included), and the layers point
one way, top to bottom: the command line; the benchmarks, experiments and demo; the private learners,
audits and verifier; the domain modules they share (instances, covers, the PPM class, ...); the core
(oracle, hypotheses, ledger, release, backends, validation, io) with the solvers. A module imports from
its own floor or below, never above, and the solvers never reach up to the oracle or the registry."""

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
    files = list((ROOT / "oraclepriv").rglob("*.py")) + list((ROOT / "solvers").rglob("*.py"))
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
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == [], cycles


#: the floors, top first; a module belongs to the first floor one of whose prefixes names it or a package
#: above it, and to DOMAIN when none does
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("command line", ("oraclepriv.__main__", "oraclepriv.cli")),
    ("benchmarks and experiments", ("oraclepriv.bench", "oraclepriv.experiments", "oraclepriv.demo")),
    ("learners, audits, verifier", ("oraclepriv.learners", "oraclepriv.audit", "oraclepriv.verify")),
    ("domain", ()),
    (
        "core and solvers",
        (
            "oraclepriv.oracle",
            "oraclepriv.hypotheses",
            "oraclepriv.exact_affine",
            "oraclepriv.ledger",
            "oraclepriv.release",
            "oraclepriv.backends",
            "oraclepriv.validation",
            "oraclepriv.io",
            "oraclepriv.solvers",
            "oraclepriv.public_data",
        ),
    ),
]
DOMAIN = 3

#: imports that run up a floor today, each with what removes it; the test fails once one is gone, so the
#: list cannot outlive its entries
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _floor(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return DOMAIN


def test_every_named_layer_exists():
    graph = _graph()
    # the solvers' subpackages are in the graph (a flat glob of solvers/ would leave them unchecked)
    for package in ("mip", "branch_and_cut", "combinatorial", "peers", "runtime"):
        assert any(m.startswith(f"oraclepriv.solvers.{package}.") for m in graph), package
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            assert any(m == prefix or m.startswith(prefix + ".") for m in graph), f"{name}: no module {prefix}"


def test_layers_point_one_way():
    graph = _graph()
    upward = {(name, target) for name, targets in graph.items() for target in targets if _floor(target) < _floor(name)}
    unexpected = sorted(upward - set(KNOWN_UPWARD))
    assert not unexpected, "imports that run up a floor: " + "; ".join(
        f"{a} ({LAYERS[_floor(a)][0]}) -> {b} ({LAYERS[_floor(b)][0]})" for a, b in unexpected
    )
    assert set(KNOWN_UPWARD) <= upward, f"gone, drop them from KNOWN_UPWARD: {sorted(set(KNOWN_UPWARD) - upward)}"
    for name, targets in graph.items():
        if name.startswith("oraclepriv.solvers"):
            bad = [t for t in targets if t in ("oraclepriv.oracle", "oraclepriv.backends")]
            assert not bad, f"{name} imports {bad}: backends only search, they never reach up"


def test_the_floors_stand_in_order():
    """The command line on top, then benchmarks and experiments, then learners, audits and the verifier,
    then the domain modules, with the core and the solvers at the bottom."""
    order = [name for name, _ in LAYERS]
    assert order == [
        "command line",
        "benchmarks and experiments",
        "learners, audits, verifier",
        "domain",
        "core and solvers",
    ]
    assert _floor("oraclepriv.cli.app") < _floor("oraclepriv.bench.mip") == _floor("oraclepriv.experiments.stats")
    assert (
        _floor("oraclepriv.experiments.stats") < _floor("oraclepriv.learners.rrspm") == _floor("oraclepriv.audit.suite")
    )
    assert _floor("oraclepriv.verify.suite") < _floor("oraclepriv.instances") < _floor("oraclepriv.oracle")
    assert _floor("oraclepriv.oracle") == _floor("oraclepriv.solvers.combinatorial.enumerate")
