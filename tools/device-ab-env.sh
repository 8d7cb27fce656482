# Sourced (from the repository root, on the device machine) by the device
# scripts in benchmarks/results/ that time prebuilt libraries against each
# other: `source tools/device-ab-env.sh NAME...` installs the carry
# (.gpu-carry/setup.sh), unpacks .gpu-carry/ab/NAME.so.xz into /tmp/ab/,
# writes $OUT/machine.txt and defines
#   lap WHAT                  - appends "WHAT <seconds since sourcing> s" to $OUT/laps.txt;
#   seconds_left CALL         - the seconds left of a call of CALL seconds, less 5 (for
#                               PROBE_TIMEOUT and SANITIZE_TIMEOUT: timeout 0 would not stop
#                               a step, so check it is positive first);
#   probe NAME ARGS...        - benchmarks/graph_probe.py ARGS on /tmp/ab/NAME.so, lines
#                               prefixed with NAME (PROBE_TIMEOUT seconds, default 60);
#   sanitize NAME TOOL FAMILY - compute-sanitizer TOOL over tools/sanitize-rows.py cuda
#                               FAMILY on NAME (SANITIZE_TIMEOUT, default 280), its
#                               summary to laps.txt, its tail to $OUT/sanitizer-NAME.txt;
#   run_tests NAME SECONDS PYTEST-ARGS...
#                             - pytest (15 workers, paths under $R) on NAME within
#                               SECONDS, its output to $OUT/cuda-pytest-NAME.txt, its
#                               summary line to laps.txt.
export R=$PWD
ab_t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - ab_t0 )) s" | tee -a "$OUT/laps.txt"; }
seconds_left() { echo $(( $1 - 5 - ($(date +%s) - ab_t0) )); }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for ab_name in "$@"; do xz -dc ".gpu-carry/ab/$ab_name.so.xz" > "/tmp/ab/$ab_name.so"; done
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt" 2>&1
probe() {
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout "${PROBE_TIMEOUT:-60}" python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 |
    sed "s/^/$side /")
}
sanitize() {
  local side=$1 tool=$2 family=$3
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout "${SANITIZE_TIMEOUT:-280}" compute-sanitizer --tool "$tool" \
    --error-exitcode 9 python3 "$R/tools/sanitize-rows.py" cuda "$family" > "/tmp/sanitizer-$tool.log" 2>&1)
  echo "$side $tool rc=$?: $(tail -n 30 "/tmp/sanitizer-$tool.log" | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" |
    tee -a "$OUT/laps.txt"
  tail -n 40 "/tmp/sanitizer-$tool.log" >> "$OUT/sanitizer-$side.txt"
}
run_tests() {
  local side=$1 seconds=$2; shift 2
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so OMP_WAIT_POLICY=PASSIVE timeout "$seconds" python3 -m pytest -q -rfE \
    -p no:cacheprovider -n 15 "$@" > "$OUT/cuda-pytest-$side.txt" 2>&1)
  echo "$side tests rc=$?: $(grep -E '(passed|failed).* in ' "$OUT/cuda-pytest-$side.txt" | tail -n 1)" | tee -a "$OUT/laps.txt"
}
