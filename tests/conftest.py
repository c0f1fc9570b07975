"""Test configuration: hypothesis profiles.

``make test`` (and so ``.ci/run``) sets ``HYPOTHESIS_PROFILE=ci``: the property tests draw
the same examples on every machine, so the suite's verdict is reproducible. ``make
test-explore`` uses the ``explore`` profile: new random examples on every run. A failure it
finds is replayed from ``.hypothesis/`` until fixed, and is then added as a regression test
(or, for a documented limitation, as a strict expected failure with its data in
``tests/<part>/data/``). Plain ``pytest`` uses hypothesis's default profile (random examples).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
