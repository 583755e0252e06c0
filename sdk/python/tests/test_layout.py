"""The ctypes structs match the C layouts that tests/abi_layout.txt pins."""
import ctypes
import os
import unittest

from _util import REPO, alloy  # noqa: F401
from alloy import _lib

STRUCTS = {"alloy_host_tensor": _lib.HostTensor, "alloy_runtime_options": _lib.RuntimeOptions,
           "alloy_backend_info": _lib.BackendInfo, "alloy_program_options": _lib.ProgramOptions}


def read_layout():
    """{struct: ({field: (offset, size)}, [sizes: the 1.0 sizeof, size@1.x])}"""
    rows = {name: ({}, []) for name in STRUCTS}
    with open(os.path.join(REPO, "tests", "abi_layout.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue
            name, _, field = parts[0].partition(".")
            if name not in STRUCTS:
                continue
            if field:
                rows[name][0][field] = (int(parts[1]), int(parts[2]))
            elif parts[1] == "sizeof" or parts[1].startswith("size@"):
                rows[name][1].append(int(parts[2]))
    return rows


class Layout(unittest.TestCase):
    def test_fields(self):
        for name, (fields, _) in read_layout().items():
            cls = STRUCTS[name]
            self.assertTrue(fields, "tests/abi_layout.txt lists no field of %s" % name)
            for field, (offset, size) in fields.items():
                self.assertTrue(hasattr(cls, field), "%s.%s: not in the ctypes struct" % (name, field))
                self.assertEqual(getattr(cls, field).offset, offset, "%s.%s offset" % (name, field))
                self.assertEqual(getattr(cls, field).size, size, "%s.%s size" % (name, field))

    def test_struct_size_is_the_latest(self):
        for name, (_, sizes) in read_layout().items():
            cls = STRUCTS[name]
            self.assertTrue(sizes, name)
            # struct_size set by the package: ALLOY_STRUCT_SIZE(type, last field)
            self.assertEqual(_lib.struct_size(cls), max(sizes), name)
            self.assertEqual(ctypes.sizeof(cls), max(sizes), name)


if __name__ == "__main__":
    unittest.main()
