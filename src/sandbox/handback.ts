// Interim hand-back (until src/changes/ lands): the agent's file changes in its
// copy, as a binary git diff against the copy's state at start, computed by
// git as the sandbox user inside the containment (after its processes were
// stopped) with a git directory of its own (no config, hooks or attributes
// driver of the agent's runs), then applied to the workspace as plain file changes. The
// workspace's .git is not touched.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import type { Sandbox } from './index'
import { findProgram, realpathOr } from './privilege'

const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'safe.directory=*', '-c', 'core.pager=cat']

/** Apply the agent's changes to `workspace`; returns problems (empty when all went well or nothing changed). */
export async function handBack(
  sandbox: Sandbox,
  workspace: string,
  envPath: string | undefined
): Promise<{ files: number; problems: string[] }> {
  if (sandbox.mode !== 'user') return { files: 0, problems: [] }
  if (!sandbox.startTree || !sandbox.startObjects)
    return { files: 0, problems: ["the copy's starting state is unknown: the agent's changes were not applied to the workspace"] }
  // a git directory of our own (random name, made now): none of the copy's config, hooks or info/ is read
  const gitDir = path.join(sandbox.env.TMPDIR ?? path.dirname(sandbox.workdir), `handback-${randomBytes(12).toString('hex')}`)
  const base = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/nonexistent',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1'
  }
  const made = await sandbox.exec('git', [...SAFE, 'init', '-q', '--bare', '--template=', gitDir], { env: base })
  if (made.code !== 0) return { files: 0, problems: [`the agent's changes could not be collected: ${made.stderr.split('\n')[0]}`] }
  const env = {
    ...base,
    GIT_DIR: gitDir,
    GIT_WORK_TREE: sandbox.workdir,
    GIT_INDEX_FILE: path.join(gitDir, 'index'),
    // the start tree's objects, from stores the agent could not write (never the copy's .git: objects forged there
    // under the start's names would make an ignored file of the workspace look tracked and changed)
    GIT_ALTERNATE_OBJECT_DIRECTORIES: sandbox.startObjects ?? ''
  }
  const git = (args: string[]) => sandbox.exec('git', [...SAFE, ...args], { env })
  // the copy can be an overlay on the live workspace: a path something else changes meanwhile can fail one read, not
  // three (never --ignore-errors: a file left out would come back as deleted)
  let add = await git(['add', '-A'])
  for (let i = 0; add.code !== 0 && i < 2; i++) add = await git(['add', '-A'])
  if (add.code !== 0) return { files: 0, problems: [`the agent's changes could not be collected: ${add.stderr.split('\n')[0]}`] }
  const tree = await git(['write-tree'])
  const newTree = tree.stdout.toString().trim()
  if (tree.code !== 0 || !newTree)
    return { files: 0, problems: [`the agent's changes could not be collected: ${tree.stderr.split('\n')[0]}`] }
  if (newTree === sandbox.startTree) return { files: 0, problems: [] }
  const diff = await git(['diff', '--binary', '--full-index', '--no-ext-diff', '--no-textconv', '--no-renames', sandbox.startTree, newTree])
  if (diff.code !== 0) return { files: 0, problems: [`the agent's changes could not be computed: ${diff.stderr.split('\n')[0]}`] }
  const files = (diff.stdout.toString('latin1').match(/^diff --git /gm) ?? []).length
  const gitBin = findProgram('git', envPath, realpathOr(workspace))
  if (!gitBin) return { files, problems: ["git not found: the agent's changes were not applied to the workspace"] }
  const apply = (patch: Buffer) => run(gitBin, [...SAFE, 'apply', '--binary', '--whitespace=nowarn', '-'], workspace, patch)
  if ((await apply(diff.stdout)).code === 0) return { files, problems: [] }
  // file by file: what still applies lands, what does not (the workspace changed meanwhile) is said
  const problems: string[] = []
  let applied = 0
  for (const one of diff.stdout.toString('latin1').split(/^(?=diff --git )/m)) {
    if (!one.startsWith('diff --git ')) continue
    const r = await apply(Buffer.from(one, 'latin1'))
    if (r.code === 0) applied++
    else
      problems.push(
        `the agent's change to ${one.slice(11, one.indexOf('\n'))} could not be applied to the workspace: ${r.stderr.split('\n')[0]}`
      )
  }
  return { files: applied, problems }
}

function run(file: string, args: string[], cwd: string, input: Buffer): Promise<{ code: number | null; stderr: string }> {
  return new Promise(resolve => {
    let stderr = ''
    const c = spawn(file, args, {
      cwd,
      stdio: ['pipe', 'ignore', 'pipe'],
      env: { PATH: '/usr/bin:/bin', LANG: 'C', HOME: '/', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
    })
    c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    c.on('error', e => resolve({ code: null, stderr: e.message }))
    c.on('close', code => resolve({ code, stderr }))
    c.stdin?.on('error', () => undefined)
    c.stdin?.end(input)
  })
}
