/* LD_PRELOAD fault injection for the storage-fault tests: once a process (whose command line
   contains FAULT_CMDLINE, when set) has made FAULT_AFTER writes to files whose path contains
   FAULT_MATCH (and not FAULT_EXCLUDE), every further write, ftruncate or fallocate to such a
   file fails with errno FAULT_ERRNO. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long count;

static int this_process(void) {
    static int known = -1;
    const char *want = getenv("FAULT_CMDLINE");
    char cmdline[8192];
    ssize_t n, i;
    int fd;
    if (known >= 0) return known;
    if (!want || !*want) return known = 1;
    fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return known = 0;
    n = read(fd, cmdline, sizeof cmdline - 1);
    close(fd);
    if (n <= 0) return known = 0;
    for (i = 0; i < n; i++) if (!cmdline[i]) cmdline[i] = ' ';
    cmdline[n] = 0;
    return known = strstr(cmdline, want) != NULL;
}

static int target(int fd) {
    const char *match = getenv("FAULT_MATCH");
    if (!this_process()) return 0;
    const char *exclude = getenv("FAULT_EXCLUDE");
    char link[64], path[4096];
    ssize_t n;
    if (!match) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    if (!strstr(path, match)) return 0;
    if (exclude && *exclude && strstr(path, exclude)) return 0;
    return 1;
}

static int fail(int fd) {
    const char *after = getenv("FAULT_AFTER");
    const char *code = getenv("FAULT_ERRNO");
    if (!target(fd)) return 0;
    if (++count <= (after ? atol(after) : 0)) return 0;
    errno = code ? atoi(code) : ENOSPC;
    return 1;
}

#define REAL(name, ret, ...) \
    static ret (*real)(__VA_ARGS__); \
    if (!real) real = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

ssize_t write(int fd, const void *buf, size_t n) {
    REAL("write", ssize_t, int, const void *, size_t);
    if (fail(fd)) return -1;
    return real(fd, buf, n);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL("pwrite", ssize_t, int, const void *, size_t, off_t);
    if (fail(fd)) return -1;
    return real(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    REAL("pwrite64", ssize_t, int, const void *, size_t, off_t);
    if (fail(fd)) return -1;
    return real(fd, buf, n, off);
}
int ftruncate(int fd, off_t len) {
    REAL("ftruncate", int, int, off_t);
    if (fail(fd)) return -1;
    return real(fd, len);
}
int ftruncate64(int fd, off_t len) {
    REAL("ftruncate64", int, int, off_t);
    if (fail(fd)) return -1;
    return real(fd, len);
}
int posix_fallocate(int fd, off_t off, off_t len) {
    REAL("posix_fallocate", int, int, off_t, off_t);
    if (fail(fd)) return errno;
    return real(fd, off, len);
}
int posix_fallocate64(int fd, off_t off, off_t len) {
    REAL("posix_fallocate64", int, int, off_t, off_t);
    if (fail(fd)) return errno;
    return real(fd, off, len);
}
