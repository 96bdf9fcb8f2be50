// The order test files start in. Jest runs the slowest first, by the times it
// cached last run; a clean clone (a newcomer, CI) has no such cache, and jest
// falls back to file size, so a small file that mostly waits (time-limit) would
// start last and run alone at the end. On a clean clone this order stands in:
// the files by measured time, with the files that mostly wait on timers among
// the first, one at a time, beside two that keep the cores busy (their waits
// then overlap the others' CPU work instead of leaving cores idle: started
// together, at the head, two waiting files left a core idle for ~15 s). Only
// the order matters; a stale one costs time, not correctness.
import Sequencer from '@jest/test-sequencer'

/** Files whose time is mostly timers (Dec 2026, alone: github 8 CPU-s in 27 s, time-limit 3 in 13), in the order they start. */
const WAITING = ['github.test.ts', 'time-limit.test.ts']

/** Seconds each slow file took in a newcomer's run (fresh clone, as root, three workers on 2 shared cores, Dec 7 2026). */
const MEASURED_S = {
  'handback.test.ts': 75,
  'thread-branch.test.ts': 66,
  'contain.test.ts': 63,
  'endings.test.ts': 58,
  'thread.test.ts': 52,
  'sandbox.test.ts': 35,
  'e2e.test.ts': 24,
  'security.test.ts': 23,
  'attacks.test.ts': 21,
  'handback-big.test.ts': 21,
  'inert.test.ts': 19,
  'workflows.test.ts': 16,
  'network-e2e.test.ts': 13,
  'envcreds-e2e.test.ts': 12,
  'credentials.test.ts': 10
}

export default class MeasuredFirst extends Sequencer {
  sort(tests) {
    const cached = tests.filter(t => this.time(t) !== undefined && this.time(t) !== null)
    if (cached.length === tests.length) return super.sort(tests)
    const name = t => t.path.split('/').pop()
    const waiting = t => WAITING.indexOf(name(t))
    const measured = t => (waiting(t) >= 0 ? 0 : (MEASURED_S[name(t)] ?? 0))
    const rest = super.sort(tests.filter(t => waiting(t) < 0 && measured(t) === 0))
    const waitingFirst = tests.filter(t => waiting(t) >= 0).sort((a, b) => waiting(a) - waiting(b))
    const slowest = tests.filter(t => measured(t) > 0).sort((a, b) => measured(b) - measured(a))
    // three workers: the slowest, a waiting file, the next slowest; the second waiting file takes the slot the first frees
    return [
      ...slowest.slice(0, 1),
      ...waitingFirst.slice(0, 1),
      ...slowest.slice(1, 2),
      ...waitingFirst.slice(1),
      ...slowest.slice(2),
      ...rest
    ]
  }
}
