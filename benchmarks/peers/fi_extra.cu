// FlashInfer kernels that ../shared/peers/fi_peer.cu does not wrap (the Gemma norms and the fp8-quantising
// norms), behind the same kind of plain C ABI, so that `python -m hetkern.bench` can time hetkern's
// gemma_rmsnorm, gemma_fused_add_rmsnorm, rmsnorm_quant, fused_add_rmsnorm_quant and layernorm_quant
// against FlashInfer's own CUDA kernels. bfloat16 input, contiguous rows; the quant ops write
// float8_e4m3fn and take FlashInfer's float32 scale pointer. Built by ./build (here, with nvcc) into
// .gpu-carry/peers/libfi_extra.so; python/hetkern/bench/peers.py loads it next to libfi_peer.so.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <flashinfer/norm.cuh>

using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

extern "C" {
int fi_gemma_rmsnorm_bf16(void* x, void* w, void* out, unsigned rows, unsigned d, float eps, void* s) {
  return flashinfer::norm::GemmaRMSNorm<bf16>((bf16*)x, (bf16*)w, (bf16*)out, rows, d, d, d, eps,
                                              false, (cudaStream_t)s);
}
int fi_gemma_fused_add_rmsnorm_bf16(void* x, void* r, void* w, unsigned rows, unsigned d, float eps,
                                    void* s) {
  return flashinfer::norm::GemmaFusedAddRMSNorm<bf16>((bf16*)x, (bf16*)r, (bf16*)w, rows, d, d, d,
                                                      eps, false, (cudaStream_t)s);
}
int fi_rmsnorm_quant_bf16(void* out, void* x, void* w, void* scale, unsigned rows, unsigned d,
                          float eps, void* s) {
  return flashinfer::norm::RMSNormQuant<bf16, fp8>((bf16*)x, (bf16*)w, (fp8*)out, rows, d, d, d,
                                                   (float*)scale, eps, false, (cudaStream_t)s);
}
int fi_fused_add_rmsnorm_quant_bf16(void* out, void* x, void* r, void* w, void* scale, unsigned rows,
                                    unsigned d, float eps, void* s) {
  return flashinfer::norm::FusedAddRMSNormQuant<bf16, fp8>((bf16*)x, (bf16*)r, (bf16*)w, (fp8*)out,
                                                           rows, d, d, d, d, (float*)scale, eps, false,
                                                           (cudaStream_t)s);
}
int fi_layernorm_quant_bf16(void* out, void* x, void* w, void* b, void* scale, unsigned rows,
                            unsigned d, float eps, void* s) {
  auto err = flashinfer::norm::LayerNormQuant<bf16, bf16, fp8>(
      (bf16*)x, (bf16*)w, (bf16*)b, (fp8*)out, (float*)scale, rows, d, eps, (cudaStream_t)s);
  return err != cudaSuccess ? (int)err : (int)cudaGetLastError();
}
}
