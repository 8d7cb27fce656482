from pathlib import Path

FLASHINFER_CSRC_DIR = Path("/nonexistent/flashinfer/csrc")  # no FlashInfer sources here
