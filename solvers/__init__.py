"""Oracle backends, one module per backend, imported lazily by ``oraclepriv.make_oracle``.

Backends only search; they never import a learner. See ``oraclepriv.solvers.base`` for the contract.
"""
