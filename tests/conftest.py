"""Test configuration: hypothesis profiles.

``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``) derandomizes the property tests so that a CI
run is reproducible; locally the default profile explores new examples on every run, and a
failure it finds is replayed from ``.hypothesis/`` until fixed (then added as a regression
test).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
