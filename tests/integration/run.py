# SPDX-License-Identifier: Apache-2.0
"""Runs every integration test and prints "N passed, N failed"."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py")
if len(sys.argv) > 1:   # optional name filter
    suite = unittest.TestSuite(t for s in suite for c in s for t in c if sys.argv[1] in t.id())
# A home of the run's own: what profd keeps under ~/.cache (symbolize's
# inflated copies, debuginfod's downloads) stays out of the user's home.
home = tempfile.mkdtemp(prefix="profd-it-home-")
os.environ["HOME"] = home
try:
    result = unittest.TextTestRunner(verbosity=2).run(suite)
finally:
    shutil.rmtree(home, ignore_errors=True)
failed = len(result.failures) + len(result.errors)
skipped = len(result.skipped)
passed = result.testsRun - failed - skipped
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed or result.testsRun == 0 else 0)
