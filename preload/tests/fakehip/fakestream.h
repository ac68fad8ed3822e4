/* The fake HIP's streams: each a real thread executing its operations in
 * order (memory writes, value waits, async copies, event records), so an
 * ordering bug in the interposer shows up as a wrong value or a timeout.
 * A value wait that is not satisfied within FAKE_WAIT_TIMEOUT_S ends the
 * process with a message (the test fails). The legacy default stream
 * (NULL) is created on first use. Test hooks: fakehip_stream_hold(stream,
 * 1) keeps the thread from starting operations until released with 0;
 * fakehip_stream_pending(stream) says how many are queued or running.
 * Included once, by fakehip.c. */
#ifndef RELAUNCH_FAKESTREAM_H
#define RELAUNCH_FAKESTREAM_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_WAIT_TIMEOUT_S 20
#define FAKE_QUEUE 4096

enum fake_op_kind { FAKE_WRITE32, FAKE_WRITE64, FAKE_WAIT32, FAKE_WAIT64, FAKE_COPY, FAKE_FILL, FAKE_EVENT };

struct fake_event_state { long recorded, reached; };

struct fake_op {
    enum fake_op_kind kind;
    void *ptr;
    const void *src;
    size_t bytes;
    uint64_t value, mask;
    unsigned flags;
    struct fake_event_state *event;
    long event_seq;
};

struct fake_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fake_op q[FAKE_QUEUE];
    size_t head, tail; /* queued: head..tail; the one at head may be running */
    int held;
    pthread_t thread;
    struct fake_stream *next;
};

static pthread_mutex_t fake_streams_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_stream *fake_streams, *fake_default;

static double fake_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fake_nap(void) {
    struct timespec t = {0, 20000};
    nanosleep(&t, NULL);
}

/* hipStreamWaitValue flags: Gte 0, Eq 1, And 2, Nor 3 (hip_runtime_api.h). */
static int fake_satisfied(uint64_t v, uint64_t value, unsigned flags) {
    switch (flags) {
    case 0: return v >= value;
    case 1: return v == value;
    case 2: return (v & value) != 0;
    case 3: return ~(v | value) != 0;
    default: return 0;
    }
}

static void fake_run(struct fake_op *op) {
    switch (op->kind) {
    case FAKE_WRITE32: __atomic_store_n((uint32_t *)op->ptr, (uint32_t)op->value, __ATOMIC_SEQ_CST); break;
    case FAKE_WRITE64: __atomic_store_n((uint64_t *)op->ptr, op->value, __ATOMIC_SEQ_CST); break;
    case FAKE_WAIT32:
    case FAKE_WAIT64: {
        double start = fake_now();
        for (;;) {
            uint64_t v = op->kind == FAKE_WAIT32 ? __atomic_load_n((uint32_t *)op->ptr, __ATOMIC_SEQ_CST)
                                                 : __atomic_load_n((uint64_t *)op->ptr, __ATOMIC_SEQ_CST);
            if (fake_satisfied(v & op->mask, op->value, op->flags)) break;
            if (fake_now() - start > FAKE_WAIT_TIMEOUT_S) {
                fprintf(stderr, "fakehip: hipStreamWaitValue on %p (flags %u, value %#llx) timed out after %d s; "
                        "it holds %#llx\n", op->ptr, op->flags, (unsigned long long)op->value,
                        FAKE_WAIT_TIMEOUT_S, (unsigned long long)v);
                exit(3);
            }
            fake_nap();
        }
        break;
    }
    case FAKE_COPY: memmove(op->ptr, op->src, op->bytes); break;
    case FAKE_FILL: /* value: the dword pattern; bytes a multiple of `flags` (1, 2 or 4) */
        for (size_t i = 0; i < op->bytes; i += op->flags) memcpy((char *)op->ptr + i, &op->value, op->flags);
        break;
    case FAKE_EVENT: __atomic_store_n(&op->event->reached, op->event_seq, __ATOMIC_SEQ_CST); break;
    }
}

static void *fake_thread(void *arg) {
    struct fake_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->head == s->tail || s->held) pthread_cond_wait(&s->cv, &s->mu);
        struct fake_op op = s->q[s->head % FAKE_QUEUE];
        pthread_mutex_unlock(&s->mu);
        fake_run(&op);
        pthread_mutex_lock(&s->mu);
        s->head++;
        pthread_cond_broadcast(&s->cv);
    }
    return NULL;
}

static struct fake_stream *fake_stream_new(void) {
    struct fake_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, fake_thread, s) != 0) { free(s); return NULL; }
    pthread_detach(s->thread);
    pthread_mutex_lock(&fake_streams_mu);
    s->next = fake_streams;
    fake_streams = s;
    pthread_mutex_unlock(&fake_streams_mu);
    return s;
}

static struct fake_stream *fake_stream_of(void *stream) {
    if (stream) return stream;
    pthread_mutex_lock(&fake_streams_mu);
    int create = !fake_default;
    pthread_mutex_unlock(&fake_streams_mu);
    if (create) {
        struct fake_stream *s = fake_stream_new();
        pthread_mutex_lock(&fake_streams_mu);
        if (!fake_default) fake_default = s;
        pthread_mutex_unlock(&fake_streams_mu);
    }
    return fake_default;
}

static hipError_t fake_push(void *stream, struct fake_op op) {
    struct fake_stream *s = fake_stream_of(stream);
    if (!s) return 2;
    pthread_mutex_lock(&s->mu);
    while (s->tail - s->head == FAKE_QUEUE) pthread_cond_wait(&s->cv, &s->mu);
    s->q[s->tail % FAKE_QUEUE] = op;
    s->tail++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void fake_stream_sync(void *stream) {
    struct fake_stream *s = fake_stream_of(stream);
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    while (s->head != s->tail) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void fake_device_sync(void) {
    pthread_mutex_lock(&fake_streams_mu);
    struct fake_stream *list = fake_streams;
    pthread_mutex_unlock(&fake_streams_mu);
    for (struct fake_stream *s = list; s; s = s->next) fake_stream_sync(s);
}

static hipError_t fake_event_record(struct fake_event_state *e, void *stream) {
    struct fake_op op = {.kind = FAKE_EVENT, .event = e, .event_seq = ++e->recorded};
    return fake_push(stream, op);
}

static void fake_event_sync(struct fake_event_state *e) {
    while (__atomic_load_n(&e->reached, __ATOMIC_SEQ_CST) < e->recorded) fake_nap();
}

/* Stream memory operations; left out of the build (FAKEHIP_HOST_GRAPHS,
 * see fakehip.c) to stand for a HIP without them, which sends the
 * interposer down its synchronous launch path, unless FAKEHIP_STREAM_OPS
 * keeps them (host-run graphs behind the stream-ordered path). */
#if !defined(FAKEHIP_HOST_GRAPHS) || defined(FAKEHIP_STREAM_OPS)
hipError_t hipStreamWriteValue32(void *stream, void *ptr, uint32_t value, unsigned int flags) {
    if (!ptr || flags) return 1;
    return fake_push(stream, (struct fake_op){.kind = FAKE_WRITE32, .ptr = ptr, .value = value});
}

hipError_t hipStreamWriteValue64(void *stream, void *ptr, uint64_t value, unsigned int flags) {
    if (!ptr || flags) return 1;
    return fake_push(stream, (struct fake_op){.kind = FAKE_WRITE64, .ptr = ptr, .value = value});
}

hipError_t hipStreamWaitValue32(void *stream, void *ptr, uint32_t value, unsigned int flags, uint32_t mask) {
    if (!ptr || flags > 3) return 1;
    return fake_push(stream, (struct fake_op){.kind = FAKE_WAIT32, .ptr = ptr, .value = value, .flags = flags,
                                              .mask = mask});
}

hipError_t hipStreamWaitValue64(void *stream, void *ptr, uint64_t value, unsigned int flags, uint64_t mask) {
    if (!ptr || flags > 3) return 1;
    return fake_push(stream, (struct fake_op){.kind = FAKE_WAIT64, .ptr = ptr, .value = value, .flags = flags,
                                              .mask = mask});
}
#endif

/* Defined by fakehip.c: on a capturing stream, appends a (memset or
 * memcpy) node to the capture and returns 1; else 0. */
static int fake_capture_transfer(void *stream);

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    (void)kind;
    if (!dst || !src) return 1;
    if (fake_capture_transfer(stream)) return 0;
    return fake_push(stream, (struct fake_op){.kind = FAKE_COPY, .ptr = dst, .src = src, .bytes = bytes});
}

/* Byte and dword fills, in stream order (or a node of the capture). */
hipError_t hipMemsetAsync(void *dst, int value, size_t bytes, void *stream) {
    if (!dst) return 1;
    if (fake_capture_transfer(stream)) return 0;
    return fake_push(stream, (struct fake_op){.kind = FAKE_FILL, .ptr = dst, .bytes = bytes, .flags = 1,
                                              .value = (uint8_t)value});
}

hipError_t hipMemsetD32Async(void *dst, int value, size_t count, void *stream) {
    if (!dst) return 1;
    if (fake_capture_transfer(stream)) return 0;
    return fake_push(stream, (struct fake_op){.kind = FAKE_FILL, .ptr = dst, .bytes = 4 * count, .flags = 4,
                                              .value = (uint32_t)value});
}

/* Not through hipMemsetAsync: an interposer would see that call too. */
hipError_t hipMemsetD8Async(void *dst, unsigned char value, size_t count, void *stream) {
    if (!dst) return 1;
    if (fake_capture_transfer(stream)) return 0;
    return fake_push(stream, (struct fake_op){.kind = FAKE_FILL, .ptr = dst, .bytes = count, .flags = 1,
                                              .value = value});
}

hipError_t hipMemsetD16Async(void *dst, unsigned short value, size_t count, void *stream) {
    if (!dst) return 1;
    if (fake_capture_transfer(stream)) return 0;
    return fake_push(stream, (struct fake_op){.kind = FAKE_FILL, .ptr = dst, .bytes = 2 * count, .flags = 2,
                                              .value = value});
}

/* 2-D forms: one node of the capture, or one stream op per row. */
hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t height, int kind, void *stream) {
    (void)kind;
    if (!dst || !src || (height > 1 && (dpitch < width || spitch < width))) return 1;
    if (fake_capture_transfer(stream)) return 0;
    for (size_t r = 0; r < height; r++) {
        hipError_t rc = fake_push(stream, (struct fake_op){.kind = FAKE_COPY, .ptr = (char *)dst + r * dpitch,
                                                           .src = (const char *)src + r * spitch, .bytes = width});
        if (rc) return rc;
    }
    return 0;
}

hipError_t hipMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height, void *stream) {
    if (!dst || (height > 1 && pitch < width)) return 1;
    if (fake_capture_transfer(stream)) return 0;
    for (size_t r = 0; r < height; r++) {
        hipError_t rc = fake_push(stream, (struct fake_op){.kind = FAKE_FILL, .ptr = (char *)dst + r * pitch,
                                                           .bytes = width, .flags = 1, .value = (uint8_t)value});
        if (rc) return rc;
    }
    return 0;
}

hipError_t hipDeviceSynchronize(void) {
    fake_device_sync();
    return 0;
}

/* hipHostMalloc: host memory the GPU agent may access (flags ignored). */
hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags);
hipError_t hipHostFree(void *ptr);

void fakehip_stream_hold(void *stream, int on) {
    struct fake_stream *s = fake_stream_of(stream);
    pthread_mutex_lock(&s->mu);
    s->held = on;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

long fakehip_stream_pending(void *stream) {
    struct fake_stream *s = fake_stream_of(stream);
    pthread_mutex_lock(&s->mu);
    long n = (long)(s->tail - s->head);
    pthread_mutex_unlock(&s->mu);
    return n;
}

#endif
