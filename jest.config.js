// ESM: @actions/core 3 and @actions/github 9 ship only ES modules, so jest runs
// in its ESM mode (NODE_OPTIONS=--experimental-vm-modules, set by `npm test`).
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  // esbuild strips the types (see the file); the type check is `npm run typecheck`
  transform: { '^.+\\.ts$': '<rootDir>/jest.transform.js' },
  testTimeout: 60000,
  verbose: false,
  // Three on 2 cores: many tests wait on child processes, servers and timers, and a third worker fills
  // those waits when the cores have room (Dec 6: 262 s against 290 s; on a busier day, no slower).
  // Nothing may depend on load: timing assertions are lower bounds taken where the product acts
  // (e.g. when Octokit sends). .ci/run gives its root pass two: other checks run beside it.
  maxWorkers: 3,
  // The slowest files first, also on a clean clone (no cached times): see the file.
  testSequencer: '<rootDir>/jest.sequencer.js'
}
