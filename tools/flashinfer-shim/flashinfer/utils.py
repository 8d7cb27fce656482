"""The device queries FlashInfer's tests use."""
import torch


def get_compute_capability(device):
    return torch.cuda.get_device_capability(device)


def device_support_pdl(device):
    return get_compute_capability(device)[0] >= 9


def has_flashinfer_jit_cache():
    return True  # nothing to build: the tests' JIT warm-up fixture stays off
