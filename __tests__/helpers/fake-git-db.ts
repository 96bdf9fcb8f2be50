// GitHub's Git database, refs, pulls and compare endpoints for the fake GitHub
// (pass `routes` to startFakeGitHub), kept in a real bare git repository so
// shas are real and tests can read what was committed with git:
//   GET   /repos/{o}/{r}/git/commits/{sha}
//   POST  /repos/{o}/{r}/git/blobs            {content, encoding: base64|utf-8}
//   POST  /repos/{o}/{r}/git/trees            {base_tree?, tree: [{path, mode, type, sha|content}]}, sha null deletes
//   POST  /repos/{o}/{r}/git/commits          {message, tree, parents}; verified when no author is given
//   GET   /repos/{o}/{r}/git/ref/{ref}
//   POST  /repos/{o}/{r}/git/refs             {ref, sha}; 422 when it exists
//   PATCH /repos/{o}/{r}/git/refs/{ref}       {sha, force}; 422 "Update is not a fast forward" without force
//   GET   /repos/{o}/{r}/pulls/{n}            from `pulls`
//   POST  /repos/{o}/{r}/pulls                {title, head, base, body, draft}; head and base must be branches
//   GET   /repos/{o}/{r}/compare/{base}...{head}
// It is as strict as GitHub where the action could go wrong: modes, blob shas,
// a deletion of a path the base tree lacks, parents that do not exist.
// Permission failures come from FakeGitHub.fail().
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ExtraRoute, RouteResult } from './fake-github'

export interface FakePull {
  number: number
  head: { ref: string; sha: string; repo: string | null }
  base: { ref: string }
}

export interface FakeCreatedPull {
  number: number
  title: string
  head: string
  base: string
  body: string
  draft: boolean
}

export interface FakeGitDb {
  /** the bare repository that stands for the repository on GitHub */
  dir: string
  routes: ExtraRoute[]
  pulls: Map<number, FakePull>
  created: {
    blobs: string[]
    trees: string[]
    commits: Array<{ sha: string; message: string; parents: string[]; tree: string }>
    pulls: FakeCreatedPull[]
  }
  /** runs git in the bare repository */
  git(args: string[], input?: Buffer): Promise<Buffer>
  /** the sha a branch points at, or undefined */
  branch(name: string): Promise<string | undefined>
  close(): void
}

const ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'github-actions[bot]',
  GIT_AUTHOR_EMAIL: '41898282+github-actions[bot]@users.noreply.github.com',
  GIT_COMMITTER_NAME: 'GitHub',
  GIT_COMMITTER_EMAIL: 'noreply@github.com'
}
const MODES = new Set(['100644', '100755', '040000', '160000', '120000'])
const DOCS = 'https://docs.github.com/rest/git'

function run(dir: string, args: string[], input?: Buffer, env: Record<string, string> = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      { cwd: dir, env: { ...ENV, GIT_DIR: dir, ...env }, encoding: 'buffer', maxBuffer: 1 << 30 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args.join(' ')}: ${stderr.toString()}`))
        else resolve(stdout)
      }
    )
    child.stdin?.on('error', () => {}) // git may exit without reading its input
    if (input) child.stdin?.end(input)
    else child.stdin?.end()
  })
}

const unprocessable = (message: string): RouteResult => ({ status: 422, body: { message, documentation_url: DOCS, status: '422' } })
const notFound = (): RouteResult => ({ status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } })

/** A fake repository on GitHub holding every branch of `seedFrom` (a local repository). */
export async function createFakeGitDb(seedFrom: string, opts: { repo?: string; pulls?: FakePull[] } = {}): Promise<FakeGitDb> {
  const dir = mkdtempSync(join(tmpdir(), 'fake-gitdb-'))
  // a local clone copies (or links) the objects and refs: one git and its upload-pack, where init + fetch forked nine
  // the seed may belong to the test's other user (the sudo kind): root clones it all the same (safe.directory is
  // read only from protected config, so a global file of the clone's own, removed after)
  const safeDir = mkdtempSync(join(tmpdir(), 'fake-gitdb-safe-'))
  const safe = join(safeDir, 'gitconfig')
  writeFileSync(safe, '[safe]\n\tdirectory = *\n')
  try {
    await run(dir, ['clone', '-q', '--bare', '--template=', seedFrom, dir], undefined, { GIT_CONFIG_GLOBAL: safe })
  } finally {
    rmSync(safeDir, { recursive: true, force: true })
  }
  const git = (args: string[], input?: Buffer) => run(dir, args, input)
  /** Types already asked: objects are never removed, so an answer stays true (and saves a git process, a fork of the jest worker). */
  const known = new Map<string, string>()
  /** The type of each object (undefined: none such), in one `cat-file --batch-check` for those not known yet. */
  const typesOf = async (shas: string[]): Promise<(string | undefined)[]> => {
    const ask = [...new Set(shas.filter(s => /^[0-9a-f]{40}$/.test(s) && !known.has(s)))]
    if (ask.length > 0) {
      const out = (await git(['cat-file', '--batch-check'], Buffer.from(ask.map(s => `${s}\n`).join('')))).toString().split('\n')
      ask.forEach((sha, i) => {
        const type = /^[0-9a-f]{40} (\w+) \d+$/.exec(out[i])?.[1]
        if (type) known.set(sha, type)
      })
    }
    return shas.map(s => known.get(s))
  }
  const exists = async (sha: string, type: string) => (await typesOf([sha]))[0] === type
  /**
   * A blob written as git would (`hash-object -w`), without a git process for each: the fake gets one
   * request a file, and every process forks the whole jest worker.
   */
  const writeBlob = (bytes: Buffer): string => {
    const object = Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes])
    const sha = createHash('sha1').update(object).digest('hex')
    const file = join(dir, 'objects', sha.slice(0, 2), sha.slice(2))
    if (!existsSync(file)) {
      mkdirSync(join(dir, 'objects', sha.slice(0, 2)), { recursive: true })
      writeFileSync(file, deflateSync(object), { mode: 0o444 })
    }
    return sha
  }
  const branch = async (name: string) => {
    try {
      return (await git(['rev-parse', '--verify', '-q', `refs/heads/${name}`])).toString().trim()
    } catch {
      return undefined
    }
  }
  const pulls = new Map((opts.pulls ?? []).map(p => [p.number, p]))
  const created: FakeGitDb['created'] = { blobs: [], trees: [], commits: [], pulls: [] }
  let nextPull = Math.max(100, ...pulls.keys()) + 1
  const repoName = opts.repo ?? 'Codertocat/Hello-World'

  const routes: ExtraRoute[] = [
    {
      name: 'getCommit',
      method: 'GET',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/commits\/([0-9a-f]{40})$/,
      handle: async m => {
        if (!(await exists(m[1], 'commit'))) return notFound()
        const [tree, ...parents] = (await git(['rev-list', '--no-walk', '--format=%T %P', m[1]]))
          .toString()
          .trim()
          .split('\n')[1]
          .split(' ')
        return { status: 200, body: { sha: m[1], tree: { sha: tree }, parents: parents.filter(Boolean).map(sha => ({ sha })) } }
      }
    },
    {
      name: 'createBlob',
      method: 'POST',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/blobs$/,
      handle: async (_m, body) => {
        if (typeof body.content !== 'string') return unprocessable('Invalid request.\n\n"content" wasn\'t supplied.')
        const bytes = body.encoding === 'base64' ? Buffer.from(body.content, 'base64') : Buffer.from(body.content, 'utf8')
        const sha = writeBlob(bytes)
        created.blobs.push(sha)
        return { status: 201, body: { sha, url: `https://api.github.com/repos/${repoName}/git/blobs/${sha}` } }
      }
    },
    {
      name: 'createTree',
      method: 'POST',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/trees$/,
      handle: async (_m, body) => {
        if (!Array.isArray(body.tree)) return unprocessable('Invalid tree info')
        const index = join(dir, `index-${Math.random().toString(36).slice(2)}`)
        const ix = (args: string[], input?: Buffer) => run(dir, args, input, { GIT_INDEX_FILE: index })
        try {
          if (body.base_tree !== undefined) {
            if (!(await exists(String(body.base_tree), 'tree'))) return unprocessable('base_tree is not a valid tree oid')
            await ix(['read-tree', String(body.base_tree)])
          } else await ix(['read-tree', '--empty'])
          const present = new Set((await ix(['ls-files', '-z'])).toString().split('\0').filter(Boolean))
          const lines: string[] = []
          const given = body.tree.filter((e: { sha?: unknown }) => typeof e?.sha === 'string').map((e: { sha: string }) => e.sha)
          const types = new Map((await typesOf(given)).map((t, i) => [given[i], t]))
          for (const e of body.tree) {
            if (
              typeof e.path !== 'string' ||
              !e.path ||
              e.path.startsWith('/') ||
              e.path.split('/').some((p: string) => p === '' || p === '.' || p === '..' || p === '.git')
            ) {
              return unprocessable(`tree.path ${JSON.stringify(e.path)} is invalid`)
            }
            if (!MODES.has(e.mode)) return unprocessable(`tree.mode ${JSON.stringify(e.mode)} is invalid`)
            if (e.type !== 'blob') return unprocessable('tree.type must be blob here')
            if ('sha' in e && 'content' in e) return unprocessable('tree.sha and tree.content cannot both be given')
            if (e.sha === null) {
              if (!present.has(e.path)) return unprocessable(`GitRPC::BadObjectState: ${e.path} is not in the base tree`)
              lines.push(`0 ${'0'.repeat(40)}\t${e.path}`)
              continue
            }
            let sha: string
            if (typeof e.content === 'string') sha = writeBlob(Buffer.from(e.content, 'utf8'))
            else if (typeof e.sha === 'string' && types.get(e.sha) === 'blob') sha = e.sha
            else return unprocessable(`tree.sha ${JSON.stringify(e.sha)} is not a valid blob`)
            lines.push(`${e.mode} ${sha}\t${e.path}`)
          }
          await ix(['update-index', '-z', '--index-info'], Buffer.from(lines.map(l => `${l}\0`).join('')))
          const sha = (await ix(['write-tree'])).toString().trim()
          created.trees.push(sha)
          return {
            status: 201,
            body: { sha, url: `https://api.github.com/repos/${repoName}/git/trees/${sha}`, tree: [], truncated: false }
          }
        } finally {
          rmSync(index, { force: true })
        }
      }
    },
    {
      name: 'createCommit',
      method: 'POST',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/commits$/,
      handle: async (_m, body) => {
        if (typeof body.message !== 'string' || typeof body.tree !== 'string') return unprocessable('Invalid request.')
        if (!(await exists(body.tree, 'tree'))) return unprocessable('Tree SHA does not exist')
        const parents: string[] = Array.isArray(body.parents) ? body.parents : []
        for (const p of parents)
          if (!(await exists(p, 'commit'))) return unprocessable('Parent SHA does not exist or is not a commit object')
        const sha = (await git(['commit-tree', body.tree, ...parents.flatMap(p => ['-p', p]), '-F', '-'], Buffer.from(body.message)))
          .toString()
          .trim()
        created.commits.push({ sha, message: body.message, parents, tree: body.tree })
        const verified = body.author === undefined && body.signature === undefined
        return {
          status: 201,
          body: {
            sha,
            message: body.message,
            tree: { sha: body.tree },
            parents: parents.map(p => ({ sha: p })),
            verification: { verified, reason: verified ? 'valid' : 'unsigned' }
          }
        }
      }
    },
    {
      name: 'getRef',
      method: 'GET',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/ref\/(heads(?:\/|%2F).+)$/i,
      handle: async m => {
        const name = decodeURIComponent(m[1]).slice('heads/'.length)
        const sha = await branch(name)
        return sha ? { status: 200, body: { ref: `refs/heads/${name}`, object: { sha, type: 'commit' } } } : notFound()
      }
    },
    {
      name: 'createRef',
      method: 'POST',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/refs$/,
      handle: async (_m, body) => {
        const ref = String(body.ref ?? '')
        if (!/^refs\/heads\/./.test(ref)) return unprocessable("Reference name must start with 'refs/' and have at least two slashes.")
        if (!(await exists(String(body.sha), 'commit'))) return unprocessable('Object does not exist')
        if (await branch(ref.slice('refs/heads/'.length))) return unprocessable('Reference already exists')
        await git(['update-ref', ref, String(body.sha)])
        return { status: 201, body: { ref, object: { sha: body.sha, type: 'commit' } } }
      }
    },
    {
      name: 'updateRef',
      method: 'PATCH',
      re: /^\/repos\/[^/]+\/[^/]+\/git\/refs\/(heads(?:\/|%2F).+)$/i,
      handle: async (m, body) => {
        const name = decodeURIComponent(m[1]).slice('heads/'.length)
        const old = await branch(name)
        if (!old) return unprocessable('Reference does not exist')
        if (!(await exists(String(body.sha), 'commit'))) return unprocessable('Object does not exist')
        if (body.force !== true) {
          try {
            await git(['merge-base', '--is-ancestor', old, String(body.sha)])
          } catch {
            return unprocessable('Update is not a fast forward')
          }
        }
        await git(['update-ref', `refs/heads/${name}`, String(body.sha)])
        return { status: 200, body: { ref: `refs/heads/${name}`, object: { sha: body.sha, type: 'commit' } } }
      }
    },
    {
      name: 'getPull',
      method: 'GET',
      re: /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/,
      handle: async m => {
        const p = pulls.get(Number(m[1]))
        if (!p) return notFound()
        const repoJson = (full: string | null) =>
          full ? { full_name: full, name: full.split('/')[1], owner: { login: full.split('/')[0] } } : null
        return {
          status: 200,
          body: {
            number: p.number,
            html_url: `https://github.com/${repoName}/pull/${p.number}`,
            head: { ref: p.head.ref, sha: p.head.sha, repo: repoJson(p.head.repo) },
            base: { ref: p.base.ref, repo: repoJson(repoName) }
          }
        }
      }
    },
    {
      name: 'createPull',
      method: 'POST',
      re: /^\/repos\/[^/]+\/[^/]+\/pulls$/,
      handle: async (_m, body) => {
        if (typeof body.title !== 'string' || !body.title) return unprocessable('Validation Failed: title missing')
        if (!(await branch(String(body.head)))) return unprocessable(`Validation Failed: head ${body.head} is not a branch`)
        if (!(await branch(String(body.base)))) return unprocessable(`Validation Failed: base ${body.base} is not a branch`)
        const number = nextPull++
        created.pulls.push({
          number,
          title: body.title,
          head: body.head,
          base: body.base,
          body: String(body.body ?? ''),
          draft: body.draft === true
        })
        return {
          status: 201,
          body: { number, html_url: `https://github.com/${repoName}/pull/${number}`, draft: body.draft === true, state: 'open' }
        }
      }
    },
    {
      name: 'compareCommits',
      method: 'GET',
      re: /^\/repos\/[^/]+\/[^/]+\/compare\/([^/.]+(?:\/[^/.]+)*)\.\.\.(.+)$/,
      handle: async m => {
        const [a, b] = [decodeURIComponent(m[1]), decodeURIComponent(m[2])]
        let behind: number
        let ahead: number
        try {
          const counts = (await git(['rev-list', '--left-right', '--count', `${a}...${b}`])).toString().trim().split(/\s+/)
          behind = Number(counts[0])
          ahead = Number(counts[1])
        } catch {
          return notFound()
        }
        const status = ahead === 0 && behind === 0 ? 'identical' : behind === 0 ? 'ahead' : ahead === 0 ? 'behind' : 'diverged'
        return { status: 200, body: { status, ahead_by: ahead, behind_by: behind, total_commits: ahead } }
      }
    }
  ]
  return { dir, routes, pulls, created, git, branch, close: () => rmSync(dir, { recursive: true, force: true }) }
}
