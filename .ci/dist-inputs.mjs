// dist/ is built from these inputs; their hash is written beside the bundle, so
// `npm test` (which runs the end-to-end tests on dist/) can tell a stale dist/
// and rebuild it first, instead of testing yesterday's code without a word.
//   node .ci/dist-inputs.mjs write   after a build (npm run build calls it)
//   node .ci/dist-inputs.mjs ensure  before the tests: rebuilds when stale
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const stamp = join(root, 'dist', 'inputs.sha256')

function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap(e => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
}

function inputsHash() {
  const h = createHash('sha256')
  for (const f of [
    ...files(join(root, 'src')),
    join(root, 'package-lock.json'),
    join(root, 'tsconfig.json'),
    join(root, '.ci', 'minify-chunks.mjs')
  ]) {
    h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0')
  }
  h.update(JSON.stringify(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.build))
  return h.digest('hex')
}

const mode = process.argv[2]
if (mode === 'write') {
  writeFileSync(stamp, `${inputsHash()}\n`)
} else if (mode === 'ensure') {
  // CI tests a copy of the committed dist/ and checks it against a fresh build on its own
  if (process.env.ACTION_DIST) process.exit(0)
  const built = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : ''
  if (built !== inputsHash()) {
    console.log('dist/ is older than src/: rebuilding it first (npm run build), since the end-to-end tests run dist/.')
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  }
} else {
  console.error('usage: node .ci/dist-inputs.mjs write|ensure')
  process.exit(2)
}
