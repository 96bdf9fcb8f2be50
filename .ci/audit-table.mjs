#!/usr/bin/env node
// The "What to audit" table of docs/security.md, with each file's line count (wc -l) written from
// the files themselves, so the page cannot drift from the code (__tests__/audit.test.ts checks it).
//
//   node .ci/audit-table.mjs           # rewrites the table between the markers
//   node .ci/audit-table.mjs --check   # exits 1 when the page differs
//
// Every file of src/trusted/ (all that runs as root) is listed; then the proxy's (as the run's user) and
// the few action-side files the security claims rest on. A file missing here but present in src/trusted/
// gets "(undescribed)".
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as prettier from 'prettier'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const PAGE = join(ROOT, 'docs', 'security.md')

const ROOT_FILES = {
  'src/trusted/index.ts': "the root bundle's entry: `serve`, `recover`",
  'src/trusted/server.ts': "reads requests, spawns each command as the run's user, kills at the end",
  'src/trusted/setup.ts': "the run's uid (refused unless unused) and names, the copy, its `.git`",
  'src/trusted/memory.ts': "the run's tmpfs, the cgroup (never under the action's own), its OOM count",
  'src/trusted/upper.ts': "lists the overlay's upper layer (what the agent wrote) for the hand-back",
  'src/trusted/recover.ts': "the recovery helper: kills what is left, the uid's too; removes folder, cgroup",
  'src/trusted/exec.ts': 'how the server runs its helper programs: a quiet environment',
  'src/trusted/protocol.ts': 'what the server and the action say to each other',
  'src/trusted/proc.ts': "the walks over `/proc`: the namespace's members, killing them"
}
/** The proxy: a bundle of its own (dist/proxy/), started as the run's uid, never root; it parses what the agent sends. */
const PROXY_FILES = {
  'src/network/proxy-main.ts': "the proxy's entry: refuses root, binds its socket in the run's `net` folder",
  'src/network/proxy.ts': 'HTTP and `CONNECT` to the allowed hosts only',
  'src/network/allowlist.ts': 'what `allowed-domains` allows, and the addresses never reached'
}
const ACTION_FILES = {
  'src/sandbox/index.ts': 'set-up and release: what the server is told, fail closed, the state saved first',
  'src/sandbox/client.ts': "the action's end of the server's pipe",
  'src/sandbox/privilege.ts': 'root or sudo, and the programs run with privileges, found only in safe places',
  'src/sandbox/recover.ts': 'starts the recovery helper as root with the saved state, checked',
  'src/sandbox/env.ts': "the commands' environment: an allowlist, everything else withheld",
  'src/sandbox/secret-files.ts': "workspace files holding a known secret: never in the agent's copy",
  'src/sandbox/gitconfig-keep.ts': 'one definition of a git credential: what of a nested config the copy keeps',
  'src/sandbox/nested.ts': "nested repositories' configs as the copy gets them; stores it never gets",
  'src/sandbox/credentials-walk.ts': 'the one walk that finds every repository of the workspace, no link followed',
  'src/sandbox/gitconfig.ts': "git's config syntax, read as git reads it",
  'src/environments/sandboxed.ts': 'each command through the server, stopping every process, release',
  'src/environments/plain.ts': '`sandbox: none`: plain local execution, said uncontained',
  'src/network/launch.ts': "starts the proxy as the run's uid (setpriv, a clean environment), counts, stops it",
  'src/changes/checks.ts': "the patch's checks: secrets, limits, shapes",
  'src/changes/tree-checks.ts': 'symlinks resolved over the final tree, case collisions, PATH folders',
  'src/report/redact.ts': 'the one redaction choke point: every known secret in every form',
  'src/gate.ts': 'who may start a run'
}

const lines = f => (readFileSync(join(ROOT, f), 'utf8').match(/\n/g) ?? []).length

export async function auditSection() {
  const trusted = readdirSync(join(ROOT, 'src', 'trusted'))
    .filter(n => n.endsWith('.ts'))
    .map(n => `src/trusted/${n}`)
    .sort((a, b) => Object.keys(ROOT_FILES).indexOf(a) - Object.keys(ROOT_FILES).indexOf(b))
  const rows = [
    ...trusted.map(f => [f, 'root', ROOT_FILES[f] ?? '(undescribed)']),
    ...Object.entries(PROXY_FILES).map(([f, what]) => [f, "run's user", what]),
    ...Object.entries(ACTION_FILES).map(([f, what]) => [f, 'runner user', what])
  ]
  const rootTotal = trusted.reduce((n, f) => n + lines(f), 0)
  const total = rows.reduce((n, [f]) => n + lines(f), 0)
  const table = [
    '| File | Lines | Runs as | What it does |',
    '| --- | --- | --- | --- |',
    ...rows.map(([f, as, what]) => `| \`${f}\` | ${lines(f)} | ${as} | ${what} |`)
  ].join('\n')
  return [
    `Everything that runs as root is one folder, \`src/trusted/\` (${trusted.length} files, ${rootTotal} lines), built into`,
    'one bundle (`dist/trusted/index.js`) that imports only `node:` built-ins and that folder',
    "(`__tests__/trusted.test.ts`). The run's proxy, which parses what the agent sends, is a bundle of its own",
    "(`dist/proxy/index.js`) that runs as the run's uid, never root. The security claims also rest on it and on",
    'the action-side files below. In all:',
    `${rows.length} files, ${total} lines. The counts are written by \`npm run docs\` and checked by \`__tests__/audit.test.ts\`.`,
    '',
    table
  ].join('\n')
}

const START = '<!-- audit:start -->'
const END = '<!-- audit:end -->'
const page = readFileSync(PAGE, 'utf8')
const a = page.indexOf(START)
const b = page.indexOf(END)
if (a < 0 || b < a) throw new Error(`docs/security.md lacks ${START} ... ${END}`)
const raw = `${page.slice(0, a + START.length)}\n\n${await auditSection()}\n\n${page.slice(b)}`
const out = await prettier.format(raw, { ...((await prettier.resolveConfig(PAGE)) ?? {}), filepath: PAGE })
if (process.argv.includes('--check')) {
  if (out !== page) {
    console.error('docs/security.md: the audit table differs from the files; run npm run docs')
    process.exit(1)
  }
} else {
  writeFileSync(PAGE, out)
  console.log('docs/security.md: the audit table regenerated')
}
