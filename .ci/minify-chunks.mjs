// ncc minifies each bundle's entry file only, never the chunks its dynamic
// imports load (dist/<id>.index.js): @actions/github with its undici (~1 MB)
// is loaded by nearly every run, @actions/artifact (~3.8 MB) by every run that
// saves or loads a thread's history. V8 reads, parses and compiles a chunk in
// time that grows with its size: minified (names kept, for code that reads
// them), the two load in ~100 ms less CPU (Dec 2026). Run by `npm run build`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transformSync } from 'esbuild'

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist')
for (const dir of [dist, join(dist, 'cli')]) {
  for (const name of readdirSync(dir).filter(n => /^\d+\.index\.js$/.test(n))) {
    const file = join(dir, name)
    const { code } = transformSync(readFileSync(file, 'utf8'), { format: 'esm', minify: true, keepNames: true, legalComments: 'inline' })
    writeFileSync(file, code)
  }
}
