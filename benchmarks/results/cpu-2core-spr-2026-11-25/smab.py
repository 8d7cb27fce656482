import os, sys, subprocess, json
libs = sys.argv[1].split(","); threads = sys.argv[2]
code = r'''
import time, torch, hetkern, json, sys
torch.set_num_threads(int(sys.argv[1]))
res = {}
SHAPES = ((4096, 64), (1024, 1024), (16384, 1024), (4096, 4096), (64, 32000), (4, 4194304))
for dt in ("bfloat16", "float16"):
  for shape in SHAPES:
    x = torch.randn(*shape).to(getattr(torch, dt)); o = torch.empty_like(x)
    for opn in ("softmax", "log_softmax"):
      op = getattr(hetkern, opn)
      for _ in range(3): op(x, out=o)
      reps = max(5, int(2e7 // x.numel()))
      ts = []
      for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps): op(x, out=o)
        ts.append((time.perf_counter() - t0) / reps)
      ts.sort(); res[f"{opn} {dt} {shape[0]}x{shape[1]}"] = ts[3]
print(json.dumps(res))
'''
allres = {l: [] for l in libs}
for rnd in range(3):
    for l in libs:
        env = dict(os.environ, HETKERN_LIBRARY=l, PYTHONPATH="/work/main/python", OMP_NUM_THREADS=threads)
        out = subprocess.run(["/work/main/.venv/bin/python", "-c", code, threads], env=env, capture_output=True, text=True)
        if out.returncode: print(out.stderr); sys.exit(1)
        allres[l].append(json.loads(out.stdout.strip().splitlines()[-1]))
keys = allres[libs[0]][0].keys()
print(f"{'case':32s}" + "".join(f"{os.path.basename(l):>14s}" for l in libs))
for k in keys:
    row = [sorted(r[k] for r in allres[l])[1] * 1e6 for l in libs]
    print(f"{k:32s}" + "".join(f"{v:14.1f}" for v in row) + "   " + " ".join(f"{row[0]/v:5.2f}" for v in row[1:]))
