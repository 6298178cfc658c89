"""The Markdown report of the verification suite (``results/verify.md``)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["markdown_report"]


def _num(value: float, digits: int = 6) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


def markdown_report(rows: list[dict[str, Any]], command: str, explicit: list[dict[str, Any]] | None = None) -> str:
    from oraclepriv.provenance import machine_description

    lines = [
        "# Exact privacy verification",
        "",
        f"Produced by `{command}` on: {machine_description()}. Do not edit by hand.",
        "",
        "For each learner and small instance, `oraclepriv verify` computes c_D(L) (the fewest private mistakes of a "
        "hypothesis labelling the noisy points as L) with the named exact backend for D and for every neighbour (each "
        "private record replaced by its label flip or by a public point with either label), maps every labeling to the "
        "learner's own release, and computes the law of the release: **exact** for Laplace noise (polytope integration; "
        "the numerical error column bounds each probability's error) or **sampled** (10⁷ noise vectors per cost "
        "vector, no oracle call per draw; 99% exact binomial intervals, Bonferroni over outcomes and neighbours). "
        "*loss* is the largest |log P_D(o) − log P_D′(o)| over neighbours and outcomes, with its interval; "
        "*δ(ε)* is max Σ_o max(0, P(o) − e^ε P′(o)) at the claimed ε. The intervals bound these maxima (the largest "
        "lower and upper ends over every outcome, neighbour and direction), clipped to the quantities' ranges (loss "
        "in [0, ∞], δ(ε) in [0, 1]). A pure claim is exceeded when the loss's lower end is above ε; an (ε, δ) claim "
        "when δ(ε)'s lower end is above δ. Otherwise exact mode reads *verified* (its error bars are float rounding: "
        "a loss of ε within them, as on the tight constructions, meets the claim); sampled mode reads *verified* only "
        "when the upper end is within the claim too, and *inconclusive* when the interval contains the claim (the run "
        "neither refutes nor supports it; more draws narrow the interval). What is verified is the mechanism with an "
        "exact oracle (the certification tolerance's near-ties are the release's recorded numerical δ; see "
        "[docs/release-boundary.md](../docs/release-boundary.md)).",
        "",
        "Sizes. `verify instance` estimates its time and memory from the problem's size before its work starts "
        "(after the learner's fit and a few timed calls that measure the oracle's and the sampler's speed on the "
        "problem), and again once the realisable labelings are known, and refuses a run over `--max-seconds` (default one hour) "
        "or `--max-memory` (default half the memory available) with exit code 2, naming the limit and what to change "
        "(fewer draws, public points or records, more workers, a larger limit); the formulas are in "
        "`oraclepriv/verify/budget.py`. The realisable labelings are found point by point (at most 2⁵ + 2(m − 5)K "
        "oracle calls for K labelings of m > 5 points, not 2^m), the neighbouring datasets are built one at a time, "
        "and a sampled law's draws are streamed in chunks of a few MiB, so memory does not grow with the draws. On a "
        "terminal each phase shows its progress on stderr (never with `--json`). An oracle answer that is not "
        "certified stops the run with the labeling, the points and labels of its problem (private records by row), "
        "the backend's status and what to try instead.",
        "",
        "| instance | learner | backend | mode | n | m | labelings | neighbours | claim (ε, δ) | loss [interval] | δ(ε) | "
        "numerical error | verdict | expected | note | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = r["verdict"] if r["ok"] else f"**{r['verdict']} (UNEXPECTED)**"
        lines.append(
            f"| {r['instance']} | {r['learner']} | {r['backend']} | {r['mode']} | {r['n']} | {r['m']} | {r['n_labelings']} | "
            f"{r['n_neighbours']} | ({r['epsilon']:g}, {r['delta']:g}) | {_num(r['loss'])} [{_num(r['loss_low'])}, "
            f"{_num(r['loss_high'])}] | {_num(r['delta_at_epsilon'], 3)} | {_num(r['numerical_error'], 2)} | {verdict} | "
            f"{r['expected']} | {r['note']} | {r['seconds']:.1f} |"
        )
    lines += ["", "Worst neighbour and outcome per row:", ""]
    for r in rows:
        lines.append(f"- {r['instance']} / {r['learner']}: {r['worst_neighbour']}; outcome {r['worst_outcome']}")
    if explicit:
        lines += [
            "",
            "## Learners with explicit output laws",
            "",
            "PublicCoverEM (the exponential mechanism over the public cover) and the PPM learner (the exponential "
            "mechanism over the class G of Bassily, Moran and Nandi) make no oracle call; their output laws are "
            "computed outright on D and on every neighbour (label flips, public points, other records; privacy bits "
            "fixed for PPM), and *loss* is the largest |log p_D(o) − log p_D′(o)|. No sampling, float error only. "
            "Perturbation is not verified exactly: its release is a noisy argmin around f̄, itself an average of J "
            "ERMs under random Gaussian-process perturbations, so its law is a mixture with no finite cost vector.",
            "",
            "| subject | instance | method | neighbours | ε | loss | verdict | expected | seconds |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in explicit:
            verdict = r["verdict"] if r["ok"] else f"**{r['verdict']} (UNEXPECTED)**"
            lines.append(
                f"| {r['subject']} | {r['class']} | {r['method']} | {r['n_neighbours']} | {r['epsilon']:g} | "
                f"{_num(r['loss'])} | {verdict} | {r['expected']} | {r['seconds']:.1f} |"
            )
    return "\n".join(lines) + "\n"
