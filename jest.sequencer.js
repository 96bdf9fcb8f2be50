// The order test files start in. Jest runs the slowest first, by the times it
// cached last run; a clean clone (CI) has no such cache, and jest falls back
// to file size, so a small file that mostly waits (time-limit) would start
// last and run alone at the end. These measured times stand in for the
// missing cache; only their order matters, and a stale one costs time, not
// correctness.
import Sequencer from '@jest/test-sequencer'

/** Seconds each slow file took in a full run with three workers on 2 shared cores (Dec 6 2026). */
const MEASURED_S = {
  'handback.test.ts': 115,
  'contain.test.ts': 85,
  'thread-branch.test.ts': 79,
  'endings.test.ts': 52,
  'thread.test.ts': 43,
  'sandbox.test.ts': 35,
  'github.test.ts': 32,
  'security.test.ts': 29,
  'e2e.test.ts': 25,
  'envcreds-e2e.test.ts': 19,
  'handback-big.test.ts': 19,
  'network-e2e.test.ts': 16,
  'workflows.test.ts': 16,
  'inert.test.ts': 15,
  'attacks.test.ts': 14,
  'time-limit.test.ts': 12,
  'credentials.test.ts': 11
}

export default class MeasuredFirst extends Sequencer {
  sort(tests) {
    const cached = tests.filter(t => this.time(t) !== undefined && this.time(t) !== null)
    if (cached.length === tests.length) return super.sort(tests)
    const measured = t => MEASURED_S[t.path.split('/').pop()] ?? 0
    const rest = super.sort(tests.filter(t => measured(t) === 0))
    return [...tests.filter(t => measured(t) > 0).sort((a, b) => measured(b) - measured(a)), ...rest]
  }
}
