/*
 * ir/files.c: opening user files for reading only when they are regular
 * files (ir/files.h says why and what is refused). The model loader
 * (ir/model.c), the safetensors reader (ir/safetensors.c) and the compile
 * cache (sdk/src/cache.c) open what they read through here.
 */
#include "ir/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not regular is, for messages. */
static const char *kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link, which is not followed here";
  return "not a regular file";
}

static alloy_error *not_regular(const char *path, mode_t mode) {
  return alloy_error_new(ALLOY_ERR_IO, "%s: not a regular file (%s)", path, kind_of(mode));
}

alloy_error *alloy_file_open_at(int dirfd, const char *path, unsigned flags, int *fd,
                                uint64_t *size) {
  *fd = -1;
  if (!path) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_file_open: NULL path");
  bool nofollow = flags & ALLOY_FILE_NOFOLLOW;
  /* The type first, so that no FIFO or device is ever opened. */
  struct stat before;
  if (fstatat(dirfd, path, &before, nofollow ? AT_SYMLINK_NOFOLLOW : 0) != 0)
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (!S_ISREG(before.st_mode)) return not_regular(path, before.st_mode);
  int f = openat(dirfd, path,
                 O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  if (f < 0) {
    int err = errno;
    if (nofollow && err == ELOOP) return not_regular(path, S_IFLNK);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open: %s", path, strerror(err));
  }
  /* Again on what was opened: the path may have been swapped meanwhile. */
  struct stat sb;
  if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    mode_t mode = sb.st_mode;
    close(f);
    return not_regular(path, mode);
  }
  if (sb.st_dev != before.st_dev || sb.st_ino != before.st_ino) {
    close(f);
    return alloy_error_new(ALLOY_ERR_IO, "%s: the file was replaced while it was being opened",
                           path);
  }
  int fl = fcntl(f, F_GETFL);
  if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    int err = errno;
    close(f);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open: %s", path, strerror(err));
  }
  *fd = f;
  if (size) *size = (uint64_t)sb.st_size;
  return NULL;
}

alloy_error *alloy_file_open(const char *path, unsigned flags, int *fd, uint64_t *size) {
  return alloy_file_open_at(AT_FDCWD, path, flags, fd, size);
}

alloy_error *alloy_file_read_at(int dirfd, const char *path, unsigned flags, uint64_t max_bytes,
                                char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  int fd;
  uint64_t size;
  alloy_error *e = alloy_file_open_at(dirfd, path, flags, &fd, &size);
  if (e) return e;
  if (size > max_bytes || size >= SIZE_MAX) {
    close(fd);
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s: %llu bytes are more than the %llu allowed",
                           path, (unsigned long long)size, (unsigned long long)max_bytes);
  }
  char *buf = malloc((size_t)size + 1);
  if (!buf) {
    close(fd);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  /* What stat said, no more: a file that grows meanwhile is cut there. */
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, (size_t)size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      free(buf);
      return alloy_error_new(ALLOY_ERR_IO, "%s: cannot read: %s", path, strerror(err));
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  close(fd);
  buf[got] = '\0';
  *data = buf;
  *len = got;
  return NULL;
}

alloy_error *alloy_file_map(const char *path, unsigned flags, void **map, size_t *size) {
  *map = NULL;
  *size = 0;
  int fd;
  uint64_t bytes;
  alloy_error *e = alloy_file_open(path, flags, &fd, &bytes);
  if (e) return e;
  if (bytes >= SIZE_MAX) {
    close(fd);
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s: too large to map", path);
  }
  void *m = bytes ? mmap(NULL, (size_t)bytes, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  int err = errno;
  close(fd);
  if (m == MAP_FAILED)
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot map: %s", path, strerror(err));
  *map = m;
  *size = (size_t)bytes;
  return NULL;
}
