#!/usr/bin/env python3
"""bench/trace_summary.py: sums the ranges of a Chrome trace written by
`alloy run --trace FILE` by track and name, the largest first: with the cuda
backend, its "gpu" track is a per-kernel profile.

    python3 bench/trace_summary.py trace.json [RUNS]

RUNS divides the sums (the runs the trace holds: --repeat N).
"""
import json, sys, collections
d = json.load(open(sys.argv[1]))
names = {}
for e in d['traceEvents']:
    if e.get('ph') == 'M' and e['name'] == 'thread_name': names[(e['pid'], e['tid'])] = e['args']['name']
tot = collections.defaultdict(lambda: [0.0, 0])
for e in d['traceEvents']:
    if e.get('ph') != 'X': continue
    k = (names.get((e['pid'], e['tid']), str(e['tid'])), e['name'])
    tot[k][0] += float(e['dur']); tot[k][1] += 1
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
tracks = collections.defaultdict(float)
for (t, n), (us, c) in tot.items(): tracks[t] += us
for t, us in sorted(tracks.items(), key=lambda x: -x[1]): print(f'track {t}: {us/1000/runs:.3f} ms per run')
for (t, n), (us, c) in sorted(tot.items(), key=lambda x: -x[1][0])[:40]:
    print(f'{us/1000/runs:9.3f} ms  {c//runs:5d}x  {t:10s} {n}')
