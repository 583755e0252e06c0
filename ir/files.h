/*
 * ir/files.h: opening the files a user or another process hands Alloy
 * (models, --inputs and --check tensors, weights files, compile-cache
 * entries) without trusting what they are. Implemented in ir/files.c.
 *
 * Each function opens a path for reading only when it names a regular
 * file: a FIFO (whose open or read would block forever), a device, a
 * socket or a directory is refused before anything is read, with an
 * ALLOY_ERR_IO error naming the path and what it is ("x.air: not a regular
 * file (a FIFO)"). The type is checked with stat before the open, so that
 * no device is ever opened, and again on the open descriptor, so that a
 * file swapped in between is refused too; the open itself never blocks
 * (O_NONBLOCK, cleared once the file is known to be regular). With
 * ALLOY_FILE_NOFOLLOW a symbolic link as the last component is refused
 * (O_NOFOLLOW): for files in a place others may plant links in, such as a
 * cache folder. Messages never quote a file's bytes.
 *
 * dirfd is a directory descriptor the path is relative to, or AT_FDCWD
 * (from <fcntl.h>) for an ordinary path. Thread-safe; no global state.
 */
#ifndef ALLOY_IR_FILES_H
#define ALLOY_IR_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "alloy/error.h"

enum {
  ALLOY_FILE_NOFOLLOW = 1u << 0, /* refuse a symbolic link as the last component */
};

/* Opens path read-only (O_CLOEXEC) if it is a regular file. *fd: the open
 * descriptor, the caller closes it; *size (may be NULL): the file's size
 * in bytes. On error *fd is -1. */
alloy_error *alloy_file_open_at(int dirfd, const char *path, unsigned flags, int *fd,
                                uint64_t *size);
alloy_error *alloy_file_open(const char *path, unsigned flags, int *fd, uint64_t *size);

/* The whole file in malloc'd memory, NUL-terminated (the NUL is not
 * counted in *len); a file of more than max_bytes is refused without being
 * read (ALLOY_ERR_UNSUPPORTED). On error *data is NULL. */
alloy_error *alloy_file_read_at(int dirfd, const char *path, unsigned flags, uint64_t max_bytes,
                                char **data, size_t *len);

/* The whole file mapped read-only (MAP_PRIVATE): release with
 * munmap(*map, *size). An empty file gives *map NULL and *size 0 (mmap
 * refuses a length of 0). */
alloy_error *alloy_file_map(const char *path, unsigned flags, void **map, size_t *size);

#endif
