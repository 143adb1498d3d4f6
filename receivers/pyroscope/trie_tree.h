// SPDX-License-Identifier: Apache-2.0
/* The binary stack formats of Pyroscope's older agents, /ingest's
 * format=trie and format=tree (or the Content-Types
 * binary/octet-stream+trie and +tree), into the profile folded stacks
 * make (folded.h). Numbers are unsigned LEB128 varints. */
#ifndef PROFD_PYROSCOPE_TRIE_TREE_H
#define PROFD_PYROSCOPE_TRIE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "folded.h"

enum binary_stacks {
    /* A serialized trie: nodes depth first, each its label's length and
     * bytes (appended to its parent's key), its value and its number of
     * children; a node with a value is a sample of its key
     * ("frame;frame;leaf"). Nodes follow until the data ends. */
    STACKS_TRIE,
    /* A serialized tree: nodes depth first from its root, each its frame
     * name's length and bytes, its self value and its number of children;
     * a node below the root with a self value is a sample of the names
     * from the root's child down to it. */
    STACKS_TREE,
};

/* The profile of data[0..len) in format, or NULL with why naming the byte
 * of the node that is cut short or is not a stack. */
struct profd_profile *binary_stacks_profile(const struct profd_host *host,
                                            enum binary_stacks format, const uint8_t *data,
                                            size_t len, const struct folded_meta *meta,
                                            char *why, size_t whylen);

#endif
