"""The Python example of the top-level README.md works as written, from
the repository's root."""
import os
import re
import subprocess
import sys
import unittest

from _util import PKG, REPO, np


def readme_example():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    block = re.search(r"<!-- python: begin.*?-->(.*?)<!-- python: end -->", text, re.S)
    if not block:
        return None
    code = re.search(r"```python\n(.*?)```", block.group(1), re.S)
    return code.group(1) if code else None


@unittest.skipUnless(np is not None, "no numpy")
class Readme(unittest.TestCase):
    def test_example_runs_as_written(self):
        code = readme_example()
        self.assertIsNotNone(code, "README.md has no python block between its markers")
        self.assertLessEqual(len(code.strip().splitlines()), 5, "the example is five lines")
        env = dict(os.environ)
        env["PYTHONPATH"] = PKG + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(lines[-1], "(2, 10)")
        self.assertIn("TensorInfo(name='x', dtype='float32', shape=('s0', 784))", lines[0])


if __name__ == "__main__":
    unittest.main()
