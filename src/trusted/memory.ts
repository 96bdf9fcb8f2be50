// The agent's memory in `user` mode, set up by the command server as root: a
// cgroup that holds the agent's commands to the run's limit (v2, or v1's memory
// hierarchy); what they write is on the run's tmpfs (view.ts newRoot).
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import pathM from 'node:path'
import type { Writable } from 'node:stream'
import type { ServerConfig } from './protocol'
import { must } from './exec'

/** What the server keeps of the agent's cgroup: where to put a command, where to count its OOM kills. */
export interface AgentCgroup {
  procs?: string
  events?: string
  limitMiB?: number
}

/**
 * The agent's cgroup at cfg.cgroup (planned by the action, so the post step can remove it), limited to
 * cfg.memory without swap, then bound into a root-only folder of the run in the new root `root`: the hierarchy
 * itself is not in the agent's view, and the server still puts each command in.
 */
export async function agentCgroup(cfg: ServerConfig, root: string): Promise<AgentCgroup & { note: string }> {
  const at = cfg.cgroup
  const mib = Math.floor((cfg.memory ?? 0) / 1048576)
  const files = Math.floor(((cfg.memory ?? 0) * 3) / 4 / 1048576)
  // a limit always applies (memory-limit, else half the machine): no cgroup for it is a set-up failure (fail closed)
  const none = (why: string): never => {
    throw new Error(`the commands' memory could not be limited (${why})`)
  }
  if (!at || !cfg.memory) return none('no cgroup memory controller here')
  const v2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers')
  const write = (file: string, value: string, optional = false) => {
    try {
      fs.writeFileSync(file, value)
    } catch (e) {
      if (!optional) throw e
    }
  }
  try {
    if (v2) {
      // a cgroup of processes may not pass controllers on (v2): the runs' cgroups live under a parent of their own
      const parent = pathM.dirname(at)
      fs.mkdirSync(parent, { recursive: true })
      for (const d of [pathM.dirname(parent), parent])
        if (!fs.readFileSync(pathM.join(d, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory'))
          write(pathM.join(d, 'cgroup.subtree_control'), '+memory')
    }
    fs.mkdirSync(at)
    write(pathM.join(at, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(cfg.memory))
    write(pathM.join(at, v2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes'), v2 ? '0' : String(cfg.memory), true)
    const bound = pathM.join(cfg.runDir as string, 'cgroup', 'agent')
    fs.mkdirSync(root + bound, { recursive: true, mode: 0o700 })
    await must('the memory limit', cfg.bins.mount, ['--bind', at, root + bound])
    return {
      procs: pathM.join(bound, 'cgroup.procs'),
      events: pathM.join(bound, v2 ? 'memory.events' : 'memory.oom_control'),
      limitMiB: mib,
      note: `the commands and their temporary files may use ${mib} MiB together (the files at most ${files} MiB; a cgroup ${v2 ? 'v2' : 'v1'} of their own)`
    }
  } catch (e) {
    try {
      fs.rmdirSync(at)
    } catch {
      // not made
    }
    return none((e as Error).message)
  }
}

/** The script a command starts with when it must wait until it is in the cgroup (fd 3 tells it). */
export function gated(script: string, cg: AgentCgroup): string {
  return cg.procs ? `read -r -u 3 __bash_agent_go; exec 3<&-; unset __bash_agent_go; ${script}` : script
}

/** Put a just-spawned (waiting) command into the agent's cgroup, then let it go on. */
export function joinCgroup(cg: AgentCgroup, child: ChildProcess): void {
  if (!cg.procs) return
  try {
    if (child.pid) fs.writeFileSync(cg.procs, String(child.pid))
  } catch {
    // the command runs, outside the limit: nothing better to do for it
  }
  const gate = child.stdio[3] as Writable | null | undefined
  gate?.on('error', () => undefined)
  gate?.end('\n')
}

/** How many processes of the agent's cgroup the kernel killed for memory so far. */
export function oomKills(cg: AgentCgroup): number {
  if (!cg.events) return 0
  try {
    return Number(/^oom_kill (\d+)$/m.exec(fs.readFileSync(cg.events, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}
