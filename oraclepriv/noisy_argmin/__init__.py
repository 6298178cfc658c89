"""The noisy argmin over the labelings of a few points, the structure RRSPM, RSPM and
SubsampleAggregate's releases share: the costs c_D(L) from the exact oracles (:mod:`.costs`) and the
law of the winning labeling, exact for Laplace noise or sampled (:mod:`.laws`). Used by the exact
verifier (:mod:`oraclepriv.verify`) and by the audits' reduced sampler (:mod:`oraclepriv.audit.runner`)."""
