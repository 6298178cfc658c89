"""Test-suite configuration: hypothesis profiles.

* ``ci`` (the default): derandomized, so a run on a fresh machine explores exactly the examples
  every other run explores (a property test must not pass here and fail there by chance);
* ``thorough``: random exploration, 1000 examples where a test sets no count of its own, for hunting bugs
  (``HYPOTHESIS_PROFILE=thorough python3 -m pytest``, also with ``-m slow``).

Examples that once failed are pinned with ``@example`` in their tests.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("thorough", derandomize=False, deadline=None, max_examples=1000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
