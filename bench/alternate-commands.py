#!/usr/bin/env python3
"""
Before/after comparisons of whole commands (two builds of the CLI, a flag,
a launcher), side by side: each arm is a command line, run ROUNDS times with
the order rotated each round after one warm-up each; prints wall time and
the process's CPU time (user + system, from wait4, so a node process's
threads count) as medians with min-max, and each as a ratio to the first
arm. On a shared machine compare the CPU columns. BENCHMARKS.md section 10.

  python3 bench/alternate-commands.py 20 "node=node -e 0" "help=node bin/ferry.cjs --help"
"""
import os, shlex, statistics, subprocess, sys, time
rounds = int(sys.argv[1]); arms = [a.split("=", 1) for a in sys.argv[2:]]
res = {n: ([], []) for n, _ in arms}
def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(shlex.split(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1000
    if status != 0: sys.exit(f"{cmd} failed: {p.stderr.read().decode()}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000
for n, c in arms: run(c)  # warm-up
for r in range(rounds):
    k = r % len(arms)
    for n, c in arms[k:] + arms[:k]:
        w, cpu = run(c); res[n][0].append(w); res[n][1].append(cpu)
base = arms[0][0]
bw = statistics.median(res[base][0]); bc = statistics.median(res[base][1])
print(f"load {os.getloadavg()[0]:.2f}; {rounds} rounds; medians (min-max); x = ratio to {base}")
for n, _ in arms:
    w, c = res[n]
    sem = statistics.stdev(c) / len(c) ** 0.5
    print(f"{n:28s} wall {statistics.median(w):7.1f} ({min(w):.0f}-{max(w):.0f}) x{statistics.median(w)/bw:.2f}   cpu {statistics.median(c):7.1f} ({min(c):.0f}-{max(c):.0f}) x{statistics.median(c)/bc:.2f}  mean {statistics.mean(c):6.1f}+-{sem:.1f}")
