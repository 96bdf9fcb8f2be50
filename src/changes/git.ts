// Git with nothing of the agent's in play, written once: no system or global
// config, no system attributes, no hooks, no fsmonitor (the config options git
// would run a program for), and throwaway repositories made by hand (no
// template, so no hooks are copied) whose store borrows another's objects.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Exec } from './exec'
import { GIT_MALLOC_ENV } from '../sandbox/git-add'

/** The environment of such a git: config only from the command line (and a repository of our own). */
export function safeGitEnv(pathEnv: string, home = '/nonexistent'): Record<string, string> {
  return {
    PATH: pathEnv,
    HOME: home,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    ...GIT_MALLOC_ENV
  }
}

/** `-c` options that keep a repository's own config from running anything (hooks, fsmonitor) or converting files (attributes). */
export const SAFE_GIT_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.attributesFile=/dev/null'
].flatMap(c => ['-c', c])

/** The few file operations the throwaway repository needs, done by whoever runs git. */
export interface ScratchFs {
  /** A new private folder `prefix`XXXXXXXXXX holding `dirs` and `files` (our own relative paths). */
  mkdtemp(prefix: string, dirs: string[], files: Array<[string, string]>): Promise<string>
  rm(path: string): Promise<void>
}

function fill(root: string, dirs: string[], files: Array<[string, string]>): void {
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true })
  for (const [f, content] of files) writeFileSync(join(root, f), content)
}

export const localScratch: ScratchFs = {
  mkdtemp: async (prefix, dirs, files) => {
    const root = mkdtempSync(prefix)
    try {
      fill(root, dirs, files)
    } catch (error) {
      rmSync(root, { recursive: true, force: true })
      throw error
    }
    return root
  },
  rm: async path => rmSync(path, { recursive: true, force: true })
}

/**
 * The folder with its parts in one shell (each process forked by a server or
 * the action costs its whole memory's page tables): `$2` is the folders, split
 * on spaces (ours, checked), then pairs of a file and its content. A folder
 * half made is removed.
 */
const MAKE_SCRATCH = [
  'set -e',
  'root=$(mktemp -d "$1")',
  `trap 'rm -rf -- "$root"' EXIT`,
  'cd "$root"',
  'mkdir -p -- $2',
  'shift 2',
  `while [ $# -gt 1 ]; do printf '%s' "$2" > "$1"; shift 2; done`,
  `printf '%s' "$root"`,
  'trap - EXIT'
].join('\n')

/** A path of ours inside the scratch folder: plain names, no `..`, nothing an option or the shell reads. */
const OURS = /^(?!-)[\w.-]+(?:\/[\w.-]+)*$/
const ours = (p: string) => OURS.test(p) && !p.split('/').includes('..')

/** The same through `exec` (no shell of the agent's: sh -c with the paths as arguments). */
export function execScratch(exec: Exec, env: Record<string, string>): ScratchFs {
  const must = async (file: string, args: string[]) => {
    const r = await exec(file, args, { env, cwd: '/' })
    if (r.code !== 0) throw new PatchError(`${file} failed: ${r.stderr.trim().split('\n')[0]}`)
    return r.stdout.toString('utf8').trim()
  }
  return {
    mkdtemp: async (prefix, dirs, files) => {
      const odd = [...dirs, ...files.map(([f]) => f)].find(p => !ours(p))
      if (odd !== undefined) throw new PatchError(`not a scratch path: ${odd}`)
      return must('sh', ['-c', MAKE_SCRATCH, 'sh', `${prefix}XXXXXXXXXX`, dirs.join(' '), ...files.flat()])
    },
    rm: async path => void (await must('rm', ['-rf', '--', path]))
  }
}

/** For every path: no filter, no end-of-line or encoding conversion, no ident; diff and eol left to git's defaults. */
const NEUTRAL_ATTRIBUTES = '* -filter -text -ident -working-tree-encoding !eol !diff !merge\n'

export class PatchError extends Error {}

/** Where a scratch repository keeps its parts. */
export interface ScratchRepository {
  gitDir: string
  index: string
  home: string
}

/**
 * A bare repository's parts (HEAD, objects/, refs/ and info/ made by hand, so
 * no template is copied) whose store borrows `objects` read-only, with neutral
 * attributes for every path and an empty home: relative to its folder.
 */
function layout(objects: string[]): { dirs: string[]; files: Array<[string, string]> } {
  return {
    dirs: ['home', 'git/objects/info', 'git/refs/heads', 'git/info'],
    files: [
      ['git/HEAD', 'ref: refs/heads/main\n'],
      ...(objects.length ? [['git/objects/info/alternates', `${objects.join('\n')}\n`] as [string, string]] : []),
      ['git/info/attributes', NEUTRAL_ATTRIBUTES]
    ]
  }
}

const partsIn = (root: string): ScratchRepository => ({ gitDir: join(root, 'git'), index: join(root, 'index'), home: join(root, 'home') })

/** A new scratch repository (see layout) in a folder `prefix`XXXXXXXXXX, made by `fs`. */
export async function newScratchRepository(
  fs: ScratchFs,
  prefix: string,
  objects: string[]
): Promise<{ root: string; repo: ScratchRepository }> {
  const { dirs, files } = layout(objects)
  const root = await fs.mkdtemp(prefix, dirs, files)
  return { root, repo: partsIn(root) }
}

/** A scratch repository (see layout) in the existing local folder `root`. */
export function scratchRepositoryIn(root: string, objects: string[]): ScratchRepository {
  const { dirs, files } = layout(objects)
  fill(root, dirs, files)
  return partsIn(root)
}

/** A git run in the throwaway repository, with nothing of the agent's config or code in play. */
export function safeGit(exec: Exec, scratch: ScratchRepository, workTree: string, pathEnv: string) {
  const env: Record<string, string> = {
    ...safeGitEnv(pathEnv, scratch.home),
    XDG_CONFIG_HOME: scratch.home,
    GIT_DIR: scratch.gitDir,
    GIT_WORK_TREE: workTree,
    GIT_INDEX_FILE: scratch.index,
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0'
  }
  const config = [
    ...SAFE_GIT_CONFIG,
    ...[
      'core.untrackedCache=false',
      'core.autocrlf=false',
      // the scratch store is thrown away: the fastest compression (a big change is hashed and written once)
      'core.looseCompression=1',
      'core.symlinks=true',
      'core.filemode=true',
      'core.excludesFile=/dev/null',
      'core.quotePath=true',
      'diff.external=',
      'diff.noprefix=false',
      'diff.mnemonicPrefix=false',
      'color.ui=false'
    ].flatMap(c => ['-c', c])
  ]
  return async (args: string[], input?: Buffer): Promise<Buffer> => {
    const r = await exec('git', [...config, ...args], { cwd: workTree, env, input })
    if (r.code !== 0)
      throw new PatchError(`git ${args[0]} failed (exit ${r.code ?? 'none'}): ${r.stderr.trim().split('\n').slice(-3).join(' ')}`)
    return r.stdout
  }
}
