// How much memory the agent may use in `user` mode, and where its cgroup goes:
// planned here, before the command server makes it (server-memory.ts), so the
// post step can remove it whatever moment the main step died at.
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { CommandRecord } from '../types'

const MIB = 1024 * 1024

/** The run's memory in bytes: `mib` when given, never more than half the machine's memory. */
export function memoryBytes(mib?: number): number {
  const half = Math.floor(os.totalmem() / 2 / MIB) * MIB
  return mib ? Math.min(mib * MIB, half) : half
}

/** A run's cgroup path: only such a path is ever made or removed. */
export const AGENT_CGROUP = /^\/sys\/fs\/cgroup\/(?:(?!\.\.?\/)[\w.:@-]+\/)*bash-agent-[0-9a-f]{32}$/

/**
 * Where the run's cgroup goes: under a parent of the runs' own at the root of cgroup v2 (a cgroup that
 * holds processes, like ours, may not pass the memory controller on), beside our own cgroup in v1's memory
 * hierarchy. Undefined where neither is mounted.
 */
export function planCgroup(runDir: string): string | undefined {
  const name = `bash-agent-${path.basename(runDir)}`
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return `/sys/fs/cgroup/bash-agent/${name}`
  if (!existsSync('/sys/fs/cgroup/memory/cgroup.procs')) return undefined
  let own: string | undefined
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find(l => (l.split(':')[1] ?? '').split(',').includes('memory'))
    own = line?.split(':').slice(2).join(':')
  } catch {
    return undefined
  }
  const planned = own ? path.join('/sys/fs/cgroup/memory', own, name) : undefined
  return planned && AGENT_CGROUP.test(planned) ? planned : undefined
}

/** A command during which the kernel killed a process of the agent's cgroup for memory: the record says so. */
export function outOfMemory(rec: CommandRecord, limitMiB: number | undefined): CommandRecord {
  return limitMiB === undefined ? rec : { ...rec, outOfMemory: `killed: out of memory (limit ${limitMiB} MiB)` }
}
