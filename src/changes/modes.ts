// The `changes` input: what becomes of the agent's changes.
export type ChangesMode = 'apply' | 'branch' | 'pull-request' | 'none'
export const CHANGES_MODES: readonly ChangesMode[] = ['apply', 'branch', 'pull-request', 'none']
