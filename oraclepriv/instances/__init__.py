"""Benchmark instances: deterministic generators, the bundled library and its manifest.

Each instance is a CSV file in the format of :mod:`oraclepriv.io` plus a manifest entry
(name, class, n, d, generator, seed, parameters, sha256 of the file, best known objective with
the hypothesis that attains it (``best_hypothesis``, a witness anyone can re-score, as MIPLIB ships
solutions), the best proved lower bound, each with the backend that found or proved it and its
time limit, whether the objective is proved optimal, and the gap).
``oraclepriv instances build`` regenerates every file from its generator and seed and re-solves
every instance (exact combinatorial oracles where they apply, a time-limited MIP otherwise: an
instance the MIP does not close is kept as *open*, with its best known objective and bound);
:func:`record_results` merges the rows of an ``oraclepriv bench mip`` run into the manifest the
same way (best values never regress; a new best objective is recorded only with a hypothesis that attains
it, which becomes the witness; a bound only when proved over the whole class; ``oraclepriv instances record
ROWS.json``); ``oraclepriv instances check`` verifies the manifest's fields, the checksums, that every
entry agrees with its file and with itself (best bound <= best objective, gap, proved_optimal), and
re-scores every witness (:func:`check_library`, :func:`check_witnesses`);
``oraclepriv instances export-mps`` writes an instance's MIP model as MPS so other solvers can
be benchmarked on the same models.

Families: synthetic (separable + label noise, heavy-tailed, duplicated grid points, signed
weights as RRSPM's first oracle call produces them, in d = 2 and at MIP sizes d = 5) and real
data that ships inside scikit-learn (:func:`sklearn_data`): breast cancer (malignant vs benign),
wine (class 0 vs rest), iris (versicolor vs virginica on the two petal features, not separable).
Real-data features are stored exactly, as integers in units of 10^-k of scikit-learn's values
(k per feature, the number of decimals in the source; iris petals in mm). Both hypothesis
classes are invariant under these per-feature scalings (a stump's order, a halfspace's
labelings), so nothing about the learning problem changes; the data just become exact integers
(a grid on which ``cpsat`` is exact). The same holds for any affine map of the features
(standardisation included): a halfspace composed with an invertible affine map is a halfspace,
so the class's labelings, and the 0-1 problem, are unchanged.

The real-data tier (:data:`REAL_TIER`, ``oraclepriv bench mip --suite real``):
halfspace instances in d = 4..10 a user would bring. Real data at full size (breast cancer,
wine cultivars, iris species, digit pairs and even vs odd, diabetes progression above its
median) on feature groups in their exact units, or on principal-component projections
(:func:`principal_component_scores`). A projection to k < d components *does* change the data
(and rounding the scores to 10^-3 can merge nearby points): it is part of the instance's
definition, and the stored file is the instance. Beside them, noisy synthetic families in
d = 4..8 (Gaussian blobs with 20% label noise, heavy-tailed features, duplicated grid points
with conflicting labels and signed integer weights, RRSPM's signed Laplace weights), their
features rounded to 4 decimals by :func:`generate`. The manifest says for each instance the best
known objective and bound, who found and proved them at what time limit, and whether it is open.

Modules: :mod:`.generators` (the synthetic and real-data generators), :mod:`.specs` (the library's instances and
the real-data tier), :mod:`.manifest` (reading the manifest and the instance files), :mod:`.checks` (``instances
check``), :mod:`.library` (``instances build`` and ``instances record``), :mod:`.export` (``instances
export-mps``), :mod:`.tasks` (the learners' tasks).
"""

from __future__ import annotations

from oraclepriv.instances.checks import CLASSES, WITNESS_CLASSES, check_library, check_witnesses
from oraclepriv.instances.export import EXPORT_BACKENDS, FORMULATIONS, export_mps, instance_milp
from oraclepriv.instances.generators import principal_component_scores, sklearn_data
from oraclepriv.instances.library import build_library, record_results
from oraclepriv.instances.manifest import ManifestError, load_instance, load_manifest, manifest_entry
from oraclepriv.instances.specs import (
    DEFAULT_INSTANCE,
    INSTANCE_SPECS,
    REAL_TIER,
    REAL_TIER_SPECS,
    InstanceSpec,
    generate,
    instances_dir,
    real_tier,
)
from oraclepriv.instances.tasks import LEARNING_TASKS, build_learning_tasks, generate_task, load_learning_task

__all__ = [
    "InstanceSpec",
    "INSTANCE_SPECS",
    "DEFAULT_INSTANCE",
    "EXPORT_BACKENDS",
    "FORMULATIONS",
    "generate",
    "build_library",
    "record_results",
    "REAL_TIER",
    "REAL_TIER_SPECS",
    "real_tier",
    "check_library",
    "check_witnesses",
    "CLASSES",
    "WITNESS_CLASSES",
    "ManifestError",
    "instances_dir",
    "load_manifest",
    "manifest_entry",
    "load_instance",
    "instance_milp",
    "export_mps",
    "sklearn_data",
    "principal_component_scores",
    "LEARNING_TASKS",
    "build_learning_tasks",
    "generate_task",
    "load_learning_task",
]
