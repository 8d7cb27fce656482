# Per (op, dtype, shape, threads) minimum over reps of hetkern µs per library, torch and copy minima; usage: summarize.py variants.txt LIB1,LIB2,... (the last is the base).
import re,sys,collections
rows=collections.OrderedDict()
for line in open(sys.argv[1]):
    m=re.match(r'(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)t\s+(.*)',line)
    if not m: continue
    lib,op,dt,shape,th,rest=m.groups()
    cells=dict(re.findall(r'(?<![-\w])(\w+)=\s*([\d.]+)',rest))
    key=(op,dt,shape,th)
    r=rows.setdefault(key,{})
    for k,v in cells.items():
        if k in('hetkern',):
            r[lib]=min(r.get(lib,1e18),float(v))
        elif k in ('torch','copy','numpy'):
            r[k]=min(r.get(k,1e18),float(v))
libs=[l for l in sys.argv[2].split(',')]
print('op dtype shape threads | '+' '.join(libs)+' | torch copy | tree/a  of-copy(tree) x-torch(tree)')
for (op,dt,shape,th),r in rows.items():
    cells=' '.join(f"{r.get(l,float('nan')):8.1f}" for l in libs)
    t=r.get('tree'); a=r.get(libs[-1])
    print(f"{op:12} {dt:9} {shape:10} {th:>2}t | {cells} | {r.get('torch',0):8.1f} {r.get('copy',0):7.1f} | {a/t:5.2f} {r.get('copy',0)/t:5.2f} {r.get('torch',0)/t:5.2f}")
