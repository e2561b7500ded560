"""Re-exports the upstream ODS helpers that the generated ``_soac_ops_gen.py`` imports."""

from mlir.dialects._ods_common import *  # noqa: F401,F403
from mlir.dialects._ods_common import _cext  # noqa: F401
