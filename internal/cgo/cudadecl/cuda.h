/*
 * cuda.h, trtbuild's own: the part of the CUDA driver API that the TensorRT shim calls, declared
 * with the types, values and versioned symbol names of CUDA's cuda.h (12.x and 13.x alike),
 * which is NVIDIA's and is not part of trtbuild. Nothing here is linked: the worker loads the
 * driver (libcuda.so.1, nvcuda.dll) at run time and resolves these functions by name
 * (trtb_loader.cpp); shim/tensorrt_entry.cpp checks the loader's signatures and symbol names
 * against these declarations.
 */
#ifndef TRTBUILD_CUDA_H
#define TRTBUILD_CUDA_H

#define CUDA_VERSION 13000
#ifdef _WIN32
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif

/* cuda.h maps these names to the versioned symbols the driver exports. */
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuStreamDestroy cuStreamDestroy_v2

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101
} CUresult;

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;

typedef enum CUstream_flags_enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 } CUstream_flags;

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal);
CUresult CUDAAPI cuDeviceGetCount(int *count);
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx);
CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult CUDAAPI cuStreamDestroy(CUstream hStream);

#ifdef __cplusplus
}
#endif

#endif /* TRTBUILD_CUDA_H */
