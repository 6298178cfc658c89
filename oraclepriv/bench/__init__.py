"""Benchmarks: each measures its baseline in the same run and states the machine it ran on.

* :mod:`~oraclepriv.bench.oracles`: the exact combinatorial oracles (``oraclepriv bench oracles``);
* :mod:`~oraclepriv.bench.mip`: the MIP backends side by side, MIPLIB-style (``oraclepriv bench mip``),
  on the instances of :mod:`~oraclepriv.bench.mip_suite` or the bundled library, summarised by
  :mod:`~oraclepriv.bench.mip_summary`, checked by :mod:`~oraclepriv.bench.mip_agreement` and written (summary,
  performance profile, files) by :mod:`~oraclepriv.bench.mip_report`;
* :mod:`~oraclepriv.bench.learners`: the private learners' own work around their oracle calls
  (``oraclepriv bench learners``);
* :mod:`~oraclepriv.bench.ppm`: the PPM learner's fit time (``oraclepriv bench ppm``);
* :mod:`~oraclepriv.bench.report`: what they share: Markdown tables and JSON files (the machine line and
  load averages come from :mod:`~oraclepriv.provenance`).
"""

from oraclepriv.bench.report import markdown_table

__all__ = ["markdown_table"]
