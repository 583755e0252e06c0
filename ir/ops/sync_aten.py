#!/usr/bin/env python3
"""ir/ops/sync_aten.py: brings ir/ops/ops.txt up to PyTorch's overload table.

    python3 ir/ops/sync_aten.py [../shared/reference/aten_ops.tsv]

aten_ops.tsv is PyTorch's own listing of every ATen and prims overload
(schema, tags, kind), made by PyTorch 2.11. This script is the only way its
data enters the op table, so nothing is copied by hand:

  - an overload the table lacks is appended, in the tsv's order, with the
    schema exactly as PyTorch prints it and PyTorch's tags (op ids are
    positions, so the table only ever grows at the end);
  - every overload PyTorch lists carries its kind as PyTorch classifies it
    (kind=functional, inplace, out or view), which the schema alone does
    not always say (aten::__iand__ is a "view" to PyTorch), and whether
    PyTorch's decomposition table (pt_decomp) and core_aten_decompositions()
    (pt_core_decomp) have a rule for it;
  - an overload the table has keeps its line and its order; PyTorch's tags
    are added to the ones it has. Alloy's own "nondeterministic" (values
    differ between runs: not folded, not compared) stays as it was there:
    PyTorch's "nondeterministic_seeded" marks ops random only for some
    arguments too (scaled_dot_product_attention with dropout_p > 0).

Running it twice changes nothing. The build never reads the tsv: the repo
carries the result, and tests compare the two when ../shared is there.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "ops.txt")

# PyTorch's tag -> the op table's words for it.
TAGS = {
    "core": ["core"],
    "pointwise": ["pointwise"],
    "reduction": ["reduction"],
    "dynamic_output_shape": ["dynamic_output_shape"],
    "data_dependent_output": ["data_dependent_output"],
    "nondeterministic_seeded": ["nondeterministic_seeded"],
    "generated": ["generated"],
    "view_copy": ["view_copy"],
    "inplace_view": ["inplace_view"],
    "pt2_compliant_tag": ["pt2_compliant"],
    "maybe_aliasing_or_mutating": ["maybe_aliasing_or_mutating"],
    "needs_exact_strides": ["needs_exact_strides"],
    "needs_fixed_stride_order": ["needs_fixed_stride_order"],
}

HEADER = ("# Every other ATen and prims overload of PyTorch 2.11, appended by ir/ops/sync_aten.py\n"
          "# from PyTorch's own table (../shared/reference/aten_ops.tsv): schema and tags as PyTorch\n"
          "# prints them. Do not edit by hand; run the script.\n")


def key(schema):
    return schema.split("(", 1)[0]


def words(pytorch_tags):
    out = []
    for t in pytorch_tags.split(","):
        if t and t not in TAGS:
            sys.exit("sync_aten.py: PyTorch tag %r has no op-table word; add it to TAGS and "
                     "to ir/registry.c" % t)
        out += TAGS.get(t, [])
    return out


def table_words(r):
    """PyTorch's kind of the overload, and whether its decomposition table
    (torch._decomp.decomposition_table) and core_aten_decompositions() have
    a rule for it."""
    return (["kind=" + r[5]] + (["pt_decomp"] if r[3] == "1" else [])
            + (["pt_core_decomp"] if r[4] == "1" else []))


def main():
    tsv = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../shared/reference/aten_ops.tsv")
    rows = [l.rstrip("\n").split("\t") for l in open(tsv)]
    if rows[0][:3] != ["name", "schema", "tags"]:
        sys.exit("sync_aten.py: %s does not start with the name/schema/tags header" % tsv)
    pytorch = {key(r[1]): r for r in rows[1:]}

    lines = open(TABLE).read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    known = set()
    out = []
    for line in lines:
        if not line.strip() or line.startswith("#"):
            out.append(line)
            continue
        schema, bar, tags = line.partition(" | ")
        known.add(key(schema))
        r = pytorch.get(key(schema))
        if r:
            have = tags.split()
            add = [w for w in words(r[2]) + table_words(r)
                   if w not in have]
            if add:
                line = schema + " | " + " ".join(have + add)
        out.append(line)

    missing = [r for r in rows[1:] if key(r[1]) not in known]
    if missing and HEADER.split("\n")[0] not in out:
        out += HEADER.rstrip("\n").split("\n")
    for r in missing:
        w = words(r[2])
        # A new op PyTorch calls seeded-random is random for Alloy too.
        if "nondeterministic_seeded" in w:
            w = ["nondeterministic"] + w
        w += table_words(r)
        out.append(r[1] + (" | " + " ".join(w) if w else ""))
    with open(TABLE, "w") as f:
        f.write("\n".join(out) + "\n")
    print("ops.txt: %d overloads appended, %d of PyTorch's %d now listed"
          % (len(missing), len(known) + len(missing) - sum(1 for k in known if k not in pytorch),
             len(rows) - 1))


if __name__ == "__main__":
    main()
