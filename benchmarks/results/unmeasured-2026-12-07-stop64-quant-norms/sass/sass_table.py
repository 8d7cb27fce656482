"""Per-kernel SASS figures of the quant norms' large-call kernels, for each
library's `cuobjdump -sass` listing given: total instructions, where the
first row load is, and each output pack's instructions (between stores).

    python3 sass_table.py A.sass B.sass C.sass
"""
import re
import sys

KERNELS = {
 'layernorm_quant bf16 x16384 (512 thr x 4 packs)': r'LayerNormKernelI13__nv_bfloat16S3_Li8ELi4EhLNS1_7RowGridE1ELi1ELb0E',
 'layernorm_quant bf16 x4096 split (128 thr x 4 packs)': r'LayerNormKernelI13__nv_bfloat16S3_Li8ELi4EhLNS1_7RowGridE1ELi2ELb0E',
 'layernorm_quant f32 x4096 (256 thr x 4 packs)': r'LayerNormKernelIffLi4ELi4EhLNS1_7RowGridE1ELi1ELb0E',
 'rmsnorm_quant bf16 x16384 (512 thr x 4 packs)': r'RMSNormKernelI13__nv_bfloat16S3_Li8ELi4ELb0ELb0EhLNS1_7RowGridE1ELi1E',
 'fused_add_rmsnorm_quant bf16 x16384 (512 thr x 4 packs)': r'RMSNormKernelI13__nv_bfloat16S3_Li8ELi4ELb1ELb0EhLNS1_7RowGridE1ELi1E',
}
def kernel(path, pat):
    out=[];on=False
    for l in open(path):
        if 'Function : ' in l:
            if on: break
            on = re.search(pat, l) is not None
        elif on:
            m=re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', l)
            if m: out.append(m.group(2).strip())
    return out
def packs(ins):
    """Each output pack's code (from the previous store or barrier to its
    store). A pack that holds both ways of division (main) shows its size
    and, after a colon, the instructions that run on the reciprocal way: its
    size less the float64 way's block (from the branch that skips it to the
    branch that ends it). A pack of one way: its size, tagged w for the
    float64 way."""
    segs=[];prev=0
    for i,b in enumerate(ins):
        if 'STG' in b or 'BAR.SYNC' in b:
            op = b.split()[0] if not b.startswith('@') else b.split()[1]
            if op.startswith('STG'):
                seg = ins[prev+1:i+1]
                dmul = [k for k, x in enumerate(seg) if 'DMUL' in x]
                branches = [k for k, x in enumerate(seg) if 'BRA' in x]
                before = [k for k in branches if dmul and k < dmul[0]]
                after = [k for k in branches if dmul and k > dmul[-1]]
                if not dmul:
                    segs.append(f"{len(seg)}")
                elif before and after:  # both ways
                    segs.append(f"{len(seg)}:{len(seg) - (after[0] - before[-1])}")
                else:
                    segs.append(f"{len(seg)}w")
            prev=i
    return ' '.join(segs)

def first_row_load(ins):
    """Index of the kernel's first 128-bit load (a row pack's)."""
    for i,b in enumerate(ins):
        if 'LDG.E.128' in b: return i
    return None
libs = sys.argv[1:]
for name, pat in KERNELS.items():
    print(f'{name}')
    for lib in libs:
        ins = kernel(lib, pat)
        print(f'  {lib:10s} {len(ins):5d} instructions; first row load at #{first_row_load(ins)}; output code between stores: {packs(ins)}')
