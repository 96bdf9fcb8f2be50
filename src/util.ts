// Small helpers every part of the action shares, each written once.

/** setTimeout cannot wait longer than this; a longer delay would fire at once. */
export const MAX_DELAY_MS = 2 ** 31 - 1

/** A delay setTimeout honours: never negative, never past MAX_DELAY_MS. */
export const clampDelay = (ms: number): number => Math.max(0, Math.min(ms, MAX_DELAY_MS))

/** The message of anything thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The HTTP status of a failed request (Octokit's errors carry one), if any. */
export function statusOf(error: unknown): number | undefined {
  const s = (error as { status?: unknown } | null | undefined)?.status
  return typeof s === 'number' ? s : undefined
}

export const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, clampDelay(ms)))

/** `p`, or `fallback` once `ms` have passed, whichever comes first. */
export function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<F>(resolve => {
    timer = setTimeout(() => resolve(fallback), clampDelay(ms))
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** `p`, or a rejection as soon as `signal` aborts. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('the run was stopped'))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the run was stopped'))
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** This process's user id; -1 where there are no POSIX ids (Windows). */
export const currentUid = (): number => (typeof process.getuid === 'function' ? process.getuid() : -1)

export interface Repo {
  owner: string
  repo: string
}

/** `owner/name` (GITHUB_REPOSITORY) split, or undefined when it is not of that shape. */
export function repoOf(name: string | undefined): Repo | undefined {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(name ?? '')
  return m ? { owner: m[1], repo: m[2] } : undefined
}
