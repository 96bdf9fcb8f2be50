// One changed file, as the patch, the checks, the report and the commit see it.

export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed'

export interface FileChange {
  /** the path after the change (for a deletion: the path that is gone) */
  path: string
  /** renamed from */
  oldPath?: string
  status: FileStatus
  /** git modes: 100644, 100755 (executable), 120000 (symlink); absent on the side that does not exist */
  oldMode?: string
  newMode?: string
  oldSha?: string
  newSha?: string
  binary: boolean
  additions: number
  deletions: number
  /** under .github/workflows/: shown and applied, never committed */
  workflow: boolean
}

/** How many `diff --git` sections git writes for a change: two when the kind of object changes (file <-> symlink). */
export const sectionsOf = (f: FileChange): number =>
  f.status === 'modified' && f.oldMode !== undefined && f.newMode !== undefined && f.oldMode.slice(0, 3) !== f.newMode.slice(0, 3) ? 2 : 1
