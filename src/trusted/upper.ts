// What the agent wrote: the overlay's upper layer, listed as root for the hand-back (src/changes/changed.ts). Set-up
// writes there too: a snapshot once set-up is done marks each entry by its change time, which the agent cannot set
// back; an entry whose ctime differs, or that is new, is `fresh`.
import { run } from './exec'
import type { ExecResult } from './protocol'

/** `find` over the layer: type, ctime and path of every entry, no `.git` (never handed back). */
async function listLayer(find: string, upper: string): Promise<ExecResult> {
  return run(find, ['-P', upper, '-name', '.git', '-prune', '-o', '-printf', '%y %C@ %P\\0'])
}

/** Each entry as `path\0ctime`. */
function parse(out: Buffer): Array<{ type: string; key: string; path: Buffer }> {
  const entries: Array<{ type: string; key: string; path: Buffer }> = []
  for (let at = 0; at < out.length;) {
    const end = out.indexOf(0, at)
    const rec = out.subarray(at, end < 0 ? out.length : end)
    at = end < 0 ? out.length : end + 1
    const s1 = rec.indexOf(0x20)
    const s2 = rec.indexOf(0x20, s1 + 1)
    if (s1 < 0 || s2 < 0) continue
    const path = rec.subarray(s2 + 1)
    entries.push({
      type: rec.subarray(0, s1).toString('latin1'),
      key: `${path.toString('latin1')}\0${rec.subarray(s1 + 1, s2).toString('latin1')}`,
      path
    })
  }
  return entries
}

/** The layer as set-up leaves it. */
export async function snapshotUpper(find: string, upper: string): Promise<Set<string>> {
  const r = await listLayer(find, upper)
  if (r.code !== 0) throw new Error(`list the upper layer: ${(r.stderr.trim() || `exit ${r.code}`).split('\n')[0]}`)
  return new Set(parse(r.stdout).map(e => e.key))
}

/** The layer now, each entry marked fresh or not against `snapshot`. */
export async function listUpper(find: string, upper: string, snapshot: Set<string> | undefined): Promise<ExecResult> {
  const r = await listLayer(find, upper)
  if (r.code !== 0) return { code: r.code, stdout: Buffer.alloc(0), stderr: r.stderr }
  const parts: Buffer[] = []
  for (const e of parse(r.stdout)) parts.push(Buffer.from(`${snapshot?.has(e.key) ? 0 : 1} ${e.type} `), e.path, Buffer.from([0]))
  return { code: 0, stdout: Buffer.concat(parts), stderr: '' }
}
