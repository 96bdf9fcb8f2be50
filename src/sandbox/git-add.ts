// The environment of a `git add` that writes many objects: shared by the command
// server's set-up (root) and the hand-back (the runner or the run's user).
// Environment only; nothing here runs anything.

/**
 * glibc hands the heap's top back to the kernel whenever it shrinks: git's zlib
 * state (~256 KiB, made and freed per object written) then costs a brk and fresh
 * zeroed pages each time. Keeping 1 MiB of slack makes `git add` of 5,000 small
 * new files ~3x cheaper (Dec 2026: 4.6 s -> 1.7 s); other C libraries ignore it.
 * (Bulk check-in into one pack, core.bigFileThreshold=1, was faster still for
 * new files, but it compresses every file before it sees the object exists: a
 * copy's unchanged large files cost 3-9x more. Loose objects hash first.)
 */
export const GIT_MALLOC_ENV: Readonly<Record<string, string>> = { GLIBC_TUNABLES: 'glibc.malloc.top_pad=1048576' }
