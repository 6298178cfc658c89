"""The overhead benchmark (fit time / oracle time) runs and reports consistent rows."""

from oraclepriv.bench.learners import bench_learners
from oraclepriv.learners import RRSPM, Perturbation


def test_bench_rows():
    cases = [
        {
            "name": "rrspm",
            "make": lambda s: RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=s),
            "n": 300,
            "m": 10,
            "d": 2,
        },
        {
            "name": "perturbation",
            "make": lambda s: Perturbation(epsilon=1.0, delta=1e-4, hypothesis_class="stump", J=3, random_state=s),
            "n": 300,
            "m": 10,
            "d": 2,
        },
    ]
    rows = bench_learners(cases, repeats=2)
    assert [r["oracle_calls"] for r in rows] == [2, 4]
    for r in rows:
        assert 0 < r["oracle_seconds"] <= r["fit_seconds"]
        assert r["ratio"] >= 1.0
