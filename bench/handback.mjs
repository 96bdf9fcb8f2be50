// The hand-back figure of `npm run bench` (bench/run.mjs, --only=handback): how long the agent's
// changes take to come back, for 10 MiB and 100 MiB of new text files (10 MiB each, base64 of
// random bytes: nothing for git's compression to win), at the level below the action
// (__tests__/helpers/handback-below.ts: the patch computed in the sandbox and streamed out of it,
// checked, applied to the workspace; the default `user` sandbox where the machine gives it). The
// ratio of the two shows it stays linear (10x the changes, about 10x the time); the 100 MiB time is
// set against the hand-back's budget (HANDBACK_BUDGET_MS in src/run/handback.ts).
import { spawnSync } from 'node:child_process'

const MIB = 1024 * 1024

export async function handbackFigures({ report, fmt }) {
  const { handBackBelow } = await import('../__tests__/helpers/handback-below.ts')
  const { HANDBACK_BUDGET_MS } = await import('../src/run/handback.ts')
  const privileged = process.platform === 'linux' && (process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0)
  const sandbox = privileged ? 'user' : 'none'
  const ms = {}
  for (const mib of [10, 100]) {
    const files = mib / 10
    const command = Array.from(
      { length: files },
      (_, i) => `head -c ${8 * MIB} /dev/urandom | base64 -w 76 | head -c ${10 * MIB} > generated-${i}.txt`
    ).join(' && ')
    const r = await handBackBelow({ sandbox, command })
    try {
      const whole = r.report.kind === 'computed' && r.report.patch.files.length === files && r.report.patch.heldBack.length === 0
      if (!whole) throw new Error(`the ${mib} MiB hand-back did not come back whole: ${JSON.stringify(r.report).slice(0, 300)}`)
      ms[mib] = r.ms
      report(
        `hand-back, ${mib} MiB of changes`,
        fmt(r.ms / 1000, 1),
        's',
        mib === 100 ? `< ${HANDBACK_BUDGET_MS / 2000} s (half the budget)` : '(info)',
        mib === 100 ? r.ms < HANDBACK_BUDGET_MS / 2 : undefined,
        `${files} new file${files === 1 ? '' : 's'} of 10 MiB, sandbox: ${r.mode}: computed in the sandbox, streamed out, checked, applied`
      )
    } finally {
      r.cleanup()
    }
  }
  const ratio = ms[100] / ms[10]
  report('hand-back, 100 MiB / 10 MiB', fmt(ratio, 1), 'x', '<= 15x (linear: 10x)', ratio <= 15, 'the same work per byte at both sizes')
}
