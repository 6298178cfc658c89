"""Experiments: sweeps, learning curves and plots (figures come out of oraclepriv commands)."""
