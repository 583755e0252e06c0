"""Runs the Python package's tests and ends with the line the project's
suites end with: "N passed, N failed, N skipped" (tests/run_suites.sh adds
the first two up). A skipped test prints "skipped: <reason>" and is never
counted as passed.

usage: python3 sdk/python/tests/run.py [-k NAME_PART] [--only MODULE]...
(plain `python3 -m unittest discover -s sdk/python/tests` runs them too)
"""
import argparse
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.passed = 0

    def addSuccess(self, test):
        self.passed += 1
        print("%s: ok" % test.id(), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        print("FAIL %s\n%s" % (test.id(), self._exc_info_to_string(err, test)), flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print("ERROR %s\n%s" % (test.id(), self._exc_info_to_string(err, test)), flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print("%s: skipped: %s" % (test.id(), reason), flush=True)

    def addSubTest(self, test, subtest, err):
        if err is not None:  # a failed subtest fails its test once
            super().addSubTest(test, subtest, err)
            print("FAIL %s\n%s" % (subtest.id(), self._exc_info_to_string(err, test)), flush=True)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.passed += 1

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        print("FAIL %s: unexpected success" % test.id(), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", action="append", default=[])
    ap.add_argument("--only", action="append", default=[])
    a = ap.parse_args()
    import _util
    print("alloy package: %s; library: %s; python %s; golden: %s" % (
        os.path.dirname(_util.alloy.__file__), _util.alloy.library_path(),
        sys.version.split()[0], _util.GOLDEN if os.path.isdir(_util.MODELS) else "missing"))
    loader = unittest.TestLoader()
    if a.k:
        loader.testNamePatterns = ["*%s*" % k for k in a.k]
    if a.only:
        suite = unittest.TestSuite(loader.loadTestsFromName(m) for m in a.only)
    else:
        suite = loader.discover(HERE, pattern="test*.py", top_level_dir=HERE)
    r = Result()
    t0 = time.time()
    suite.run(r)
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    print("(%.1f s)" % (time.time() - t0))
    print("%d passed, %d failed, %d skipped" % (r.passed, failed, len(r.skipped)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
