/*===- soac_cuda_runtime.c - what GPU code compiled by soac calls ---------===*
 *
 * Host code lowered by soac-lower-to-nvvm calls two sets of functions:
 *
 *  - the kernel-launch functions gpu-to-llvm emits (mgpuModuleLoad, ...,
 *    mgpuLaunchKernel), with the signatures of MLIR's CUDA runtime wrappers;
 *  - the allocation functions of finalize-memref-to-llvm with generic
 *    functions (_mlir_memref_to_llvm_alloc/free). By default every buffer is
 *    CUDA managed memory, which host code (scalar reads, loops around
 *    kernels) and kernels both address. soac_gpu_set_memory(1) makes them
 *    device memory from the stream-ordered pool instead: faster to allocate
 *    and never migrated, but only for code whose host part does not read or
 *    write buffers (docs/gpu.md lists what does).
 *
 * Kernels run on one stream per thread: the caller's (soac_gpu_set_stream),
 * or one the runtime creates once. In managed memory compiled code waits for
 * each kernel, since its host part may read any buffer next. In device memory
 * it does not: kernels, stream-ordered allocations and frees and copies
 * between buffers queue on the stream in program order, and the host waits
 * only where it reads or writes a buffer (soac_gpu_copy) and when a checked
 * call returns (soac_settle_kernels); a direct caller waits with
 * soac_gpu_synchronize. A failure a kernel recorded is reported
 * after each such wait (in managed memory, after its launch). Either way a
 * call made through soac_call_checked has finished its kernels when it
 * returns, so a caller may time it with events recorded on its stream
 * around it.
 *
 * The CUDA driver (libcuda.so.1) is opened at run time, so that a library
 * compiled by soac loads anywhere and needs nothing but the driver on a GPU
 * machine (memrefCopy, the one other function compiled code may call, is in
 * memref_copy.c). soac_gpu_status() says whether the driver and a device were
 * found; callers check it before calling compiled functions.
 *
 * Calls go through soac_call_checked (soac_calls.c, linked in here too): a
 * failed check of host code, a failed check recorded by a kernel
 * (soac_failure_record), a buffer that cannot be allocated or a driver
 * error stops the call and frees its buffers; outside a checked call it
 * prints its message and aborts.
 *
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soac_calls.h"

typedef int CUresult; /* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
  CU_MEM_ATTACH_GLOBAL = 1,
  CU_STREAM_NON_BLOCKING = 1,
  CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMORYTYPE_UNIFIED = 4
};

/* cuda.h's CUDA_MEMCPY2D: `Height` rows of `WidthInBytes` bytes, `Pitch`
 * bytes apart, from one address to another. */
struct Memcpy2D {
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
};

/* The driver functions used, resolved once. */
static struct {
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)(void);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy2DAsync)(const struct Memcpy2D *, CUstream);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*pointerGetAttribute)(void *, int, CUdeviceptr);
  /* Stream-ordered allocation (CUDA 11.2 drivers and later): null where the
   * driver lacks it, and device memory is then refused. */
  CUresult (*memAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*memFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*deviceGetDefaultMemPool)(void **, CUdevice);
  CUresult (*memPoolSetAttribute)(void *, int, void *);
} cu;

static CUcontext context;
static CUdevice device;
/* The stream of threads that chose none, created with the context. */
static CUstream ownStream;
/* The stream the calling thread chose (soac_gpu_set_stream), if any. */
static __thread CUstream callerStream;
/* Where compiled code allocates its buffers. */
enum { SOAC_MEMORY_MANAGED = 0, SOAC_MEMORY_DEVICE = 1 };
static int memoryKind = SOAC_MEMORY_MANAGED;
/* 0: not tried, 1: ready, -1: failed (status says why). */
static int state;
static char status[256] = "not initialized";

static void *symbol(void *driver, const char *name) {
  void *address = dlsym(driver, name);
  if (!address)
    snprintf(status, sizeof status, "the CUDA driver lacks %s", name);
  return address;
}

static const char *errorName(CUresult result) {
  const char *name = NULL;
  if (cu.getErrorName)
    cu.getErrorName(result, &name);
  return name ? name : "unknown error";
}

/* Opens the driver and makes the first device's primary context current on
 * the calling thread. */
static int ready(void) {
  if (state == 0) {
    state = -1;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!driver) {
      snprintf(status, sizeof status,
               "no CUDA driver: libcuda.so.1 could not be loaded");
      return 0;
    }
#define RESOLVE(field, name)                                                   \
  if (!(*(void **)&cu.field = symbol(driver, name)))                           \
    return 0;
    RESOLVE(init, "cuInit");
    RESOLVE(deviceGet, "cuDeviceGet");
    RESOLVE(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    RESOLVE(ctxSetCurrent, "cuCtxSetCurrent");
    RESOLVE(ctxSynchronize, "cuCtxSynchronize");
    RESOLVE(moduleLoadData, "cuModuleLoadData");
    RESOLVE(moduleUnload, "cuModuleUnload");
    RESOLVE(moduleGetFunction, "cuModuleGetFunction");
    RESOLVE(launchKernel, "cuLaunchKernel");
    RESOLVE(streamCreate, "cuStreamCreate");
    RESOLVE(streamSynchronize, "cuStreamSynchronize");
    RESOLVE(memAllocManaged, "cuMemAllocManaged");
    RESOLVE(memFree, "cuMemFree_v2");
    RESOLVE(memcpyAsync, "cuMemcpyAsync");
    RESOLVE(memcpy2DAsync, "cuMemcpy2DAsync_v2");
    RESOLVE(getErrorName, "cuGetErrorName");
    RESOLVE(pointerGetAttribute, "cuPointerGetAttribute");
#undef RESOLVE
    *(void **)&cu.memAllocAsync = dlsym(driver, "cuMemAllocAsync");
    *(void **)&cu.memFreeAsync = dlsym(driver, "cuMemFreeAsync");
    *(void **)&cu.deviceGetDefaultMemPool =
        dlsym(driver, "cuDeviceGetDefaultMemPool");
    *(void **)&cu.memPoolSetAttribute = dlsym(driver, "cuMemPoolSetAttribute");
    CUresult result = cu.init(0);
    if (result == 0)
      result = cu.deviceGet(&device, 0);
    if (result == 0)
      result = cu.primaryCtxRetain(&context, device);
    if (result == 0)
      result = cu.ctxSetCurrent(context);
    if (result == 0)
      result = cu.streamCreate(&ownStream, CU_STREAM_NON_BLOCKING);
    if (result != 0) {
      snprintf(status, sizeof status, "no usable CUDA device: %s",
               errorName(result));
      return 0;
    }
    state = 1;
    snprintf(status, sizeof status, "ready");
  }
  if (state != 1)
    return 0;
  cu.ctxSetCurrent(context);
  return 1;
}

/* A driver failure stops the call made through soac_call_checked (Python
 * raises soac.runtime.abi.DeviceError); outside a checked call it is printed
 * and the process aborts. */
_Noreturn static void fail(const char *what, const char *why) {
  static __thread char message[512];
  snprintf(message, sizeof message, "soac GPU runtime: %s: %s", what, why);
  for (char *c = message; *c; ++c)
    if (*c == '%') /* the message is a printf format */
      *c = '?';
  soac_report_error(SOAC_DEVICE_FAILURE, message, 0, 0);
}

static void check(CUresult result, const char *what) {
  if (result != 0) {
    char failed[128];
    snprintf(failed, sizeof failed, "%s failed", what);
    fail(failed, errorName(result));
  }
}

static void require(const char *what) {
  if (!ready())
    fail(what, status);
}

/*===- What callers ask -----------------------------------------------------===*/

/* "ready", or why compiled GPU code cannot run here. */
const char *soac_gpu_status(void) {
  ready();
  return status;
}

/* The stream kernels of the calling thread run on. */
static CUstream currentStream(void) {
  return callerStream ? callerStream : ownStream;
}

/* Kernels and stream-ordered allocations of compiled code called from this
 * thread go to `stream` (a CUstream of the primary context of device 0);
 * null goes back to the runtime's own stream. */
void soac_gpu_set_stream(void *stream) { callerStream = stream; }

/* The stream compiled code called from this thread uses (null before the
 * runtime is ready). */
void *soac_gpu_stream(void) { return ready() ? currentStream() : NULL; }

/* Where buffers allocated by compiled code live from now on: 0 managed
 * memory (the default), 1 device memory from the stream-ordered pool.
 * Returns 0, or -1 (nothing changed) for another kind or where the driver
 * has no stream-ordered allocation. */
int soac_gpu_set_memory(int kind) {
  if (kind == SOAC_MEMORY_MANAGED) {
    memoryKind = kind;
    return 0;
  }
  if (kind != SOAC_MEMORY_DEVICE || !ready() || !cu.memAllocAsync ||
      !cu.memFreeAsync)
    return -1;
  /* The pool keeps what is freed for the next allocations instead of giving
   * it back at every synchronization (its default): a call's buffers are
   * then reused by the next call rather than mapped again. */
  void *pool = NULL;
  unsigned long long keepAll = ~0ull;
  if (cu.deviceGetDefaultMemPool && cu.memPoolSetAttribute &&
      cu.deviceGetDefaultMemPool(&pool, device) == 0)
    cu.memPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll);
  memoryKind = kind;
  return 0;
}

int soac_gpu_memory(void) { return memoryKind; }

/* Managed memory, for arguments copied in by the caller; null when the
 * driver cannot give it (or there is no GPU). */
void *soac_gpu_alloc(size_t size) {
  CUdeviceptr pointer = 0;
  if (!ready() ||
      cu.memAllocManaged(&pointer, size ? size : 1, CU_MEM_ATTACH_GLOBAL) != 0)
    return NULL;
  return (void *)(uintptr_t)pointer;
}

/* Whether `address` came from a stream-ordered pool (cuMemAllocAsync). */
static int fromPool(CUdeviceptr address) {
  void *pool = NULL;
  return cu.memFreeAsync &&
         cu.pointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                address) == 0 &&
         pool;
}

/* Frees managed memory, device memory of cuMemAlloc, or of the pool. */
void soac_gpu_free(void *pointer) {
  if (!pointer || !ready())
    return;
  CUdeviceptr address = (CUdeviceptr)(uintptr_t)pointer;
  if (fromPool(address)) {
    /* Ordered after the kernels of this thread's stream that may read it. */
    check(cu.memFreeAsync(address, currentStream()), "cuMemFreeAsync");
    return;
  }
  /* Managed memory: cuMemFree waits for the device to be idle first. */
  check(cu.memFree(address), "cuMemFree");
}

/* The record of failed checks of the kernels this thread launches
 * (soac_failure_record, below; its words: soac_calls.h). */
static __thread int64_t *failureRecord;

/* Waits for everything queued on this thread's stream: a kernel that
 * faulted, or recorded a failed check, stops the call. */
static void waitForStream(const char *what) {
  check(cu.streamSynchronize(currentStream()), what);
  soac_report_recorded_failure(failureRecord);
}

/* What host code compiled with soac-host-buffer-copies calls for each copy
 * from one GPU buffer to another: queued on the thread's stream after the
 * kernels before it and before those after it, with nothing for the host to
 * wait for. */
void soac_gpu_copy_buffers(int64_t to, int64_t from, int64_t bytes) {
  if (bytes <= 0)
    return;
  require("copying a buffer");
  check(cu.memcpyAsync((CUdeviceptr)to, (CUdeviceptr)from, (size_t)bytes,
                       currentStream()),
        "cuMemcpyAsync");
}

/* ... and for each read or write of a buffer by the host: `bytes` from
 * `from` to `to`, each device, managed or host memory (unified addressing),
 * ordered after the kernels of the thread's stream and finished on return. */
void soac_gpu_copy(int64_t to, int64_t from, int64_t bytes) {
  if (bytes <= 0)
    return;
  soac_gpu_copy_buffers(to, from, bytes);
  waitForStream("cuStreamSynchronize (a copy or a kernel before it failed)");
}

/* ... and for each copy between GPU buffers that are not both contiguous:
 * `rank` sizes at `shape`, then the source's strides, then the target's (in
 * elements); `to` and `from` address the first elements. Dimensions whose
 * elements are contiguous on both sides merge into rows of one run of bytes;
 * the next dimension outwards is a 2-D copy of those rows, and a host loop
 * goes over the ones outside it. Queued on the stream, as above. */
void soac_gpu_copy_strided(int64_t to, int64_t from, int64_t elementBytes,
                           int64_t rank, const int64_t *shape) {
  const int64_t *sizes = shape, *fromStrides = shape + rank,
                *toStrides = shape + 2 * rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] <= 0)
      return;
  require("copying a buffer");
  /* The innermost dimensions that continue the run on both sides. */
  int64_t inner = rank, run = elementBytes;
  while (inner > 0 && (sizes[inner - 1] == 1 ||
                       (fromStrides[inner - 1] * elementBytes == run &&
                        toStrides[inner - 1] * elementBytes == run)))
    run *= sizes[--inner];
  if (inner == 0) {
    soac_gpu_copy_buffers(to, from, run);
    return;
  }
  int64_t rows = inner - 1, outer = 1;
  for (int64_t d = 0; d < rows; ++d)
    outer *= sizes[d];
  struct Memcpy2D copy = {0};
  copy.srcMemoryType = copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcPitch = (size_t)(fromStrides[rows] * elementBytes);
  copy.dstPitch = (size_t)(toStrides[rows] * elementBytes);
  copy.WidthInBytes = (size_t)run;
  copy.Height = (size_t)sizes[rows];
  for (int64_t flat = 0; flat < outer; ++flat) {
    int64_t rest = flat, fromOffset = 0, toOffset = 0;
    for (int64_t d = rows - 1; d >= 0; --d) {
      fromOffset += rest % sizes[d] * fromStrides[d];
      toOffset += rest % sizes[d] * toStrides[d];
      rest /= sizes[d];
    }
    copy.srcDevice = (CUdeviceptr)(from + fromOffset * elementBytes);
    copy.dstDevice = (CUdeviceptr)(to + toOffset * elementBytes);
    check(cu.memcpy2DAsync(&copy, currentStream()), "cuMemcpy2DAsync");
  }
}

/* What host code calls after each launch whose kernel has checks
 * (soac-lower-kernel-checks). In managed memory the launch has finished
 * (mgpuStreamSynchronize): report at once. In device memory it may still
 * run: the next wait reports, so that it stays in flight. */
void soac_check_kernel_failures(void) {
  if (memoryKind == SOAC_MEMORY_MANAGED)
    soac_report_recorded_failure(failureRecord);
}

/* soac_calls.c, around a checked call: when its function returns, its
 * results are complete and a kernel that faulted or recorded a failed check
 * fails it; when it starts or has failed (its buffers are freed next), its
 * kernels are waited for and what they recorded is dropped. */
void soac_settle_kernels(int report) {
  if (state != 1 || !ready())
    return;
  if (report) {
    waitForStream("cuStreamSynchronize (a kernel failed)");
    return;
  }
  cu.streamSynchronize(currentStream());
  if (failureRecord)
    failureRecord[0] = 0;
}

/* For a C caller that calls compiled functions directly (not through
 * soac_call_checked): waits for their kernels; a failed check they recorded
 * is printed and aborts the process, as a direct call's failed host check
 * does. In device memory it reads their results only after this. */
void soac_gpu_synchronize(void) {
  require("waiting for the stream");
  waitForStream("cuStreamSynchronize (a kernel failed)");
}

/*===- Allocation functions of compiled code --------------------------------===*/

/* Null when the memory cannot be had, which compiled code reports as
 * out of memory (soac-lower-checks). Buffers of a checked call are tracked,
 * so that a failed call frees them. */
void *_mlir_memref_to_llvm_alloc(size_t size) {
  require("allocating memory");
  CUdeviceptr pointer = 0;
  if (memoryKind == SOAC_MEMORY_MANAGED)
    pointer = (CUdeviceptr)(uintptr_t)soac_gpu_alloc(size);
  else if (cu.memAllocAsync(&pointer, size ? size : 1, currentStream()) != 0)
    pointer = 0;
  soac_track_allocation((void *)(uintptr_t)pointer);
  return (void *)(uintptr_t)pointer;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  /* Managed and pool allocations are aligned to at least 256 bytes. */
  (void)alignment;
  return _mlir_memref_to_llvm_alloc(size);
}

void _mlir_memref_to_llvm_free(void *pointer) {
  soac_untrack_allocation(pointer);
  soac_gpu_free(pointer);
}

void soac_free_tracked(void *pointer) { soac_gpu_free(pointer); }

/* The failure record of the kernels' checks this thread launches
 * (soac-lower-kernel-checks): four words of managed memory, which kernels
 * write on a failure and the runtime reads after waiting for them.
 * Allocated once per thread and kept for its launches. */
void *soac_failure_record(void) {
  if (!failureRecord) {
    require("allocating the record of failed checks");
    failureRecord = soac_gpu_alloc(SOAC_FAILURE_RECORD_WORDS * sizeof(int64_t));
    if (!failureRecord)
      fail("allocating the record of failed checks", "out of memory");
    memset(failureRecord, 0, SOAC_FAILURE_RECORD_WORDS * sizeof(int64_t));
  }
  return failureRecord;
}

/*===- Kernel launches (MLIR's mgpu* ABI) -----------------------------------===*/

/* Modules are loaded by the global constructors of compiled code, possibly
 * where no GPU exists, and outside any call: a module that cannot be loaded
 * is null, and the first launch of one of its kernels reports why. */
static char moduleError[256] = "no CUDA device";

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  CUmodule module = NULL;
  if (!ready()) {
    snprintf(moduleError, sizeof moduleError, "%s", status);
    return NULL;
  }
  CUresult result = cu.moduleLoadData(&module, data);
  if (result != 0) {
    snprintf(moduleError, sizeof moduleError, "cuModuleLoadData failed: %s",
             errorName(result));
    return NULL;
  }
  return module;
}

/* PTX, compiled by the driver. */
void *mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel; /* the driver's default, -O3 */
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(void *module) {
  if (module && state == 1)
    cu.moduleUnload(module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  require("looking up a kernel");
  if (!module)
    fail("a kernel's module was not loaded", moduleError);
  CUfunction function = NULL;
  check(cu.moduleGetFunction(&function, module, name), "cuModuleGetFunction");
  return function;
}

/* gpu-to-llvm creates a stream around each launch and destroys it after:
 * both become the thread's one stream, which outlives the calls. */
void *mgpuStreamCreate(void) {
  require("creating a stream");
  return currentStream();
}

void mgpuStreamDestroy(void *stream) { (void)stream; }

/* What gpu-to-llvm calls after each launch. In device memory the host
 * reaches buffers only through the runtime, which waits where it must, so
 * the launch stays in flight and the next one queues behind it; in managed
 * memory the host may read any buffer next, so it waits here. */
void mgpuStreamSynchronize(void *stream) {
  if (memoryKind == SOAC_MEMORY_DEVICE)
    return;
  check(cu.streamSynchronize(stream), "cuStreamSynchronize (a kernel failed)");
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemory, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)paramsCount;
  check(cu.launchKernel(function, (unsigned)gridX, (unsigned)gridY,
                        (unsigned)gridZ, (unsigned)blockX, (unsigned)blockY,
                        (unsigned)blockZ, (unsigned)sharedMemory, stream,
                        params, extra),
        "cuLaunchKernel");
}
