/*
 * End-to-end smoke test of libascend_sim.so through the project's own header: the
 * vendor sample of aclnnMishBackward (shape [4,2]) on the simulator, then a leak check.
 * Built and run by scripts/sim-c-test.sh.
 */
#include "ascendcl_sys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The simulator's introspection API (not part of CANN, so not in the header). */
typedef struct {
    uint64_t allocations, allocated_bytes, tensors, executors, streams, events, contexts;
    uint64_t scalars, arrays, lists;
} ascendSimCounters;
int32_t ascendSimGetCounters(ascendSimCounters *out);
int32_t ascendSimSetFault(const char *symbol, uint64_t nth);
const char *ascendSimLastReport(void);
uint64_t ascendSimGetCallCount(const char *symbol);

static int failures = 0;

#define CHECK(expr)                                                                      \
    do {                                                                                 \
        long long rc_ = (long long)(expr);                                               \
        if (rc_ != 0) {                                                                  \
            const char *m_ = aclGetRecentErrMsg();                                       \
            fprintf(stderr, "%s:%d: %s returned %lld: %s\n", __FILE__, __LINE__, #expr,  \
                    rc_, m_ ? m_ : "(no message)");                                      \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static aclTensor *make_tensor(const int64_t *shape, uint64_t ndim, void *data) {
    int64_t strides[8];
    int64_t s = 1;
    for (int i = (int)ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
    return aclCreateTensor(shape, ndim, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, ndim, data);
}

int main(void) {
    const int64_t shape[2] = {4, 2};
    const float grad[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const float self[8] = {1, 1, 1, 2, 2, 2, 3, 3};
    const float expected[8] = {0.0f,      1.049036f, 2.098072f, 3.207954f,
                               4.277272f, 5.346590f, 6.126641f, 7.147748f};
    const size_t bytes = sizeof grad;
    float result[8];
    void *dg = NULL, *dx = NULL, *dout = NULL, *ws = NULL;
    aclrtStream stream = NULL;
    aclOpExecutor *executor = NULL;
    uint64_t ws_size = 0;

    CHECK(aclInit(NULL));
    EXPECT(aclInit(NULL) == ACL_ERROR_REPEAT_INITIALIZE);
    CHECK(aclrtSetDevice(0));
    const char *soc = aclrtGetSocName();
    EXPECT(soc != NULL && strcmp(soc, "Ascend910B4") == 0);
    CHECK(aclrtCreateStream(&stream));

    CHECK(aclrtMalloc(&dg, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dout, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(((uintptr_t)dg % 32) == 0);
    CHECK(aclrtMemcpy(dg, bytes, grad, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(dx, bytes, self, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    /* A misuse is caught with a message: wrong kind. */
    EXPECT(aclrtMemcpy(dg, bytes, grad, bytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_ERROR_INVALID_PARAM);
    EXPECT(strstr(ascendSimLastReport(), "ACL_MEMCPY_DEVICE_TO_HOST") != NULL);

    aclTensor *tg = make_tensor(shape, 2, dg);
    aclTensor *tx = make_tensor(shape, 2, dx);
    aclTensor *tout = make_tensor(shape, 2, dout);
    EXPECT(tg && tx && tout);

    uint64_t phase1_calls = ascendSimGetCallCount("aclnnMishBackwardGetWorkspaceSize");
    CHECK(aclnnMishBackwardGetWorkspaceSize(tg, tx, tout, &ws_size, &executor));
    EXPECT(ascendSimGetCallCount("aclnnMishBackwardGetWorkspaceSize") == phase1_calls + 1);
    if (ws_size > 0) {
        CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    CHECK(aclnnMishBackward(ws, ws_size, executor, stream));
    CHECK(aclrtSynchronizeStream(stream));
    /* The executor was consumed. */
    EXPECT(aclnnMishBackward(ws, ws_size, executor, stream) == ACLNN_ERR_PARAM_INVALID);

    CHECK(aclrtMemcpy(result, sizeof result, dout, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 8; i++) {
        if (fabsf(result[i] - expected[i]) > 1e-5f) {
            fprintf(stderr, "result[%d] = %f, expected %f\n", i, result[i], expected[i]);
            failures++;
        }
    }

    /* An operator with attributes: out = grad + alpha * self, alpha a double scalar that
     * may be destroyed once phase 1 has taken it. */
    double alpha = -0.5;
    aclScalar *a = aclCreateScalar(&alpha, ACL_DOUBLE);
    EXPECT(a != NULL);
    EXPECT(aclCreateScalar(NULL, ACL_DOUBLE) == NULL);
    CHECK(aclnnAddGetWorkspaceSize(tg, tx, a, tout, &ws_size, &executor));
    CHECK(aclDestroyScalar(a));
    EXPECT(ws_size == 0);
    CHECK(aclnnAdd(NULL, 0, executor, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(result, sizeof result, dout, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 8; i++) {
        EXPECT(result[i] == grad[i] + -0.5f * self[i]);
    }
    /* An empty int array is a valid object. */
    aclIntArray *none = aclCreateIntArray(NULL, 0);
    uint64_t n = 9;
    EXPECT(none != NULL && aclGetIntArraySize(none, &n) == 0 && n == 0);
    CHECK(aclDestroyIntArray(none));

    /* Fault injection: the next aclrtMalloc fails with 207001. */
    void *p = NULL;
    CHECK(ascendSimSetFault("aclrtMalloc", 1));
    EXPECT(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_RT_MEMORY_ALLOCATION);

    CHECK(aclDestroyTensor(tg));
    CHECK(aclDestroyTensor(tx));
    CHECK(aclDestroyTensor(tout));
    CHECK(aclrtFree(dg));
    CHECK(aclrtFree(dx));
    CHECK(aclrtFree(dout));
    if (ws) {
        CHECK(aclrtFree(ws));
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));

    ascendSimCounters c;
    CHECK(ascendSimGetCounters(&c));
    EXPECT(c.allocations == 0 && c.allocated_bytes == 0 && c.tensors == 0 && c.executors == 0 &&
           c.streams == 0 && c.events == 0 && c.contexts == 0 && c.scalars == 0 && c.arrays == 0 &&
           c.lists == 0);
    CHECK(aclFinalize());
    EXPECT(aclrtSetDevice(0) == ACL_ERROR_UNINITIALIZE);

    if (failures) {
        fprintf(stderr, "sim_smoke: %d failure(s)\n", failures);
        return 1;
    }
    printf("sim_smoke: ok (MishBackward sample and Add with a scalar match, no live objects)\n");
    return 0;
}
