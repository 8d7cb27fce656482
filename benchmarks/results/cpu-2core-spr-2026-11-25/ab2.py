import os, sys, subprocess, statistics
libs = sys.argv[1].split(","); threads = sys.argv[2]; rounds = int(sys.argv[3])
code = r'''
import time, torch, hetkern, sys, json
torch.set_num_threads(int(sys.argv[1]))
res = {}
for dt in ("float32", "bfloat16", "float16"):
  for shape in ((4096, 64), (4096, 128), (4096, 256), (1024, 512), (1024, 1024)):
    x = torch.randn(*shape).to(getattr(torch, dt)); o = torch.empty_like(x)
    for opn in ("log_softmax",):
      op = getattr(hetkern, opn)
      for _ in range(50): op(x, out=o)
      ts = []
      for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(200): op(x, out=o)
        ts.append((time.perf_counter() - t0) / 200)
      ts.sort(); res[f"{opn} {dt} {shape[0]}x{shape[1]}"] = ts[4]
print(json.dumps(res))
'''
import json
allres = {l: [] for l in libs}
for rnd in range(rounds):
    for l in libs:
        env = dict(os.environ, HETKERN_LIBRARY=l, PYTHONPATH="/work/main/python", OMP_NUM_THREADS=threads)
        out = subprocess.run(["/work/main/.venv/bin/python", "-c", code, threads], env=env, capture_output=True, text=True)
        if out.returncode: print(out.stderr); sys.exit(1)
        allres[l].append(json.loads(out.stdout.strip().splitlines()[-1]))
keys = allres[libs[0]][0].keys()
print(f"{'case':32s}" + "".join(f"{os.path.basename(l):>14s}" for l in libs))
for k in keys:
    row = [statistics.median(r[k] for r in allres[l]) * 1e6 for l in libs]
    print(f"{k:32s}" + "".join(f"{v:14.1f}" for v in row) + "   " + " ".join(f"{row[0]/v:5.2f}" for v in row[1:]))
