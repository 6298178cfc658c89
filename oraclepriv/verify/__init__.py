"""Exact privacy verification on small instances (``oraclepriv verify``)."""
