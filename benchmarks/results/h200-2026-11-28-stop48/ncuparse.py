import re, sys
keys=['gpu__time_duration.sum','dram__throughput.avg.pct_of_peak_sustained_elapsed','smsp__issue_active.avg.pct_of_peak_sustained_active','sm__warps_active.avg.pct_of_peak_sustained_active','smsp__inst_executed.sum','launch__registers_per_thread','smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio','smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio','smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio','smsp__average_warps_issue_stalled_wait_per_issue_active.ratio','smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio','dram__bytes_read.sum','dram__bytes_write.sum']
short=['us','dram%','issue%','warps%','Minst','reg','barrier','longsb','lgthr','wait','mathpt','rdMB','wrMB']
for f in sys.argv[1:]:
    print('==',f.split('/')[-1])
    rows=[]; cur=None
    for line in open(f):
        m=re.match(r"^\s+(.*?) \((\d+), \d+, \d+\)x\((\d+), (\d+), \d+\), Context",line)
        if m:
            name=m.group(1); name=re.sub(r"\(unnamed>::Rows.*","",name); name=name.replace('void ','').replace('unnamed>::','').replace('__nv_bfloat16','bf16')
            cur={'k':name,'g':m.group(2),'b':m.group(3)+('x'+m.group(4) if m.group(4)!='1' else '')}; rows.append(cur); continue
        m=re.match(r"\s+(\S+)\s+(\S+)?\s+([\d.,]+)\s*$",line)
        if m and cur is not None: cur[m.group(1)]=m.group(3).replace(',','')
    print('%-58s %6s %6s '%('kernel','grid','blk')+' '.join('%7s'%s for s in short))
    for r in rows:
        v=[r.get(k,'-') for k in keys]
        v[4]='%.1f'%(float(v[4])/1e6) if v[4]!='-' else '-'
        print('%-58s %6s %6s '%(r['k'][:58],r['g'],r['b'])+' '.join('%7s'%x[:7] for x in v))
