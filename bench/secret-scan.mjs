// The secret scan of the sandbox's set-up (src/sandbox/secret-files.ts) on a big workspace:
// 30,000 tracked files and 20,000 untracked, ignored files (a node_modules-like tree), one of
// them and one untracked gha-creds-*.json holding the token. Prints how many files it read
// (only the untracked, ignored and modified ones), what it found and how long it took.
//   node bench/secret-scan.mjs [tracked] [ignored]
import { register } from 'node:module'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

register('./ts-hooks.mjs', import.meta.url)
const { secretFiles, candidates } = await import('../src/sandbox/secret-files.ts')

const tracked = Number(process.argv[2] ?? 30000)
const ignored = Number(process.argv[3] ?? 20000)
const TOKEN = 'benchOidcRequestToken0123456789abcdefABCDEF'
const ws = mkdtempSync(join(tmpdir(), 'bench-secret-scan-'))
const env = { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
try {
  for (let i = 0; i < tracked; i++) {
    const dir = join(ws, 'src', `m${i % 300}`)
    if (i < 300) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.js`), `export const v${i} = ${i} // ${'x'.repeat(200)}\n`)
  }
  writeFileSync(join(ws, '.gitignore'), 'node_modules/\n')
  execFileSync('sh', ['-c', 'git init -q -b main && git add -A && git -c user.name=b -c user.email=b@b commit -q -m base'], {
    cwd: ws,
    env
  })
  for (let i = 0; i < ignored; i++) {
    const dir = join(ws, 'node_modules', `pkg${i % 500}`, 'lib')
    if (i < 500) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `i${i}.js`), `module.exports = ${i} // ${'y'.repeat(1000)}\n`)
  }
  writeFileSync(join(ws, 'node_modules/pkg7/lib/leak.js'), `const t = "${TOKEN}"\n`)
  writeFileSync(join(ws, 'gha-creds-0123abcd.json'), `{"credential_source":{"headers":{"Authorization":"Bearer ${TOKEN}"}}}\n`)
  // the stat data git status compares is fresh, as after a checkout
  execFileSync('git', ['update-index', '--refresh', '-q'], { cwd: ws, env })
  const ms = n => Number(n / 1000n) / 1000
  const t0 = process.hrtime.bigint()
  const list = await candidates(ws)
  const t1 = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  const t2 = process.hrtime.bigint()
  const found = await secretFiles(ws, [TOKEN, 'sk-ant-api03-benchKey00000000000000000000', 'ghs_benchJobToken000000000000000000000000'])
  const t3 = process.hrtime.bigint()
  const own = process.cpuUsage(cpu)
  const load = (await import('node:os')).loadavg()[0].toFixed(1)
  console.log(`workspace: ${tracked} tracked files, ${ignored + 1} ignored, 1 untracked (node ${process.version}, load ${load})`)
  console.log(`listed (read by the scan): ${list.length} files; tracked ones among them: ${list.filter(p => p.startsWith('src/')).length}`)
  console.log(`git status listing alone: ${ms(t1 - t0).toFixed(0)} ms`)
  console.log(
    `secretFiles (listing, lstat, grep -F): ${ms(t3 - t2).toFixed(0)} ms wall, the action's own CPU ${((own.user + own.system) / 1000).toFixed(0)} ms`
  )
  console.log(`found: ${found.map(f => f.path).join(', ')}`)
} finally {
  if (process.env.KEEP) console.log(ws)
  else rmSync(ws, { recursive: true, force: true })
}
