"""Two fixes to happybase 1.3.0's published test harness, copied next to its tests/test_api.py
by run-happybase-tests.sh. Neither changes what a test asserts.

1. happybase 1.3.0 moved its tests from nose to pytest (its PR 238) but kept nose's
   `assert_raises`, which tests/test_api.py neither defines nor imports: every test that
   uses it would fail with a NameError before reaching the server. pytest.raises is the
   same context manager.
2. tests/test_api.py passes the HAPPYBASE_PORT environment variable on as a string, which
   the socket refuses ("'str' object cannot be interpreted as an integer"); without the
   variable no port but 9090 can be tested. The port is turned into an int once the test
   module is imported.
"""

import builtins
import sys

import pytest

builtins.assert_raises = pytest.raises


def pytest_collection_modifyitems(session, config, items):
    for name, module in list(sys.modules.items()):
        if name.endswith("test_api") and hasattr(module, "connection_kwargs"):
            port = module.connection_kwargs.get("port")
            if isinstance(port, str):
                module.connection_kwargs["port"] = int(port)
