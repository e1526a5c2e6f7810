#!/usr/bin/env python3
"""Normalise a `trtbuild --progress json` event stream for comparing two runs of one build (Linux
and Windows): times, durations, memory figures, thread numbers, the command line and path
spellings are dropped or made neutral; everything else (every event, in order, with its ids,
parents, names, step counts and results) is kept. Usage: events.py FILE > normalised."""
import json
import sys

DROP = {"t", "duration", "peak_rss_bytes", "thread", "command", "trtbuild_version"}


def neutral(value):
    if isinstance(value, str):
        return value.replace("\\", "/")
    if isinstance(value, dict):
        return {k: neutral(v) for k, v in sorted(value.items()) if k not in DROP}
    if isinstance(value, list):
        return [neutral(v) for v in value]
    return value


with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        line = line.strip()
        if line:
            print(json.dumps(neutral(json.loads(line)), sort_keys=True))
