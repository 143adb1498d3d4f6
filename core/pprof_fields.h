// SPDX-License-Identifier: Apache-2.0
/* The field numbers of perftools.profiles.Profile, for the codec's readers. */
#ifndef PROFD_PPROF_FIELDS_H
#define PROFD_PPROF_FIELDS_H

enum {
    F_SAMPLE_TYPE = 1, F_SAMPLE, F_MAPPING, F_LOCATION, F_FUNCTION, F_STRING, F_DROP_FRAMES,
    F_KEEP_FRAMES, F_TIME, F_DURATION, F_PERIOD_TYPE, F_PERIOD, F_COMMENT, F_DEFAULT_TYPE,
    F_DOC_URL, F_LAST_
};

#endif
