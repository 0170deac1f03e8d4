#!/usr/bin/env python3
"""Seconds from exec to the first generated token on stdout for a warm `dragoman-cli generate` (the process's
exit, some library teardown later, is not part of it).   first_token.py CLI MODEL IDS"""
import subprocess
import sys
import time

cli, model, ids = sys.argv[1:4]
subprocess.run([cli, "generate", "--model", model, "--ids", ids, "--max-new-tokens", "1", "--raw"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # warm the page cache
start = time.time()
child = subprocess.Popen([cli, "generate", "--model", model, "--ids", ids, "--max-new-tokens", "1", "--raw"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
first = child.stdout.read(1)
elapsed = time.time() - start
child.stdout.read()
if child.wait() != 0 or not first:
    sys.exit("generate failed")
print(elapsed)
