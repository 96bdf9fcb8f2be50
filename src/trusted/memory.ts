// The agent's memory (root): a cgroup that holds its commands to the run's limit (v2, or v1's memory hierarchy);
// what they write is on the run's tmpfs (view.ts newRoot).
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import pathM from 'node:path'
import type { Writable } from 'node:stream'
import type { ServerConfig } from './protocol'
import { must } from './exec'

/** What the server keeps of the agent's cgroup: where each command's own goes, the file that counts its OOM kills. */
export interface AgentCgroup {
  dir?: string
  events?: string
  limitMiB?: number
}

/**
 * The run's cgroup at cfg.cgroup (planned by the action, for the post step): `agent` (cfg.memory, no swap) holds a
 * cgroup per command, `server` this server; neither counts against the action's own (whose limit would kill it).
 * `agent` is bound into a root-only folder of the new root `root`; the hierarchy is not in the agent's view.
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
  const agent = pathM.join(at, 'agent')
  try {
    fs.mkdirSync(pathM.dirname(at), { recursive: true })
    for (const d of [at, agent, pathM.join(at, 'server')]) fs.mkdirSync(d) // fails if it exists: never reused
    // v2: a cgroup that holds processes may not pass controllers on: the runs' cgroups under a parent of their own
    for (const d of v2 ? [pathM.dirname(pathM.dirname(at)), pathM.dirname(at), at, agent] : []) {
      const subtree = pathM.join(d, 'cgroup.subtree_control')
      if (!fs.readFileSync(subtree, 'utf8').split(/\s+/).includes('memory')) fs.writeFileSync(subtree, '+memory')
    }
    if (!v2) fs.writeFileSync(pathM.join(agent, 'memory.use_hierarchy'), '1') // (old kernels: the limit covers its children)
    fs.writeFileSync(pathM.join(agent, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(cfg.memory))
    try {
      fs.writeFileSync(pathM.join(agent, v2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes'), v2 ? '0' : String(cfg.memory))
    } catch {
      // no swap accounting here
    }
    fs.writeFileSync(pathM.join(at, 'server', 'cgroup.procs'), '0') // this server, from now on
    const bound = pathM.join(cfg.runDir as string, 'cgroup', 'agent')
    fs.mkdirSync(root + bound, { recursive: true, mode: 0o700 }) // (its parent: root's alone)
    await must('the memory limit', cfg.bins.mount, ['--bind', agent, root + bound])
    return {
      dir: bound,
      events: v2 ? 'memory.events' : 'memory.oom_control',
      limitMiB: mib,
      note: `the commands and their temporary files may use ${mib} MiB together (the files at most ${files} MiB; a cgroup ${v2 ? 'v2' : 'v1'} of their own)`
    }
  } catch (e) {
    return none((e as Error).message) // what was made, the post step removes
  }
}

/** The script a command starts with when it must wait until it is in its cgroup (fd 3 tells it). */
export function gated(script: string, cg: AgentCgroup): string {
  return cg.dir ? `read -r -u 3 __bash_agent_go; exec 3<&-; unset __bash_agent_go; ${script}` : script
}

/** Put a just-spawned (waiting) command into a cgroup of its own under the agent's, then let it go on; throws when it cannot. */
export function joinCgroup(cg: AgentCgroup, child: ChildProcess, id: number): string | undefined {
  if (!cg.dir) return undefined
  const own = pathM.join(cg.dir, String(id))
  fs.mkdirSync(own)
  fs.writeFileSync(pathM.join(own, 'cgroup.procs'), String(child.pid))
  const gate = child.stdio[3] as Writable | null | undefined
  gate?.on('error', () => undefined)
  gate?.end('\n')
  return own
}

/** Whether the kernel killed a process of a command's own cgroup for memory; the cgroup goes if empty. */
export function oomKilled(cg: AgentCgroup, own: string | undefined): boolean {
  let kills = 0
  try {
    kills = Number(/^oom_kill (\d+)$/m.exec(fs.readFileSync(pathM.join(own as string, cg.events as string), 'utf8'))?.[1] ?? 0)
    fs.rmdirSync(own as string)
  } catch {
    // no cgroup, or a process it left in the background holds it (the post step removes it)
  }
  return kills > 0
}
