/*
 * ascendcl_sys.h -- the subset of AscendCL / aclnn that the ascendcl crates use.
 *
 * Written by this project from the published prototypes, enum values and error
 * codes (see shared/cann-reference.md); no vendor header text is reproduced.
 *
 * Sections can be switched off so that scripts/check-vendor-headers.sh can
 * compare this file against the vendor's own headers:
 *   ASCENDCL_SYS_NO_TYPES       -- omit typedefs, enums and constants
 *   ASCENDCL_SYS_NO_RUNTIME_API -- omit the libascendcl.so prototypes
 *   ASCENDCL_SYS_NO_ACLNN_API   -- omit the libnnopbase.so / libopapi.so prototypes
 */
#ifndef ASCENDCL_SYS_H
#define ASCENDCL_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ASCENDCL_SYS_NO_TYPES

typedef int aclError;
typedef int32_t aclnnStatus;
typedef void *aclrtStream;
typedef void *aclrtContext;
typedef void *aclrtEvent;
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;

/* Return codes of libascendcl.so (aclError). */
#define ACL_SUCCESS                         0
#define ACL_ERROR_INVALID_PARAM             100000
#define ACL_ERROR_UNINITIALIZE              100001
#define ACL_ERROR_REPEAT_INITIALIZE         100002
#define ACL_ERROR_BAD_ALLOC                 200000
#define ACL_ERROR_API_NOT_SUPPORT           200001
#define ACL_ERROR_INVALID_DEVICE            200002
#define ACL_ERROR_INVALID_RESOURCE_HANDLE   200005
#define ACL_ERROR_FEATURE_UNSUPPORTED       200006
#define ACL_ERROR_INTERNAL_ERROR            500000
#define ACL_ERROR_FAILURE                   500001
#define ACL_ERROR_RT_FAILURE                500003
#define ACL_ERROR_RT_PARAM_INVALID          107000
#define ACL_ERROR_RT_INVALID_DEVICEID       107001
#define ACL_ERROR_RT_CONTEXT_NULL           107002
#define ACL_ERROR_RT_STREAM_CONTEXT         107003
#define ACL_ERROR_RT_INVALID_HANDLE         107017
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT    207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION      207001
#define ACL_ERROR_RT_NO_DEVICE              207004
#define ACL_ERROR_RT_INTERNAL_ERROR         507000
#define ACL_ERROR_RT_DEV_SETUP_ERROR        507033
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT    507046

/* Return codes of the aclnn libraries (aclnnStatus). */
#define ACLNN_SUCCESS                       0
#define ACLNN_ERR_PARAM_NULLPTR             161001
#define ACLNN_ERR_PARAM_INVALID             161002
#define ACLNN_ERR_RUNTIME_ERROR             361001
#define ACLNN_ERR_INNER                     561000
#define ACLNN_ERR_INNER_FIND_KERNEL_ERROR   561003
#define ACLNN_ERR_INNER_CREATE_EXECUTOR     561101
#define ACLNN_ERR_INNER_NULLPTR             561103

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5
} aclrtMemAttr;

typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

typedef enum aclrtCallbackBlockType {
    ACL_CALLBACK_NO_BLOCK = 0,
    ACL_CALLBACK_BLOCK = 1
} aclrtCallbackBlockType;
typedef void (*aclrtCallback)(void *userData);

typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE = 1,
    ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2
} aclrtMemLocationType;
typedef struct aclrtMemLocation {
    uint32_t id;
    aclrtMemLocationType type;
} aclrtMemLocation;
typedef enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0
} aclrtMemAllocationType;
typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0
} aclrtMemHandleType;

#endif /* ASCENDCL_SYS_NO_TYPES */

#ifndef ASCENDCL_SYS_NO_RUNTIME_API

/* libascendcl.so: process, devices and contexts */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext *context);

/* libascendcl.so: streams and events */
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);

/* libascendcl.so: memory */
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);

/* libascendcl.so: peer access, for aclrtMemcpy(Async) DEVICE_TO_DEVICE between devices */
aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/* libascendcl.so: host callbacks in stream order */
aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream);

/* libascendcl.so: diagnostics */
const char *aclrtGetSocName(void);
const char *aclGetRecentErrMsg(void);

#endif /* ASCENDCL_SYS_NO_RUNTIME_API */

/* libascendcl.so: stream-ordered memory pools (CANN 8.x acl_rt_memory_soma.h). The pinned
 * torch-npu wheel has no acl_rt_memory_soma.h, so scripts/check-vendor-headers.sh cannot
 * compare this block: it is declared from the reference file and kept with the types. */
#ifndef ASCENDCL_SYS_NO_TYPES
typedef void *aclrtMemPool;
typedef struct aclrtMemPoolProps {
    aclrtMemAllocationType allocType;
    aclrtMemHandleType handleType;
    aclrtMemLocation location;
    size_t maxSize;
    unsigned char reserved[32];
} aclrtMemPoolProps;
aclError aclrtMemPoolCreate(aclrtMemPool *memPool, const aclrtMemPoolProps *poolProps);
aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
aclError aclrtMemPoolMallocAsync(void **ptr, size_t size, aclrtMemPool memPool,
                                 aclrtStream stream);
aclError aclrtMemPoolFreeAsync(void *ptr, aclrtStream stream);
aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep);
#endif /* ASCENDCL_SYS_NO_TYPES */

#ifndef ASCENDCL_SYS_NO_ACLNN_API

/* libnnopbase.so: tensor descriptors and executors */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, size_t index, aclTensor *tensor,
                                  void *addr);
aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, size_t index, aclTensor *tensor,
                                   void *addr);

/* libnnopbase.so: attribute objects (acl_meta.h) */
aclScalar *aclCreateScalar(void *value, aclDataType dataType);
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);
aclnnStatus aclDestroyIntArray(const aclIntArray *array);
aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
aclnnStatus aclDestroyTensorList(const aclTensorList *array);
aclnnStatus aclDestroyScalarList(const aclScalarList *array);
aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size);
aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size);
aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size);
aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size);

/* libopapi.so: the operators, two phases each. Resolved one by one at run time, so a
 * toolkit lacking one still loads. */
aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src,
                                             uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream);

aclnnStatus aclnnMishGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream);
aclnnStatus aclnnInplaceMishGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor);
aclnnStatus aclnnInplaceMish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream);
/* LogicalNot, a row of the unary family. */
aclnnStatus aclnnLogicalNotGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLogicalNot(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLogicalNotGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceLogicalNot(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
/* The tensor-scalar family (rows of ascend-ops' scalar table): `out = self op other` with an
 * aclScalar `other` (and `alpha` for Adds and Subs), and the in-place twins. */
aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
    const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceSubsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceDivsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnEqScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnEqScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceEqScalarGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceEqScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnNeScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnNeScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceNeScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceNeScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnGtScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGtScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceGtScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceGtScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
/* The unary family (rows of ascend-ops' unary table): `out = f(self)` and the in-place twins. */
aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnExp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceExpGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceExp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnExpm1GetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnExpm1(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceExpm1GetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceExpm1(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLog(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLogGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceLog(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceSqrtGetWorkspaceSize(aclTensor *self, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnRsqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRsqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceRsqrtGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceRsqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnNeg(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceNegGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceNeg(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAbs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnReciprocalGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnReciprocal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceReciprocalGetWorkspaceSize(const aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceReciprocal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSinGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceSinGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceSin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnCosGetWorkspaceSize(const aclTensor *input, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCos(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceCosGetWorkspaceSize(aclTensor *inputRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceCos(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnErfGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnErf(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceErfGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceErf(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnFloorGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnFloor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceFloorGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceFloor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnCeilGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCeil(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceCeilGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceCeil(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnRoundGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRound(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceRoundGetWorkspaceSize(const aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceRound(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

/* The binary family (rows of ascend-ops' binary table): `out = f(self, other)` with
 * broadcast and promotion, and the in-place twins. */
aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceSubGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
    const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceDivGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnMaximumGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMaximum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMinimum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *exponent,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnPowTensorTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplacePowTensorTensorGetWorkspaceSize(const aclTensor *self,
    const aclTensor *exponent, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplacePowTensorTensor(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnEqTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnEqTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnGtTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGtTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnGeTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGeTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLtTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLtTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLeTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLeTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLogicalAndGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLogicalAnd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLogicalAndGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceLogicalAnd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLogicalOrGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLogicalOr(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLogicalOrGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceLogicalOr(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

aclnnStatus aclnnMishBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor);
aclnnStatus aclnnMishBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream);

aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                        int8_t cubeMathType, uint64_t *workspaceSize,
                                        aclOpExecutor **executor);
aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                        aclrtStream stream);
aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
                                       const aclTensor *mat2, const aclScalar *beta,
                                       const aclScalar *alpha, aclTensor *out, int8_t cubeMathType,
                                       uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream);
aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                     const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                     aclrtStream stream);
aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                            const aclScalar *alpha, uint64_t *workspaceSize,
                                            aclOpExecutor **executor);
aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream);
aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                     aclrtStream stream);
aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
                                            uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream);
aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims,
                                           bool keepDims, aclDataType dtype, aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream);
aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                         int64_t reduction, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMseLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                         aclrtStream stream);
aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor);
aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);
aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize,
                                   aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor);
aclnnStatus aclnnInplaceZero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream);

/* The argument model: operators with optional scalars (Clamp), two outputs (MaxDim). */
aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor *self, const aclScalar *clipValueMin,
    const aclScalar *clipValueMax, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnClamp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

aclnnStatus aclnnMaxDimGetWorkspaceSize(const aclTensor *self, int64_t dim, bool keepdim,
    aclTensor *out, aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMaxDim(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

/* Tensor lists: Cat (a list of tensors joined along a dim). */
aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
/* CNN operators: Convolution, ConvolutionBackward, MaxPool2dWithIndices and its backward. */
aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
    const aclTensor *bias, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding,
    const int64_t groups, aclTensor *output, int8_t cubeMathType, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnConvolution(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *input, const aclTensor *weight, const aclIntArray *biasSizes,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
    bool transposed, const aclIntArray *outputPadding, int groups, const aclBoolArray *outputMask,
    int8_t cubeMathType, aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor *self,
    const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool ceilMode, aclTensor *out, aclTensor *indices,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *self, const aclTensor *indices, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
    bool ceilMode, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Classifier operators: Gelu, GeluBackward, ThresholdBackward,
 * ArgMax, Mean, ApplyAdamWV2. */
aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
    const aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *self, const aclScalar *threshold, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnArgMaxGetWorkspaceSize(const aclTensor *self, int64_t dim, bool keepdim,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnArgMax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim,
    bool keepDim, aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor *varRef, aclTensor *mRef,
    aclTensor *vRef, aclTensor *maxGradNormOptionalRef, const aclTensor *grad,
    const aclTensor *step, float lr, float beta1, float beta2, float weightDecay, float eps,
    bool amsgrad, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnApplyAdamWV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

/* Softmax family and NLL loss: Softmax, LogSoftmax, SoftmaxBackward, LogSoftmaxBackward,
 * NLLLoss (two outputs: out and totalWeight), NLLLossBackward. */
aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *output, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *output, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
    const aclTensor *weight, int64_t reduction, int64_t ignoreIndex, aclTensor *out,
    aclTensor *totalWeightOut, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput,
    const aclTensor *self, const aclTensor *target, const aclTensor *weight, int64_t reduction,
    int64_t ignoreIndex, const aclTensor *totalWeight, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Comparisons of the tensor-scalar family: GeScalar, LtScalar, LeScalar and their in-place
   twins. */
aclnnStatus aclnnGeScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGeScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceGeScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceGeScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnLtScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLtScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLtScalarGetWorkspaceSize(const aclTensor *selfRef,
    const aclScalar *other, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceLtScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnLeScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLeScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLeScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceLeScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* LeakyRelu, a row of the tensor-scalar family (the scalar is negativeSlope). */
aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor *self, const aclScalar *negativeSlope,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLeakyRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor *selfRef,
    const aclScalar *negativeSlope, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceLeakyRelu(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Random numbers: InplaceUniform, InplaceNormal, InplaceBernoulli (scalar and tensor p). */
aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor *selfRef, double from, double to,
    uint64_t seed, uint64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceUniform(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor *selfRef, float mean, float std,
    int64_t seed, int64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceNormal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceBernoulliGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *prob,
    int64_t seed, int64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceBernoulli(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceBernoulliTensorGetWorkspaceSize(const aclTensor *selfRef,
    const aclTensor *prob, int64_t seed, int64_t offset, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceBernoulliTensor(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Indexing: Gather, IndexSelect, ScatterAdd, Embedding, EmbeddingDenseBackward. */
aclnnStatus aclnnGatherGetWorkspaceSize(const aclTensor *self, const int64_t dim,
    const aclTensor *index, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGather(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor *self, int64_t dim,
    const aclTensor *index, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnIndexSelect(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnScatterAddGetWorkspaceSize(const aclTensor *self, int64_t dim,
    const aclTensor *index, const aclTensor *src, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnScatterAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor *weight, const aclTensor *indices,
    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnEmbedding(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor *grad,
    const aclTensor *indices, uint64_t numWeights, uint64_t paddingIdx, bool scaleGradByFreq,
    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnEmbeddingDenseBackward(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Cast, SWhere, InplaceMaskedFillScalar, InplaceOne and PowTensorScalar (ops-math). */
aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition, const aclTensor *self,
    const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSWhere(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor *selfRef,
    const aclTensor *mask, const aclScalar *value, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceMaskedFillScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnInplaceOneGetWorkspaceSize(const aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceOne(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor *self,
    const aclScalar *exponent, const aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnPowTensorScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, const aclrtStream stream);
aclnnStatus aclnnInplacePowTensorScalarGetWorkspaceSize(const aclTensor *self,
    const aclScalar *exponent, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplacePowTensorScalar(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* Log1p, a row of the unary family. */
aclnnStatus aclnnLog1pGetWorkspaceSize(const aclTensor *self, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLog1p(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
aclnnStatus aclnnInplaceLog1pGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
    aclOpExecutor **executor);
aclnnStatus aclnnInplaceLog1p(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

#endif /* ASCENDCL_SYS_NO_ACLNN_API */

#ifdef __cplusplus
}
#endif

#endif /* ASCENDCL_SYS_H */
