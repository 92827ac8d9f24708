import subprocess
import sys

import metrics_core


def test_importing_metrics_core_imports_no_django():
    code = "import sys, metrics_core, metrics_core.io; print(any(m.split('.')[0] == 'django' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_api_is_exported():
    for name in metrics_core.__all__:
        assert hasattr(metrics_core, name), name
