/*
 * Smoke test of the simulated HCCL in libascend_sim.so through the project's own
 * hccl_sys.h: two ranks on two simulated devices, one thread each, an all-reduce and an
 * all-gather checked element by element, the argument checks' codes, the error strings,
 * and no live communicator at the end. Built and run by scripts/sim-c-test.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include "hccl_sys.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t communicators, queued_collectives;
} ascendSimHcclCounters;
int32_t ascendSimGetHcclCounters(ascendSimHcclCounters *out);

static HcclComm comms[2];

typedef struct {
    int rank;
    int failed;
    float sum[4];
    float gathered[8];
} Rank;

#define TRY(expr)                                                                        \
    do {                                                                                 \
        long long rc_ = (long long)(expr);                                               \
        if (rc_ != 0) {                                                                  \
            const char *m_ = aclGetRecentErrMsg();                                       \
            fprintf(stderr, "rank %d: %s returned %lld: %s\n", r->rank, #expr, rc_,      \
                    m_ ? m_ : "(no message)");                                           \
            r->failed = 1;                                                               \
            return NULL;                                                                 \
        }                                                                                \
    } while (0)

static void *run_rank(void *arg) {
    Rank *r = arg;
    aclrtStream stream;
    void *send, *sum, *gathered;
    float mine[4];
    for (int i = 0; i < 4; i++) mine[i] = (float)(r->rank + 1) * (float)(i + 1);
    TRY(aclrtSetDevice(r->rank));
    TRY(aclrtCreateStream(&stream));
    TRY(aclrtMalloc(&send, sizeof mine, ACL_MEM_MALLOC_HUGE_FIRST));
    TRY(aclrtMalloc(&sum, sizeof mine, ACL_MEM_MALLOC_HUGE_FIRST));
    TRY(aclrtMalloc(&gathered, 2 * sizeof mine, ACL_MEM_MALLOC_HUGE_FIRST));
    TRY(aclrtMemcpy(send, sizeof mine, mine, sizeof mine, ACL_MEMCPY_HOST_TO_DEVICE));
    TRY(HcclAllReduce(send, sum, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r->rank], stream));
    TRY(HcclAllGather(send, gathered, 4, HCCL_DATA_TYPE_FP32, comms[r->rank], stream));
    TRY(aclrtSynchronizeStream(stream));
    TRY(aclrtMemcpy(r->sum, sizeof r->sum, sum, sizeof r->sum, ACL_MEMCPY_DEVICE_TO_HOST));
    TRY(aclrtMemcpy(r->gathered, sizeof r->gathered, gathered, sizeof r->gathered,
                    ACL_MEMCPY_DEVICE_TO_HOST));
    TRY(aclrtFree(send));
    TRY(aclrtFree(sum));
    TRY(aclrtFree(gathered));
    TRY(aclrtDestroyStream(stream));
    TRY(HcclCommDestroy(comms[r->rank]));
    TRY(aclrtResetDevice(r->rank));
    return NULL;
}

int main(void) {
    int failures = 0;
    setenv("ASCEND_SIM_DEVICES", "Ascend910B4,Ascend910B4", 1);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        fprintf(stderr, "runtime set-up failed\n");
        return 1;
    }
    int32_t devices[2] = {0, 1};
    if (HcclCommInitAll(0, devices, comms) != HCCL_E_PARA) failures++;
    if (HcclCommInitAll(2, devices, NULL) != HCCL_E_PTR) failures++;
    if (HcclCommInitAll(2, devices, comms) != HCCL_SUCCESS) {
        fprintf(stderr, "HcclCommInitAll: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    uint32_t n = 0, rank = 9;
    if (HcclGetRankSize(comms[1], &n) != HCCL_SUCCESS || n != 2) failures++;
    if (HcclGetRankId(comms[1], &rank) != HCCL_SUCCESS || rank != 1) failures++;
    if (strcmp(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout") != 0) failures++;

    Rank ranks[2] = {{.rank = 0}, {.rank = 1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, run_rank, &ranks[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; i++) {
        failures += ranks[i].failed;
        for (int k = 0; k < 4; k++) {
            if (ranks[i].sum[k] != 3.0f * (float)(k + 1)) failures++;
            if (ranks[i].gathered[k] != (float)(k + 1)) failures++;
            if (ranks[i].gathered[4 + k] != 2.0f * (float)(k + 1)) failures++;
        }
    }
    ascendSimHcclCounters c;
    if (ascendSimGetHcclCounters(&c) != 0 || c.communicators != 0) failures++;
    aclrtResetDevice(0);
    if (failures) {
        fprintf(stderr, "hccl_smoke: %d failure(s)\n", failures);
        return 1;
    }
    printf("hccl_smoke: ok (all-reduce and all-gather over 2 ranks, no live communicator)\n");
    return 0;
}
