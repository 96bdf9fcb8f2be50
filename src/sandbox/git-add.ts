// How git is told to write many objects cheaply: shared by the command server's
// set-up (root) and the hand-back (the runner or the run's user). Options and
// environment only; nothing here runs anything.

/**
 * glibc hands the heap's top back to the kernel whenever it shrinks: git's zlib
 * state (~256 KiB, made and freed per object written) then costs a brk and fresh
 * zeroed pages each time. Keeping 1 MiB of slack makes `git add` of 5,000 small
 * files ~5x cheaper (Dec 2026: 1.8 s -> 0.35 s); other C libraries ignore it.
 */
export const GIT_MALLOC_ENV: Readonly<Record<string, string>> = { GLIBC_TUNABLES: 'glibc.malloc.top_pad=1048576' }

/**
 * `-c` options for a `git add` that writes many objects at once: every blob goes
 * into one pack (bulk check-in) instead of a loose file each, compressed fast.
 * Only for `add`: for diff, files over core.bigFileThreshold count as binary.
 */
export const BULK_ADD_CONFIG: readonly string[] = ['core.bigFileThreshold=1', 'core.compression=1'].flatMap(c => ['-c', c])
