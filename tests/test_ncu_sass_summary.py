"""tools/ncu-sass-summary on a small report in Nsight Compute's CSV layout."""

import csv
import pathlib
import subprocess
import sys

TOOL = pathlib.Path(__file__).resolve().parent.parent / "tools" / "ncu-sass-summary"
HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
          "Instructions Executed", "stall_long_sb", "stall_barrier", "stall_math",
          "stall_long_sb (Not Issued)"]


def write_report(path):
    rows = [
        ["Kernel Name", "RowKernel<float>(float *)", ""],
        HEADER,
        ["0x10", "      LDG.E.128 R4, desc[UR4][R2.64]", "2", "2", "1,024", "0", "0", "2", "0"],
        ["0x20", "@!P0  FADD R8, R4, R5", "60", "60", "1,024", "60", "0", "0", "60"],
        ["0x30", "      BAR.SYNC.DEFER_BLOCKING 0x0", "30", "30", "1,024", "0", "30", "0", "0"],
        ["0x40", "      FADD R9, R8, R6", "8", "8", "1,024", "0", "0", "8", "0"],
        ["0x50", "      EXIT", "0", "0", "0", "0", "0", "0", "0"],
        # a second launch of the same kernel: only the first is summarised
        ["Kernel Name", "RowKernel<float>(float *)", ""],
        HEADER,
        ["0x10", "      FADD R8, R4, R5", "999", "999", "9", "999", "0", "0", "0"],
        ["Kernel Name", "peer_kernel", ""],
        HEADER,
        ["0x10", "      FMUL R1, R2, R3", "5", "5", "300", "0", "0", "5", "0"],
        ["0x20", "      FMUL R1, R1, R3", "5", "5", "100", "0", "0", "5", "0"],
    ]
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)


def test_summarises_each_kernel_once(tmp_path):
    report = tmp_path / "sass.csv"
    write_report(report)
    out = subprocess.run([sys.executable, str(TOOL), str(report), "--top", "2"], capture_output=True,
                         text=True, check=True).stdout
    first, peer = out.split("\n\n")[:2]
    lines = first.splitlines()
    assert lines[0] == "RowKernel<float>(float *)"
    assert "executed 4,096 warp instructions; 4 instructions ran 1,024 times each" in lines[1]
    assert "mix: FADD 50.0%, LDG 25.0%, BAR 25.0%" in lines[2]
    # 100 samples: 60 long_sb, 30 barrier, 10 math; the second launch's 999 are not counted
    assert "stall samples 100: long_sb 60.0%, barrier 30.0%, math 10.0%" in lines[3]
    assert lines[4].split()[:3] == ["60.0%", "@!P0", "FADD"] and lines[4].endswith("long_sb=60")
    assert lines[5].split()[:2] == ["30.0%", "BAR.SYNC.DEFER_BLOCKING"] and lines[5].endswith("barrier=30")
    assert len(lines) == 6  # --top 2
    assert peer.splitlines()[0] == "peer_kernel"
    assert "executed 400 warp instructions" in peer and "mix: FMUL 100.0%" in peer
