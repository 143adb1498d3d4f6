// SPDX-License-Identifier: Apache-2.0
/* Java Flight Recorder recordings (what pyroscope-java and async-profiler
 * send as format=jfr): each chunk's metadata and constant pools, then its
 * events, handed out one sample at a time with their stacks resolved. */
#ifndef PROFD_PYROSCOPE_JFR_READER_H
#define PROFD_PYROSCOPE_JFR_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The events profiles are made of, by the profile they go to. */
enum jfr_kind {
    JFR_CPU,            /* jdk.ExecutionSample, of a thread not STATE_SLEEPING */
    JFR_WALL,           /* jdk.ExecutionSample in async-profiler's wall mode (an ActiveSetting
                           event=wall); profiler.WallClockSample: samples */
    JFR_ALLOC_IN_TLAB,  /* jdk.ObjectAllocationInNewTLAB: tlabSize */
    JFR_ALLOC_OUTSIDE,  /* jdk.ObjectAllocationOutsideTLAB: allocationSize */
    JFR_MONITOR,        /* jdk.JavaMonitorEnter: its duration */
    JFR_PARK,           /* jdk.ThreadPark: its duration */
    JFR_LIVE,           /* profiler.LiveObject (async-profiler) */
    JFR_ALLOC_SAMPLE,   /* jdk.ObjectAllocationSample (the JDK's default): weight */
    JFR_MALLOC,         /* profiler.Malloc (async-profiler's native allocations): size */
    JFR_KINDS
};

/* A frame: its class's and method's names (not NUL-terminated, valid for
 * the callback's duration) and line (0 when unknown). */
struct jfr_frame {
    const char *class_name, *method;
    uint32_t class_len, method_len;
    int32_t line;
};

struct jfr_sample {
    enum jfr_kind kind;
    const struct jfr_frame *frames;   /* leaf first */
    uint32_t nframes;
    int64_t value;     /* bytes (allocations), nanoseconds (JFR_MONITOR, JFR_PARK), samples
                          (JFR_WALL); else 0 */
    int64_t context;   /* async-profiler's contextId (labels); 0 when none */
};

/* What a recording says of itself: its first chunk's start and the span to
 * its last chunk's end, in nanoseconds since the epoch. */
struct jfr_span {
    int64_t start_nanos, duration_nanos;
};

/*
 * Reads every chunk of the recording data[0..len) and calls fn(arg, s) for
 * each sample of an event enum jfr_kind names that has a stack trace (other
 * events are skipped);
 * fn returning false stops the read. Returns the number of samples, or -1
 * with why naming what is wrong and at which byte.
 */
long jfr_read(const uint8_t *data, size_t len, bool (*fn)(void *arg, const struct jfr_sample *s),
              void *arg, struct jfr_span *span, char *why, size_t whylen);

#endif
