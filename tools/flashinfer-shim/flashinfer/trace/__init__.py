"""The one trace helper FlashInfer's norm tests use: outputs equal to the reference
within FlashInfer's default tolerance for their dtype (0.1 for fp8, 1e-2 bfloat16,
1e-3 float16, 1e-5 float32), allowing `max_mismatch_pct` percent of elements off."""
import torch

_TOLERANCE = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5, torch.float64: 1e-7}


def default_check(reference, actual, *, rtol=None, atol=None, max_mismatch_pct=0.0, min_cos_sim=None):
    for ref, got in zip(reference, actual, strict=True):
        if ref.shape != got.shape:
            return False
        if ref.numel() == 0:
            continue
        tol = _TOLERANCE.get(got.dtype, 1e-1 if "float8" in str(got.dtype) else 0.0)
        close = torch.isclose(got.float(), ref.float(), rtol=tol if rtol is None else rtol,
                              atol=tol if atol is None else atol)
        if 100.0 * (1.0 - close.float().mean().item()) > max_mismatch_pct:
            return False
        if min_cos_sim is not None:
            a, b = got.float().flatten(), ref.float().flatten()
            if torch.nn.functional.cosine_similarity(a, b, dim=0).item() < min_cos_sim:
                return False
    return True
