# Runs python -m hetkern.bench with activation tables off (the computing kernels: the "before" path).
import runpy, sys, hetkern
hetkern._lib.module._set_activation_table_min_elements(1 << 62)
sys.argv = ["hetkern.bench"] + sys.argv[1:]
runpy.run_module("hetkern.bench", run_name="__main__")
