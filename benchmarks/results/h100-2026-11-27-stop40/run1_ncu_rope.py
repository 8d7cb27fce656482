import sys, torch
from hetkern.bench import rope
for tokens in map(int, sys.argv[1].split(",")):
    c = rope._rope(tokens, "bfloat16", "cuda")
    for name in ("hetkern", "liger", "hetkern", "liger"):
        for _ in range(3):
            c[name]()
        torch.cuda.synchronize()
