#include "vt_open_beneath.h"

#include <errno.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

int vt_open_beneath(int folder, const char *path, int flags, unsigned int mode) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(unsigned int)flags;
    // openat2 refuses a mode without O_CREAT (EINVAL), where openat ignores it.
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long result = syscall(SYS_openat2, folder, path, &how, sizeof how);
    return (int)result;
#else
    (void)folder; (void)path; (void)flags; (void)mode;
    errno = ENOSYS;
    return -1;
#endif
}
