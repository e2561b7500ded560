/* A stand-in for the CUDA driver (libcuda.so.1) that has no GPU behind it,
 * for testing the GPU bundle's runner where no GPU is: memory is host memory,
 * copies are memcpy, streams and events only keep time, modules load, and
 * every kernel launch fails with CUDA_ERROR_NOT_SUPPORTED. So a call stops at
 * its first kernel: a checked call raises DeviceError, a direct one aborts,
 * which is what the runner must survive; no result of a kernel can pass. Built by test_gpu_bundle.py. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum { OK = 0, NOT_SUPPORTED = 801 };

static int token; /* what contexts, modules, functions, streams point at */

CUresult cuInit(unsigned flags) { (void)flags; return OK; }
CUresult cuDriverGetVersion(int *version) { *version = 13000; return OK; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return OK; }
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  strncpy(name, "fake CUDA driver (no GPU)", (size_t)length);
  return OK;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : 0; /* compute capability 9.0 */
  return OK;
}
CUresult cuMemGetInfo_v2(size_t *free_, size_t *total) { *free_ = *total = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **context, int device) { (void)device; *context = &token; return OK; }
CUresult cuCtxSetCurrent(void *context) { (void)context; return OK; }
CUresult cuCtxSynchronize(void) { return OK; }
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
  return OK;
}

CUresult cuModuleLoadData(void **module, const void *image) { (void)image; *module = &token; return OK; }
CUresult cuModuleUnload(void *module) { (void)module; return OK; }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module, (void)name;
  *function = &token;
  return OK;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params,
      (void)extra;
  return NOT_SUPPORTED;
}

CUresult cuStreamCreate(void **stream, unsigned flags) { (void)flags; *stream = &token; return OK; }
CUresult cuStreamSynchronize(void *stream) { (void)stream; return OK; }

static CUresult allocate(CUdeviceptr *pointer, size_t size) {
  void *memory = malloc(size);
  *pointer = (CUdeviceptr)(uintptr_t)memory;
  return memory ? OK : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) { return allocate(pointer, size); }
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t size, unsigned flags) { (void)flags; return allocate(pointer, size); }
CUresult cuMemFree_v2(CUdeviceptr pointer) { free((void *)(uintptr_t)pointer); return OK; }
CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t size, void *stream) { (void)stream; return allocate(pointer, size); }
CUresult cuMemFreeAsync(CUdeviceptr pointer, void *stream) { (void)stream; return cuMemFree_v2(pointer); }
/* Pointers report no pool, so every free takes cuMemFree (the same free). */
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr pointer) {
  (void)attribute, (void)pointer;
  *(void **)data = NULL;
  return OK;
}
CUresult cuMemcpy(CUdeviceptr to, CUdeviceptr from, size_t size) {
  memcpy((void *)(uintptr_t)to, (const void *)(uintptr_t)from, size);
  return OK;
}
CUresult cuMemcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t size, void *stream) {
  (void)stream;
  return cuMemcpy(to, from, size);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t size) { return cuMemcpy(to, (CUdeviceptr)(uintptr_t)from, size); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t size, void *stream) {
  (void)stream;
  return cuMemcpy(to, from, size);
}

/* cuda.h's CUDA_MEMCPY2D: Height rows of WidthInBytes bytes, each side's
 * rows Pitch bytes apart; host memory by srcHost/dstHost, else (device or
 * unified addressing, the same memory here) by srcDevice/dstDevice. */
typedef struct {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} Memcpy2D;
enum { MEMORYTYPE_HOST = 1, INVALID_VALUE = 1 };
CUresult cuMemcpy2DAsync_v2(const Memcpy2D *copy, void *stream) {
  (void)stream;
  if (copy->srcPitch < copy->WidthInBytes || copy->dstPitch < copy->WidthInBytes)
    return INVALID_VALUE; /* as the driver: rows may not overlap */
  const char *from = copy->srcMemoryType == MEMORYTYPE_HOST ? copy->srcHost : (const char *)(uintptr_t)copy->srcDevice;
  char *to = copy->dstMemoryType == MEMORYTYPE_HOST ? copy->dstHost : (char *)(uintptr_t)copy->dstDevice;
  for (size_t row = 0; row < copy->Height; ++row)
    memcpy(to + row * copy->dstPitch, from + row * copy->srcPitch, copy->WidthInBytes);
  return OK;
}

/* An event is the time it was recorded at. */
CUresult cuEventCreate(void **event, unsigned flags) { (void)flags; *event = calloc(1, sizeof(double)); return OK; }
CUresult cuEventDestroy_v2(void *event) { free(event); return OK; }
CUresult cuEventRecord(void *event, void *stream) {
  (void)stream;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  *(double *)event = now.tv_sec * 1e3 + now.tv_nsec / 1e6;
  return OK;
}
CUresult cuEventSynchronize(void *event) { (void)event; return OK; }
CUresult cuEventElapsedTime(float *ms, void *start, void *stop) {
  *ms = (float)(*(double *)stop - *(double *)start);
  return OK;
}
