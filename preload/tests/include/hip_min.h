/* The slice of the HIP runtime API the interposer's tests use, declared
 * as in hip_runtime_api.h (types, the hipKernelNodeParams layout, the
 * functions): the test app includes it in place of <hip/hip_runtime.h>,
 * and the fake HIP includes it so its definitions are checked against the
 * same declarations. Plus the fake's own counter, fakehip_launches(). */
#ifndef RELAUNCH_TEST_HIP_MIN_H
#define RELAUNCH_TEST_HIP_MIN_H

#include <stddef.h>
#include <stdint.h>

typedef int hipError_t;
typedef struct { uint32_t x, y, z; } dim3;
typedef struct {
    dim3 blockDim;
    void **extra;
    void *func;
    dim3 gridDim;
    void **kernelParams;
    unsigned int sharedMemBytes;
} hipKernelNodeParams;
typedef void *hipModule_t, *hipFunction_t, *hipStream_t, *hipGraph_t, *hipGraphNode_t, *hipGraphExec_t;

hipError_t hipInit(unsigned int);
hipError_t hipMalloc(void **, size_t);
hipError_t hipFree(void *);
hipError_t hipMemcpy(void *, const void *, size_t, int);
hipError_t hipModuleLoadData(hipModule_t *, const void *);
hipError_t hipModuleLoadDataEx(hipModule_t *, const void *, unsigned int, void *, void **);
hipError_t hipModuleLoad(hipModule_t *, const char *);
hipError_t hipModuleGetFunction(hipFunction_t *, hipModule_t, const char *);
hipError_t hipModuleUnload(hipModule_t);
hipError_t hipStreamCreate(hipStream_t *);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipGraphCreate(hipGraph_t *, unsigned int);
hipError_t hipGraphAddKernelNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                                 const hipKernelNodeParams *);
hipError_t hipGraphAddDependencies(hipGraph_t, const hipGraphNode_t *, const hipGraphNode_t *, size_t);
hipError_t hipGraphInstantiate(hipGraphExec_t *, hipGraph_t, hipGraphNode_t *, char *, size_t);
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *, hipGraph_t, unsigned long long);
hipError_t hipGraphAddEmptyNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t);
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, hipGraph_t);
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, void *);
typedef struct { void (*fn)(void *); void *userData; } hipHostNodeParams;
hipError_t hipGraphAddHostNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                               const hipHostNodeParams *);
hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);
hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t, hipGraphNode_t, const hipKernelNodeParams *);
hipError_t hipGraphExecDestroy(hipGraphExec_t);
hipError_t hipGraphKernelNodeSetParams(hipGraphNode_t, const hipKernelNodeParams *);
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned int);
/* attr is a hipLaunchAttributeID (a C enum); value a hipLaunchAttributeValue. */
hipError_t hipGraphKernelNodeSetAttribute(hipGraphNode_t, int, const void *);
/* updateResult_out is a hipGraphExecUpdateResult (a C enum, int sized). */
hipError_t hipGraphExecUpdate(hipGraphExec_t, hipGraph_t, hipGraphNode_t *, int *);
hipError_t hipGraphDestroy(hipGraph_t);
long fakehip_launches(void);

/* Stream capture, module launches and events (helper "capture"), as in
 * hip_runtime_api.h; enum values from its hipStreamCaptureMode and
 * hipStreamCaptureStatus. Plus the fake's direct-launch counter. */
typedef enum { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1,
               hipStreamCaptureModeRelaxed = 2 } hipStreamCaptureMode;
typedef enum { hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1,
               hipStreamCaptureStatusInvalidated = 2 } hipStreamCaptureStatus;
typedef void *hipEvent_t;
hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t *, const void *, size_t,
                                        hipStreamCaptureMode);
hipError_t hipStreamIsCapturing(hipStream_t, hipStreamCaptureStatus *);
hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int,
                                 unsigned int, unsigned int, unsigned int, hipStream_t, void **, void **);
hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipEventCreate(hipEvent_t *);
hipError_t hipEventDestroy(hipEvent_t);
hipError_t hipEventRecord(hipEvent_t, hipStream_t);
hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned int);
hipError_t hipGraphGetNodes(hipGraph_t, hipGraphNode_t *, size_t *);
hipError_t hipGraphGetEdges(hipGraph_t, hipGraphNode_t *, hipGraphNode_t *, size_t *);
long fakehip_kernel_launches(void);

/* Stream memory operations, async copies and synchronisation
 * (hip_runtime_api.h), and the fake's stream-thread hooks. */
#include <stdint.h>
#define hipStreamWaitValueEq 0x1
hipError_t hipStreamWriteValue32(hipStream_t, void *, uint32_t, unsigned int);
hipError_t hipStreamWaitValue32(hipStream_t, void *, uint32_t, unsigned int, uint32_t);
hipError_t hipMemcpyAsync(void *, const void *, size_t, int, hipStream_t);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipDeviceSynchronize(void);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipMemsetAsync(void *, int, size_t, hipStream_t);
hipError_t hipMemsetD32Async(void *, int, size_t, hipStream_t);
hipError_t hipMemsetD8Async(void *, unsigned char, size_t, hipStream_t);
hipError_t hipMemsetD16Async(void *, unsigned short, size_t, hipStream_t);
hipError_t hipMemcpy2DAsync(void *, size_t, const void *, size_t, size_t, size_t, int, hipStream_t);
hipError_t hipMemset2DAsync(void *, size_t, int, size_t, size_t, hipStream_t);
hipError_t hipHostMalloc(void **, size_t, unsigned int);
hipError_t hipHostFree(void *);
hipError_t hipMallocAsync(void **, size_t, hipStream_t);
hipError_t hipFreeAsync(void *, hipStream_t);
hipError_t hipMallocManaged(void **, size_t, unsigned int);
hipError_t hipHostRegister(void *, size_t, unsigned int);
hipError_t hipHostUnregister(void *);
hipError_t hipHostGetDevicePointer(void **, void *, unsigned int);
/* Memset, memcpy and event nodes (hip_runtime_api.h, driver_types.h). */
typedef struct {
    void *dst;
    unsigned int elementSize;
    size_t height, pitch;
    unsigned int value;
    size_t width;
} hipMemsetParams;
typedef struct { size_t x, y, z; } hipPos;
typedef struct { size_t width, height, depth; } hipExtent;
typedef struct { void *ptr; size_t pitch, xsize, ysize; } hipPitchedPtr;
typedef struct {
    void *srcArray;
    hipPos srcPos;
    hipPitchedPtr srcPtr;
    void *dstArray;
    hipPos dstPos;
    hipPitchedPtr dstPtr;
    hipExtent extent;
    int kind; /* hipMemcpyKind */
} hipMemcpy3DParms;
hipError_t hipGraphAddMemsetNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                                 const hipMemsetParams *);
hipError_t hipGraphAddMemcpyNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                                 const hipMemcpy3DParms *);
hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, void *,
                                   const void *, size_t, int);
hipError_t hipGraphAddEventRecordNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, hipEvent_t);
hipError_t hipGraphAddEventWaitNode(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, hipEvent_t);
void fakehip_stream_hold(hipStream_t, int);
long fakehip_stream_pending(hipStream_t);

/* Static registration (helper "staticreg"), as a hipcc-generated
 * constructor calls it (hip_runtime headers / clang's HIP codegen): the
 * wrapper around an offload bundle, the kernels by host stub, and the
 * fake's counter. */
typedef struct { uint32_t x, y, z; } uint3;
typedef struct {
    uint32_t magic; /* 0x48495046, "HIPF" */
    uint32_t version;
    const void *binary;
    void *dummy;
} hipFatBinaryWrapper;
void **__hipRegisterFatBinary(const void *);
void __hipRegisterFunction(void **, const void *, char *, const char *, unsigned int, uint3 *, uint3 *,
                           dim3 *, dim3 *, int *);
void __hipUnregisterFatBinary(void **);
void __hipRegisterVar(void **, void *, char *, char *, int, size_t, int, int);
hipError_t hipModuleGetGlobal(void **, size_t *, hipModule_t, const char *);
long fakehip_registrations(void);

#endif
