// The order test files start in. Jest runs the slowest first, by the times it
// cached last run; a clean clone (a newcomer, CI) has no such cache, and jest
// falls back to file size, so a small file that mostly waits (time-limit) would
// start last and run alone at the end. On a clean clone this order stands in:
// first the files that mostly wait on timers (their waits then overlap the
// others' CPU work instead of leaving cores idle at the end), then the rest by
// measured time. Only the order matters; a stale one costs time, not correctness.
import Sequencer from '@jest/test-sequencer'

/** Files whose time is mostly timers (Dec 2026, alone: github 8 CPU-s in 27 s, time-limit 3 in 13). */
const WAITING = ['github.test.ts', 'time-limit.test.ts']

/** Seconds each slow file took in a newcomer's run (fresh clone, as root, three workers on 2 shared cores, Dec 6 2026). */
const MEASURED_S = {
  'handback.test.ts': 101,
  'contain.test.ts': 72,
  'thread-branch.test.ts': 63,
  'thread.test.ts': 58,
  'endings.test.ts': 57,
  'security.test.ts': 31,
  'sandbox.test.ts': 30,
  'e2e.test.ts': 26,
  'envcreds-e2e.test.ts': 22,
  'handback-big.test.ts': 21,
  'attacks.test.ts': 21,
  'inert.test.ts': 19,
  'workflows.test.ts': 17,
  'network-e2e.test.ts': 16,
  'credentials.test.ts': 13
}

export default class MeasuredFirst extends Sequencer {
  sort(tests) {
    const cached = tests.filter(t => this.time(t) !== undefined && this.time(t) !== null)
    if (cached.length === tests.length) return super.sort(tests)
    const name = t => t.path.split('/').pop()
    const waiting = t => WAITING.indexOf(name(t))
    const measured = t => (waiting(t) >= 0 ? 0 : (MEASURED_S[name(t)] ?? 0))
    const rest = super.sort(tests.filter(t => waiting(t) < 0 && measured(t) === 0))
    return [
      ...tests.filter(t => waiting(t) >= 0).sort((a, b) => waiting(a) - waiting(b)),
      ...tests.filter(t => measured(t) > 0).sort((a, b) => measured(b) - measured(a)),
      ...rest
    ]
  }
}
