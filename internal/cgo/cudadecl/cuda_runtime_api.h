/*
 * cuda_runtime_api.h, trtbuild's own: the few names of the CUDA runtime that TensorRT's public
 * headers (third_party/tensorrt) and the TensorRT shim use, declared with the types and values
 * of CUDA's header, which is NVIDIA's and is not part of trtbuild. Nothing here is defined or
 * linked: trtbuild loads no CUDA runtime (TensorRT links it statically). The numbers were read
 * from CUDA 13.0's header; the shim checks the ones it passes against the driver API's
 * (shim/tensorrt_entry.cpp).
 */
#ifndef TRTBUILD_CUDA_RUNTIME_API_H
#define TRTBUILD_CUDA_RUNTIME_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's opaque handles: the driver's CUstream is the same type (cuda.h). */
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

/* The CUDA runtime the declarations describe (major*1000 + minor*10): which CUDA's names pip's
 * CUDA runtime wheels carry (internal/trt). */
#define CUDART_VERSION 13000

#ifdef __cplusplus
}
#endif

#endif /* TRTBUILD_CUDA_RUNTIME_API_H */
