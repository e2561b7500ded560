"""Makes the helpers next to the tests (gradcheck.py) importable."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
