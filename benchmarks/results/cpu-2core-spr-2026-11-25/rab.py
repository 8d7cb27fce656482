import os, sys, subprocess, statistics, json
libs = sys.argv[1].split(","); threads = sys.argv[2]; rounds = int(sys.argv[3])
code = r'''
import time, torch, hetkern, sys, json
torch.set_num_threads(int(sys.argv[1]))
res = {}
DTS = ("bfloat16",); NS = (1 << 20, 1 << 22,)
for dt in DTS:
  for n in NS:
    for rows in (True, False):
      x = torch.randn(n).to(getattr(torch, dt)); y = torch.randn(n).to(x.dtype)
      if rows: x = x.view(-1, 1024); y = y.view(-1, 1024)
      ax = -1 if rows else None
      for op in ("norm", "sum", "dot", "max"):
        f = (lambda: hetkern.dot(x, y, axis=ax)) if op == "dot" else (lambda: getattr(hetkern, op)(x, axis=ax))
        for _ in range(20): f()
        reps = max(20, int(4e7 // n))
        ts = []
        for _ in range(7):
          t0 = time.perf_counter()
          for _ in range(reps): f()
          ts.append((time.perf_counter() - t0) / reps)
        ts.sort(); res[f"{op}{'_rows' if rows else ''} {dt} {n >> 10}K"] = ts[3]
print(json.dumps(res))
'''
allres = {l: [] for l in libs}
for rnd in range(rounds):
    for l in libs:
        env = dict(os.environ, HETKERN_LIBRARY=l, PYTHONPATH="/work/main/python", OMP_NUM_THREADS=threads)
        out = subprocess.run(["/work/main/.venv/bin/python", "-c", code, threads], env=env, capture_output=True, text=True)
        if out.returncode: print(out.stderr); sys.exit(1)
        allres[l].append(json.loads(out.stdout.strip().splitlines()[-1]))
keys = allres[libs[0]][0].keys()
print(f"{'case':28s}" + "".join(f"{os.path.basename(l):>12s}" for l in libs))
for k in keys:
    row = [statistics.median(r[k] for r in allres[l]) * 1e6 for l in libs]
    print(f"{k:28s}" + "".join(f"{v:12.1f}" for v in row) + "   " + " ".join(f"{row[0]/v:5.2f}" for v in row[1:]))
