// openat2(2) for a confined folder: one call resolves a whole path below the folder and refuses
// any symbolic link on the way, where a walk of openat calls takes one call per name
// (docs/BENCHMARKS-JOURNAL.md, "What the confined folder walk costs"). glibc has no wrapper for it, and
// Swift cannot call the variadic syscall(2).
#ifndef VT_OPEN_BENEATH_H
#define VT_OPEN_BENEATH_H

#ifdef __cplusplus
extern "C" {
#endif

/// Opens `path` (relative, without "..") below the folder open at `folder`, following no
/// symbolic link at any name of it (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). `mode` is used only
/// with O_CREAT. Returns the descriptor, or -1 with errno: ELOOP for a link on the way,
/// ENOSYS where the system has no openat2 (Linux before 5.6, other systems).
int vt_open_beneath(int folder, const char *path, int flags, unsigned int mode);

#ifdef __cplusplus
}
#endif

#endif
