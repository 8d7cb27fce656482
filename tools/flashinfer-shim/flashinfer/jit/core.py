def gen_jit_spec(*args, **kwargs):
    raise NotImplementedError("hetkern has no FlashInfer JIT modules")
