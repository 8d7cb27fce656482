"""hetkern in a few lines: the same call on a NumPy array, a CPU torch tensor
and (where a GPU is present) a CUDA tensor."""

import numpy as np

import hetkern

print(f"hetkern {hetkern.__version__}: CPU target {hetkern.cpu_target()} "
      f"(available: {', '.join(hetkern.available_cpu_targets())}), "
      f"CUDA {'built for sm_' + ', sm_'.join(hetkern.cuda_archs()) if hetkern.built_with_cuda() else 'not built'}")

x = np.arange(8, dtype=np.float32)
print("numpy      ", hetkern.scale(x, 2.0))

try:
    import torch
except ImportError:
    torch = None
    print("torch is not installed: skipping the torch examples")

if torch is not None:
    t = torch.arange(8, dtype=torch.bfloat16)
    print("torch cpu  ", hetkern.scale(t, 2.0))
    if torch.cuda.is_available() and hetkern.built_with_cuda():
        print("torch cuda ", hetkern.scale(torch.ones(8, device="cuda"), 2.0))
    else:
        print("no CUDA GPU here (or a CPU-only build): skipping the CUDA example")
