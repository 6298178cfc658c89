"""Experiments: sweeps, learning curves and plots (figures come out of ``oraclepriv experiment`` commands).

One module per experiment (:mod:`~oraclepriv.experiments.rrspm_tradeoff`,
:mod:`~oraclepriv.experiments.ppm_curves`, :mod:`~oraclepriv.experiments.robust_tradeoff`,
:mod:`~oraclepriv.experiments.cover_baseline`), none importing another; what they share lives in
:mod:`~oraclepriv.experiments.scenarios` (the populations and their exact errors),
:mod:`~oraclepriv.experiments.stats` (slopes, the held-out selection protocol) and
:mod:`~oraclepriv.experiments.cells` (checks and the per-cell runner).
"""
