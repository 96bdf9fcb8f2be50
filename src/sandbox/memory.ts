// How much memory the agent may use in `user` mode, and where its cgroup goes:
// planned here, before the command server makes it (server-memory.ts), so the
// post step can remove it whatever moment the main step died at.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import os from 'node:os'
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
 * Where the run's cgroup goes (the server makes in it `agent`, limited, with a cgroup per command, and `server`,
 * for itself and what it runs, unlimited; trusted/memory.ts): never under the action's own cgroup (where that has a limit, as a runner
 * service's or a container's, the agent's use would count against it and kill the action), but at the top of
 * the hierarchy: under a parent of the runs' own in cgroup v2 (a cgroup that holds processes may not pass the
 * memory controller on), at the root of v1's memory hierarchy. Its name is random and names nothing else of the
 * run (the cgroup tree is world-readable). Undefined where neither is mounted: the set-up then fails.
 */
export function planCgroup(): string | undefined {
  const name = `bash-agent-${randomBytes(16).toString('hex')}`
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return `/sys/fs/cgroup/bash-agent/${name}`
  if (!existsSync('/sys/fs/cgroup/memory/cgroup.procs')) return undefined
  return `/sys/fs/cgroup/memory/${name}`
}

/** A command whose own processes the kernel killed for memory: the record says so. */
export function outOfMemory(rec: CommandRecord, limitMiB: number | undefined): CommandRecord {
  return limitMiB === undefined ? rec : { ...rec, outOfMemory: `killed: out of memory (limit ${limitMiB} MiB)` }
}
