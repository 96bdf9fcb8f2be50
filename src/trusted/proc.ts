// The walks over /proc: processes, their parents, groups and states; killing a command's whole tree. Used by the
// action (runBash, the recovery) and by the command server.
import { closeSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs'

/** A /proc file into one buffer kept for it (readFileSync allocates 64 KiB for each size-0 file); throws when gone. */
let procBuf = Buffer.allocUnsafe(16 * 1024)
export function readProc(file: string): Buffer {
  const fd = openSync(file, 'r')
  try {
    let n = 0
    for (;;) {
      if (n === procBuf.length) {
        const bigger = Buffer.allocUnsafe(procBuf.length * 2)
        procBuf.copy(bigger, 0, 0, n)
        procBuf = bigger
      }
      const r = readSync(fd, procBuf, n, procBuf.length - n, null)
      if (r === 0) break
      n += r
    }
    // a view of the shared buffer: valid until the next read
    return procBuf.subarray(0, n)
  } finally {
    closeSync(fd)
  }
}

/** Every process /proc shows (none without /proc). */
export function pids(): number[] {
  try {
    return readdirSync('/proc').flatMap(n => (/^\d+$/.test(n) ? [Number(n)] : []))
  } catch {
    return []
  }
}

export interface ProcStat {
  /** R, S, D, Z (zombie), X (dead)... */
  state: string
  ppid: number
  pgrp: number
}

/** Fields of /proc/PID/stat after the command name (which may hold spaces and parentheses). */
export function procStat(pid: number): ProcStat | undefined {
  try {
    const st = readProc(`/proc/${pid}/stat`).toString('latin1')
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
    return { state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]) }
  } catch {
    return undefined // gone, or not ours to look at
  }
}

/** Whether `pid` is alive (neither a zombie nor dead). */
export const living = (pid: number): boolean => {
  const s = procStat(pid)?.state
  return s !== undefined && s !== 'Z' && s !== 'X'
}

/** Process groups of `pid`'s descendants (empty without /proc). */
export function descendantGroups(pid: number): number[] {
  const children = new Map<number, number[]>()
  const group = new Map<number, number>()
  for (const p of pids()) {
    const st = procStat(p)
    if (!st) continue
    group.set(p, st.pgrp)
    const list = children.get(st.ppid)
    if (list) list.push(p)
    else children.set(st.ppid, [p])
  }
  const groups = new Set<number>()
  const queue = [...(children.get(pid) ?? [])]
  const seen = new Set<number>(queue)
  while (queue.length > 0) {
    const p = queue.shift() as number
    const g = group.get(p)
    if (g !== undefined && g > 1) groups.add(g)
    for (const c of children.get(p) ?? []) {
      if (!seen.has(c)) {
        seen.add(c)
        queue.push(c)
      }
    }
  }
  return [...groups]
}

/** SIGKILL `pid`'s process group and those of its descendants. Never throws. */
export function killTree(pid: number): void {
  for (const g of new Set([pid, ...descendantGroups(pid)])) signal(-g)
}

/** SIGKILL one process (or a group, negative); gone or not ours is no error. */
export function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone already, or not ours to signal
  }
}

/**
 * The living processes in PID namespace `ns` (as /proc/PID/ns/pid reads, e.g. pid:[4026532]). A zombie runs
 * nothing: the namespace's killed init stays one until its parent (unshare) is scheduled to reap it.
 */
export function nsMembers(ns: string): number[] {
  return pids().filter(p => {
    try {
      return readlinkSync(`/proc/${p}/ns/pid`) === ns && living(p)
    } catch {
      return false // gone, or not ours to look at
    }
  })
}

/** The processes with `uid` among their real, effective, saved or file-system uids. */
export function withUid(uid: number): number[] {
  return pids().filter(p => {
    try {
      const m = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(readProc(`/proc/${p}/status`).toString('latin1'))
      return !!m && m.slice(1).some(u => Number(u) === uid)
    } catch {
      return false
    }
  })
}

/** Whether `pid`'s command line holds the word `word`. */
export function cmdlineHas(pid: number, word: string): boolean {
  try {
    return readProc(`/proc/${pid}/cmdline`).toString('latin1').split('\0').includes(word)
  } catch {
    return false
  }
}
