"""alloy.backends() and where the library and plugins are found."""
import os
import subprocess
import sys
import unittest

from _util import PKG, alloy


class Backends(unittest.TestCase):
    def test_ref_is_there_and_last(self):
        rows = alloy.backends()
        self.assertTrue(rows)
        ref = rows[-1]
        self.assertEqual(ref.name, "ref")
        self.assertTrue(ref.ok)
        self.assertEqual(ref.status, "ok")
        self.assertEqual(ref.devices, ["cpu0 (cpu)"])
        self.assertRegex(ref.version, r"^\d+\.\d+\.\d+$")
        self.assertRegex(ref.abi, r"^1\.\d+$")

    def test_rows_are_complete(self):
        for b in alloy.backends():
            self.assertIsInstance(b, alloy.Backend)
            self.assertTrue(b.name)
            self.assertTrue(b.status == "ok" or b.status.startswith(("refused", "no device")),
                            b.status)
            self.assertIsInstance(b.devices, list)

    def test_plugins_beside_the_library(self):
        """The lib/alloy folder beside liballoy.so is searched, as `alloy
        run` searches ../lib/alloy beside itself."""
        folder = os.path.join(os.path.dirname(alloy.library_path()), "alloy")
        if not os.path.isdir(folder):
            self.skipTest("no lib/alloy folder beside %s" % alloy.library_path())
        plugins = sorted(f[len("liballoy-"):-3] for f in os.listdir(folder)
                         if f.startswith("liballoy-") and f.endswith(".so"))
        names = [b.name for b in alloy.backends()]
        for p in plugins:
            self.assertIn(p, names)

    def test_alloy_backends_sets_the_order(self):
        code = "import alloy; print(','.join(b.name for b in alloy.backends()))"
        env = dict(os.environ, ALLOY_BACKENDS="ref", PYTHONPATH=PKG)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        self.assertEqual(out.split(",")[-1], "ref")

    def test_library_not_found(self):
        code = "import alloy\ntry:\n  alloy.backends()\nexcept alloy.LibraryNotFound as e:\n  print(e)"
        env = dict(os.environ, ALLOY_LIBRARY="/nonexistent/liballoy.so", PYTHONPATH=PKG)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        self.assertIn("liballoy.so not found; looked at: /nonexistent/liballoy.so", out)


if __name__ == "__main__":
    unittest.main()
