"""Audits of Algorithms 2 and 3 (stability of fbar + the mechanism on u, oraclepriv.audit.mechanism, run by
oraclepriv.audit.suite.perturb_audit_suite), each with a negative control."""

import pytest

from oraclepriv.audit import audit_learner, flip_scenario
from oraclepriv.audit.controls import PerturbationWithoutNoise
from oraclepriv.audit.mechanism import audit_release
from oraclepriv.audit.suite import perturb_audit_suite
from oraclepriv.learners import Perturbation
from oraclepriv.learners.perturb import calibrate_gamma


def test_the_suite_passes_the_learners_and_catches_each_control_by_its_stability_claim():
    shown, progress = [], []
    rows = perturb_audit_suite(n_samples=100_000, on_row=shown.append, progress=lambda *p: progress.append(p))
    assert shown == rows and progress[-1] == (len(rows), len(rows)) == (6, 6)
    assert all(row["verdict"] == "ok" for row in rows), rows
    by_label = {row["learner"]: row for row in rows}
    for noise in ("gaussian", "laplace"):
        good = by_label[f"Regularization, {noise} noise"]
        bad = by_label[f"control: eta not scaled to the sum objective, {noise} noise"]
        assert good["passed"] and good["distance_m"] == pytest.approx(1 / (2 * 200 * 0.2), rel=1e-4)  # 1/(2 eta_sum)
        assert not bad["passed"] and not bad["stability_ok"] and bad["eps_lower"] > 1.5
    assert by_label["Perturbation"]["passed"] and by_label["Perturbation"]["rho"] == 2.0
    tiny_radius = by_label["control: a claimed stability radius below the true one (rho = 0.05)"]
    assert not tiny_radius["passed"] and not tiny_radius["stability_ok"]


@pytest.mark.parametrize("noise, delta", [("gaussian", 1e-3), ("laplace", 0.0)])
def test_mechanism_audit_is_sharp_at_the_sensitivity(noise, delta):
    """At distance exactly sqrt(m) rho the calibrated mechanism passes; at 2x it is caught."""
    gamma = calibrate_gamma(noise, 1.0, 1, 1.0, delta)
    ok = audit_release([0.0], [1.0], gamma, noise, epsilon=1.0, delta=delta, n_samples=200_000)
    assert ok.eps_lower <= 1.0 and ok.eps_lower > 0.5
    bad = audit_release([0.0], [2.0], gamma, noise, epsilon=1.0, delta=delta, n_samples=200_000)
    assert bad.eps_lower > 1.0


@pytest.mark.slow
def test_perturbation_black_box_audit_catches_missing_perturb_noise():
    sc = flip_scenario()

    def make(cls):
        return lambda s: cls(epsilon=1.0, delta=1e-3, hypothesis_class="threshold", eta=0.01, J=3, random_state=s)

    good = audit_learner(make(Perturbation), sc, epsilon=1.0, delta=1e-3, n_runs=600)
    bad = audit_learner(make(PerturbationWithoutNoise), sc, epsilon=1.0, delta=1e-3, n_runs=600)
    assert good.passed, good.to_dict()
    assert not bad.passed, bad.to_dict()


def test_audit_perturb_command_runs_the_suite_and_writes_its_report(tmp_path):
    """``oraclepriv audit perturb``: the suite's rows on the terminal and in the report, every verdict as expected
    (exit 0), the command that regenerates it in the report."""
    from typer.testing import CliRunner

    from oraclepriv.cli import app

    report = tmp_path / "perturb.md"
    done = CliRunner().invoke(app, ["audit", "perturb", "--samples", "4000", "--quiet", "--report", str(report)])
    assert done.exit_code == 0, done.output
    assert done.output.count(" ok") == 6 and "control: a claimed stability radius" in done.output
    text = report.read_text()
    assert "oraclepriv audit perturb --samples 4000" in text and text.count("| ok |") == 6
    bad = CliRunner().invoke(app, ["audit", "perturb", "--samples", "0"])
    assert bad.exit_code == 2 and "--samples" in bad.output
