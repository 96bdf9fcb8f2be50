// prepareSandbox on this machine, without mocks: the real command server,
// real namespaces, real uids (each run's own, never used before), real git.
// The end-to-end attacks through dist/ are in contain.test.ts and security.test.ts.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { prepareSandbox, recoverSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox'
import { handBack, readBase, localExec, execScratch } from '../src/changes'
import { Redactor, secretsFromEnv } from '../src/report/redact'
import { copySource } from '../src/run/handback'
import { trustedGit } from '../src/sandbox/trusted-git'
import { nsMembers, pids, procStat, withUid } from '../src/trusted/proc'
import { usedBy } from '../src/trusted/setup'
import { RUN_UIDS } from '../src/trusted/protocol'

const isRoot = process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0
const hasSudo = !isRoot && process.platform === 'linux' && spawnSync('sudo', ['-n', 'true']).status === 0
const privileged = isRoot || hasSudo
const withPrivilege = privileged ? test : test.skip
const asRootOnly = isRoot ? test : test.skip
const sudoInstalled = spawnSync('sudo', ['-n', 'true']).status === 0
const RUNS_DIR = '/var/lib/bash-agent/runs'

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-'))
chmodSync(tmp, 0o755)
const open: Sandbox[] = []

afterAll(async () => {
  for (const s of open) await s.release()
  rmSync(tmp, { recursive: true, force: true })
})

const b64 = (s: string) => Buffer.from(s).toString('base64')
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e'
    }
  }).toString()

function repo(): { workspace: string; runnerTemp: string } {
  const base = mkdtempSync(path.join(tmp, 'l-'))
  const workspace = path.join(base, 'repo')
  const runnerTemp = path.join(base, '_temp')
  mkdirSync(workspace)
  mkdirSync(runnerTemp)
  git(workspace, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(workspace, 'README.md'), '# repo\n')
  git(workspace, 'add', '-A')
  git(workspace, 'commit', '-qm', 'base')
  return { workspace, runnerTemp }
}

function options(over: Partial<SandboxOptions> & { workspace: string }): SandboxOptions & { logs: string[]; states: string[] } {
  const logs: string[] = []
  const states: string[] = []
  const env = over.env ?? { PATH: process.env.PATH, HOME: os.homedir(), CI: 'true', GITHUB_TOKEN: `ghs_${randomBytes(18).toString('hex')}` }
  return {
    mode: 'user',
    env,
    redactor: new Redactor(secretsFromEnv(env)),
    log: m => logs.push(m),
    saveState: v => states.push(v),
    logs,
    states,
    ...over
  }
}

async function prepare(o: SandboxOptions): Promise<Sandbox> {
  const s = await prepareSandbox(o)
  open.push(s)
  return s
}

async function release(s: Sandbox): Promise<string[]> {
  open.splice(open.indexOf(s), 1)
  return s.release()
}

const passwdNames = () =>
  readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map(l => l.split(':')[0])
/** As root (directly or through sudo). */
const asRoot = (argv: string[]) => execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv])
/** A uid of the range runs pick from that nothing has yet. */
const freshUid = (): number => {
  for (;;) {
    const uid = RUN_UIDS.from + (randomBytes(4).readUInt32BE() % (RUN_UIDS.to - RUN_UIDS.from))
    if (!usedBy(uid)) return uid
  }
}
const sh = (s: Sandbox, command: string) => s.run(command, { timeoutMs: 30_000, maxOutputChars: 50_000, blocked: [], redact: t => t })
const runDirs = () =>
  existsSync(RUNS_DIR)
    ? isRoot
      ? readdirSync(RUNS_DIR)
      : execFileSync('sudo', ['-n', 'ls', '-1', RUNS_DIR]).toString().split('\n').filter(Boolean)
    : []

describe('fails closed; sandbox: none is plain local execution', () => {
  test('no root and no passwordless sudo: no sandbox at all (never none), and the error says what was missing and names sandbox: none', async () => {
    const { workspace } = repo()
    const o = options({ workspace, privilege: 'unavailable' })
    await expect(prepareSandbox(o)).rejects.toThrow(
      /could not be set up \(not root and no passwordless sudo\)[^]*`sandbox: none` runs the agent uncontained/
    )
    expect(o.states).toEqual([]) // nothing was made
  })

  test('sandbox: none: the runner user in the workspace, said not contained; a detached child carrying the run key is killed', async () => {
    const { workspace } = repo()
    const o = options({ workspace, mode: 'none' })
    const s = await prepare(o)
    expect(s.mode).toBe('none')
    expect(s.workdir).toBe(workspace)
    expect(s.note).toMatch(/^none \(not contained: /)
    const r = await sh(s, 'pwd; id -un')
    expect(r.output).toBe(`${workspace}\n${os.userInfo().username}`)
    const bg = await sh(s, 'setsid sleep 600 > /dev/null 2>&1 & echo $!')
    const pid = Number(bg.output)
    expect(pid).toBeGreaterThan(1)
    const stop = await s.stopAll()
    const gone = () => {
      try {
        return /^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'latin1'))
      } catch {
        return true
      }
    }
    for (let i = 0; i < 100 && !gone(); i++) await new Promise(r => setTimeout(r, 50))
    expect(gone()).toBe(true)
    expect(stop.ok).toBe(false)
    expect(stop.detail).toMatch(/could not be verified gone/)
    expect(await release(s)).toEqual([])
  })

  test('sandbox: none: a command that cannot start (its folder is gone) comes back as that error, and the next one runs', async () => {
    const { workspace } = repo()
    const s = await prepare(options({ workspace, mode: 'none' }))
    expect((await sh(s, 'cd / && rm -rf -- "$OLDPWD" && echo removed')).output).toBe('removed')
    const failed = await sh(s, 'echo never')
    expect(failed.error).toMatch(/does not exist|ENOENT/)
    expect(failed.exitCode).toBeNull()
    mkdirSync(workspace)
    expect((await sh(s, 'echo again')).output).toBe('again')
    await release(s)
  })
})

describe('the run uid (the server refuses one not unused, setup.ts usedBy)', () => {
  test('outside the range runs pick from (root, nobody, a regular user): refused', () => {
    for (const uid of [0, 1000, 65534, RUN_UIDS.from - 1, RUN_UIDS.to, 2 ** 31, 1.5])
      expect(usedBy(uid)).toBe('not among the uids runs pick')
    expect(usedBy(freshUid())).toBe('')
  })

  withPrivilege('a uid the kernel holds keys of (/proc/key-users), or that a process has, is refused', async () => {
    // add_key(2) into the user keyring (KEY_SPEC_USER_KEYRING, -4), as that uid: the keys live on after it
    const keyed = freshUid()
    const addKey =
      'use Config; my ($t, $d, $v) = ("user", "k", "v"); syscall($Config{archname} =~ /aarch64/ ? 217 : 248, $t, $d, $v, 1, -4) > 0 or die "add_key: $!"'
    asRoot(['setpriv', `--reuid=${keyed}`, `--regid=${keyed}`, '--clear-groups', 'perl', '-e', addKey])
    expect(readFileSync('/proc/key-users', 'utf8')).toMatch(new RegExp(`^\\s*${keyed}:`, 'm'))
    expect(usedBy(keyed)).toBe('the kernel holds keys of it')
    const busy = freshUid()
    const sleeper = spawn(
      isRoot ? 'setpriv' : 'sudo',
      [...(isRoot ? [] : ['-n', 'setpriv']), `--reuid=${busy}`, `--regid=${busy}`, '--clear-groups', 'sleep', '600'],
      { stdio: 'ignore' }
    )
    try {
      for (let i = 0; i < 200 && !withUid(busy).length; i++) await new Promise(r => setTimeout(r, 10))
      expect(usedBy(busy)).toBe('a process has it')
    } finally {
      asRoot(['pkill', '-KILL', '-U', String(busy)])
      sleeper.kill()
    }
  })
})

describe('user mode', () => {
  withPrivilege(
    "commands run as the sandbox user in a copy of its own: the commit, the earlier steps' files, no credential; the workspace untouched",
    async () => {
      const { workspace } = repo()
      const token = `ghs_${randomBytes(18).toString('hex')}`
      git(workspace, 'config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`)
      git(workspace, 'config', '--local', 'remote.origin.url', `https://x-access-token:${token}@github.com/o/r`)
      mkdirSync(path.join(workspace, 'dist'))
      writeFileSync(path.join(workspace, 'dist', 'built.js'), 'built\n')
      const configBefore = readFileSync(path.join(workspace, '.git', 'config'))
      const o = options({ workspace })
      const s = await prepare(o)
      expect(s.mode).toBe('user')
      expect(s.note).toBe(`user (${s.env.USER})`)
      expect(s.env.USER).toMatch(/^bash-agent-[0-9a-f]{8}$/)
      expect(s.workdir).toMatch(/^\/var\/lib\/bash-agent\/runs\/[0-9a-f]{32}\/repo$/)
      expect(s.baseSha).toBe(git(workspace, 'rev-parse', 'HEAD').trim())
      // the run folder was recorded before it was made
      expect(JSON.parse(o.states[0]).runDir).toBe(path.dirname(s.workdir))
      const r = await sh(
        s,
        'id -un; pwd; git rev-parse HEAD; cat dist/built.js; cat .git/config; git remote -v | head -1; touch "$0" 2>/dev/null || echo no-write-outside'
      )
      const lines = r.output.split('\n')
      expect(lines.slice(0, 4)).toEqual([s.env.USER, s.workdir, s.baseSha, 'built'])
      // a uid of the run's own, of no account on the host, in no group but its own; named for the commands alone
      const ids = (await sh(s, 'id -u; id -g; id -G; id -Gn; getent passwd "$(id -u)"')).output.split('\n')
      const uid = Number(ids[0])
      expect(uid).toBeGreaterThanOrEqual(RUN_UIDS.from)
      expect(uid).toBeLessThan(RUN_UIDS.to)
      expect(ids.slice(1)).toEqual([
        `${uid}`,
        `${uid}`,
        s.env.USER,
        `${s.env.USER}:x:${uid}:${uid}:bash-agent action sandbox:${s.env.HOME}:/bin/bash`
      ])
      expect(passwdNames()).not.toContain(s.env.USER)
      expect(readFileSync('/etc/passwd', 'utf8')).not.toContain(`:${uid}:`)
      expect(r.output).not.toContain(token)
      expect(r.output).not.toMatch(/extraheader/)
      expect(r.output).toContain('https://github.com/o/r')
      const w = await sh(s, `echo x > ${JSON.stringify(path.join(workspace, 'x'))} 2>&1; ls ${JSON.stringify(workspace)} 2>&1 | head -1`)
      expect(w.output).toMatch(/Permission denied|No such file/)
      expect(readFileSync(path.join(workspace, '.git', 'config')).equals(configBefore)).toBe(true)
      expect(await release(s)).toEqual([])
      expect(existsSync(path.dirname(s.workdir))).toBe(false)
    }
  )

  withPrivilege(
    "the copy shares the workspace's blocks (an overlay; the hand-over copies no data); the agent's edits stay in its copy",
    async () => {
      const { workspace } = repo()
      writeFileSync(path.join(workspace, '.gitignore'), 'big/\n')
      git(workspace, 'add', '.gitignore')
      git(workspace, 'commit', '-qm', 'ignore')
      mkdirSync(path.join(workspace, 'big'))
      const blob = randomBytes(32 * 1024 * 1024)
      writeFileSync(path.join(workspace, 'big', 'blob.bin'), blob)
      const o = options({ workspace })
      const s = await prepare(o)
      expect(o.logs.join('\n')).toContain('an overlay on the workspace, which stays read-only')
      // what the run folder holds on disk, read from outside the namespace: far less than the 32 MiB file
      const du = spawnSync(isRoot ? 'du' : 'sudo', [...(isRoot ? [] : ['-n', 'du']), '-s', '-x', '-B1', path.dirname(s.workdir)])
      expect(Number(du.stdout.toString().split('\t')[0])).toBeLessThan(8 * 1024 * 1024)
      const r = await sh(
        s,
        'sha256sum big/blob.bin | cut -c1-64; echo more >> big/blob.bin; stat -c "%s %U" big/blob.bin; findmnt -n -o FSTYPE -T .'
      )
      expect(r.output.split('\n')).toEqual([createHash('sha256').update(blob).digest('hex'), `${blob.length + 5} ${s.env.USER}`, 'overlay'])
      expect(readFileSync(path.join(workspace, 'big', 'blob.bin')).equals(blob)).toBe(true)
      expect(await release(s)).toEqual([])
      expect(existsSync(path.dirname(s.workdir))).toBe(false)
    }
  )

  withPrivilege('where no overlay can be mounted (a path the mount options cannot hold), the files are copied instead', async () => {
    const { workspace: made } = repo()
    const workspace = path.join(path.dirname(made), 'a,b')
    execFileSync('mv', [made, workspace])
    writeFileSync(path.join(workspace, 'untracked.txt'), 'u\n')
    // a device node an earlier step left (a rootfs unpacked with sudo): useless in the copy
    const mknod = spawnSync(isRoot ? 'mknod' : 'sudo', [
      ...(isRoot ? [] : ['-n', 'mknod']),
      path.join(workspace, 'null-dev'),
      'c',
      '1',
      '3'
    ])
    expect(mknod.status).toBe(0)
    const o = options({ workspace })
    const s = await prepare(o)
    expect(o.logs.join('\n')).toContain('(copied files)')
    const r = await sh(
      s,
      'cat README.md untracked.txt; echo x >> README.md; git status --short; findmnt -n -o FSTYPE -T . | grep -c overlay; echo x > null-dev || echo no-device'
    )
    expect(r.output).toMatch(/^# repo\nu\n M README.md\n\?\? untracked.txt\n0\n.*Permission denied\nno-device$/)
    expect(readFileSync(path.join(workspace, 'README.md'), 'utf8')).toBe('# repo\n')
    expect(await release(s)).toEqual([])
  })

  withPrivilege(
    "objects the agent forges in its copy's .git under the start's names never make the hand-back change an ignored file of the workspace",
    async () => {
      const { workspace } = repo()
      writeFileSync(path.join(workspace, '.gitignore'), 'node_modules/\n')
      git(workspace, 'add', '.gitignore')
      git(workspace, 'commit', '-qm', 'ignore')
      const tool = path.join(workspace, 'node_modules', '.bin', 'tool')
      mkdirSync(path.dirname(tool), { recursive: true })
      writeFileSync(tool, '#!/bin/sh\necho real\n', { mode: 0o755 })
      const s = await prepare(options({ workspace }))
      const forged = await sh(s, readFileSync(path.resolve('__tests__', 'helpers', 'forge-start-tree.sh'), 'utf8'))
      expect(forged.output).toContain('forged root')
      expect(await s.stopAll()).toEqual({ ok: true })
      const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C', HOME: '/nonexistent' }
      const r = await handBack({
        mode: 'apply',
        base: await readBase(workspace, localExec),
        workspace,
        // as the action does: an overlay copy's hand-back reads its upper layer (no start store), a copied one its start
        source: s.listUpper
          ? copySource(s, trustedGit(workspace))
          : {
              workdir: s.workdir,
              exec: s.exec,
              inPlace: false,
              start: { tree: s.startTree as string, objects: s.startObjects as string },
              scratch: execScratch(s.exec, env),
              tmpDir: s.env.TMPDIR,
              path: env.PATH
            },
        containsSecret: () => false,
        patchDir: os.tmpdir(),
        patchName: `forge-${randomUUID()}.patch`,
        log: () => undefined
      })
      // the agent un-ignored the workspace's ignored tool and changed it: never written over the workspace's own
      const applied = r.kind === 'computed' ? r.applied : undefined
      expect(applied?.kind === 'applied' && applied.failed.map(f => f.path)).toEqual(['node_modules/.bin/tool'])
      expect(readFileSync(tool, 'utf8')).toBe('#!/bin/sh\necho real\n')
      expect(await release(s)).toEqual([])
    }
  )

  withPrivilege('credentials in bare repositories and separate git dirs of the workspace are not in the copy', async () => {
    const { workspace } = repo()
    const [bare, sep] = [`ghp_${randomBytes(18).toString('hex')}`, `ghs_${randomBytes(18).toString('hex')}`]
    git(workspace, 'init', '-q', '--bare', 'cache/mirror.git')
    git(path.join(workspace, 'cache', 'mirror.git'), 'config', 'remote.origin.url', `https://x-access-token:${bare}@github.com/o/r`)
    mkdirSync(path.join(workspace, 'deps'))
    git(workspace, 'init', '-q', '--separate-git-dir=deps/.sepgit', 'deps/sep')
    git(path.join(workspace, 'deps', 'sep'), 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x:${sep}`)}`)
    const s = await prepare(options({ workspace }))
    const r = await sh(s, `grep -r -a -l -e '${bare}' -e '${b64(`x:${sep}`)}' -e extraheader . | wc -l`)
    // a config holding a credential the action knows is not given at all (secret-files.ts), or given cleaned
    expect(r.output).toBe('0')
    expect(await release(s)).toEqual([])
  })

  withPrivilege('SysV shared memory and files in /run/lock the agent makes end with the run', async () => {
    const { workspace } = repo()
    const mark = `bash-agent-test-${randomUUID()}`
    const hostSegments = () =>
      spawnSync('ipcs', ['-m'])
        .stdout.toString()
        .split('\n')
        .filter(l => /^0x/.test(l)).length
    const before = hostSegments()
    const s = await prepare(options({ workspace }))
    const r = await sh(s, `ipcmk -M 65536 >/dev/null && ipcs -m | grep -c '^0x'; touch /run/lock/${mark} && echo locked`)
    expect(r.output).toBe('1\nlocked')
    expect(await release(s)).toEqual([])
    expect(hostSegments()).toBe(before)
    expect(existsSync(path.join('/run/lock', mark))).toBe(false)
  })

  withPrivilege('stopAll kills everything and verifies it; exec still works afterwards, as the sandbox user', async () => {
    const { workspace } = repo()
    const s = await prepare(options({ workspace }))
    await sh(s, "setsid sh -c 'while :; do sleep 0.1; done' > /dev/null 2>&1 & (env -i setsid sleep 600 &) ; echo started")
    const ps = await sh(s, 'ps -e -o comm= | grep -c -E "^(sleep|sh)$"')
    expect(Number(ps.output)).toBeGreaterThanOrEqual(2)
    expect(await s.stopAll()).toEqual({ ok: true })
    // what is alive: the killed are zombies until the namespace's init reaps them (stopAll verifies by /proc state);
    // a file, not a pipe: a pipeline's next child is an `sh` until it has exec'd, which ps can see under load
    const e = await s.exec('sh', [
      '-c',
      'id -un; f=$(mktemp); ps -e -o stat=,comm= > "$f"; grep -c -E "^[^Z]\\S*\\s+(sleep|sh)$" "$f" || true'
    ])
    expect(e.code).toBe(0)
    expect(e.stdout.toString()).toBe(`${s.env.USER}\n1\n`) // only this sh itself
    expect(await release(s)).toEqual([])
  })

  withPrivilege('withheld files are not in the copy (whiteouts), the workspace keeps them, their folders stay writable', async () => {
    const { workspace } = repo()
    const deep = path.join(workspace, 'sub', 'dir')
    mkdirSync(deep, { recursive: true })
    const token = `ghs_${randomBytes(18).toString('hex')}`
    writeFileSync(path.join(workspace, 'gha-creds-1234.json'), JSON.stringify({ token }))
    writeFileSync(path.join(deep, 'creds.json'), token)
    writeFileSync(path.join(deep, 'kept.txt'), 'kept\n')
    // found by secretFiles: the redactor knows the token
    const o = options({ workspace })
    o.redactor.add(token)
    const s = await prepare(o)
    expect(s.mode).toBe('user')
    const r = await sh(
      s,
      'ls -a . sub/dir; cat gha-creds-1234.json sub/dir/creds.json; grep -r ghs_ . ; echo new > sub/dir/new.txt && cat sub/dir/kept.txt sub/dir/new.txt'
    )
    expect(r.output).not.toContain(token)
    expect(r.output).not.toMatch(/^(gha-creds-1234|creds)\.json$/m)
    expect(r.output).toMatch(/No such file/)
    expect(r.output).toMatch(/kept\nnew$/)
    expect(readFileSync(path.join(workspace, 'gha-creds-1234.json'), 'utf8')).toContain(token)
    expect(await release(s)).toEqual([])
  })

  withPrivilege('a git planted on PATH in a folder the agent can write is never run with privileges', async () => {
    const { workspace } = repo()
    const bin = path.join(workspace, 'node_modules', '.bin')
    mkdirSync(bin, { recursive: true })
    const marker = path.join(tmp, `planted-${randomUUID()}`)
    for (const name of ['git', 'cp', 'chown', 'mount', 'umount', 'rm', 'unshare', 'bash', 'setpriv', 'perl']) {
      writeFileSync(path.join(bin, name), `#!/bin/sh\ntouch ${marker}\nexit 1\n`, { mode: 0o755 })
    }
    const o = options({ workspace, env: { PATH: `${bin}:${process.env.PATH}`, HOME: os.homedir() } })
    const s = await prepare(o)
    expect(s.mode).toBe('user')
    expect(await release(s)).toEqual([])
    expect(existsSync(marker)).toBe(false)
  })

  withPrivilege(
    'where unshare can make no network namespace, or no namespace at all, the run stops and says which (never none)',
    async () => {
      const real = execFileSync('sh', ['-c', 'command -v unshare']).toString().trim()
      for (const [refuses, why] of [
        ['case " $* " in *" --net "*) exit 1;; esac; ', 'network namespaces (unshare --net) are not available'],
        ['exit 1; ', 'PID namespaces (unshare) are not available']
      ]) {
        const { workspace } = repo()
        const bin = mkdtempSync(path.join(tmp, 'unshare-bin-'))
        writeFileSync(path.join(bin, 'unshare'), `#!/bin/sh\n${refuses}exec ${real} "$@"\n`, { mode: 0o755 })
        const o = options({
          workspace,
          env: { PATH: `${bin}:${process.env.PATH}`, HOME: os.homedir() },
          network: { mode: 'allowlist', allowed: [] }
        })
        await expect(prepareSandbox(o)).rejects.toThrow(why)
      }
    }
  )

  asRootOnly('a killed process its parent has not reaped yet (a zombie) is not counted as alive in its namespace', async () => {
    // unshare stopped: the namespace's init, once killed, stays a zombie until unshare runs again
    const un = spawn('unshare', ['--pid', '--fork', '--kill-child', 'sleep', '600'], { stdio: 'ignore' })
    try {
      let init: number | undefined
      for (let i = 0; i < 200 && init === undefined; i++) {
        init = pids().find(p => procStat(p)?.ppid === un.pid)
        if (init === undefined) await new Promise(r => setTimeout(r, 10))
      }
      const ns = readlinkSync(`/proc/${init}/ns/pid`)
      expect(nsMembers(ns)).toEqual([init])
      /** The state of `pid` once it is `want`, or after 2 s. */
      const reached = async (pid: number, want: string) => {
        for (let i = 0; i < 200 && procStat(pid)?.state !== want; i++) await new Promise(r => setTimeout(r, 10))
        return procStat(pid)?.state
      }
      process.kill(un.pid!, 'SIGSTOP')
      // a signal is delivered when the target next runs: only once unshare shows stopped can it not reap
      expect(await reached(un.pid!, 'T')).toBe('T')
      process.kill(init!, 'SIGKILL')
      expect(await reached(init!, 'Z')).toBe('Z')
      expect(nsMembers(ns)).toEqual([])
    } finally {
      un.kill('SIGKILL')
    }
  })

  withPrivilege('recovery by the post step from the saved state alone: the namespace killed, the run folder removed', async () => {
    const { workspace } = repo()
    const o = options({ workspace })
    const s = await prepare(o)
    await sh(s, 'setsid sleep 600 > /dev/null 2>&1 & mkdir -p many && cd many && seq 3000 | xargs touch')
    const saved = o.states.at(-1) as string
    expect(JSON.parse(saved).ns).toMatch(/^pid:\[\d+\]$/)
    const uid = Number((await sh(s, 'id -u')).output)
    expect(JSON.parse(o.states[0]).uid).toBe(uid) // saved before the server started
    // something of the uid outside the namespace (as the proxy is): the post step kills it too
    const outside = spawn(
      isRoot ? 'setpriv' : 'sudo',
      [...(isRoot ? [] : ['-n', 'setpriv']), `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sleep', '600'],
      { stdio: 'ignore' }
    )
    for (let i = 0; i < 200 && !withUid(uid).length; i++) await new Promise(r => setTimeout(r, 10))
    // the main step died here: its state is all the post step has
    const logs: string[] = []
    expect(await recoverSandbox(saved, m => logs.push(m))).toBe(true)
    expect(logs.join('\n')).toMatch(/done now/)
    expect(existsSync(path.dirname(s.workdir))).toBe(false)
    expect(runDirs()).not.toContain(path.basename(path.dirname(s.workdir)))
    expect(withUid(uid)).toEqual([])
    outside.kill()
    // release after recovery finds nothing more to do, and says nothing went wrong with the processes
    const problems = await release(s)
    expect(problems.filter(p => !/command server/.test(p))).toEqual([])
  })

  withPrivilege("runs apart: two runs at once have users of their own; one told the other's places writes nothing there", async () => {
    const [a, b] = await Promise.all([prepare(options({ workspace: repo().workspace })), prepare(options({ workspace: repo().workspace }))])
    expect([a.mode, b.mode]).toEqual(['user', 'user'])
    const userA = a.env.USER as string
    const userB = b.env.USER as string
    for (const u of [userA, userB]) expect(u).toMatch(/^bash-agent-[0-9a-f]{8}$/)
    expect(userA).not.toBe(userB)
    const ids = await Promise.all([sh(a, 'id -u'), sh(b, 'id -u')])
    expect(ids[0].output).not.toBe(ids[1].output)
    // B's own places, written by B
    const seed = await sh(b, 'echo "# seed" > ~/.gitconfig && echo seed > "$TMPDIR/t" && echo seed > ours && id -un')
    expect(seed.output).toBe(userB)
    const places = [b.env.HOME as string, b.env.TMPDIR as string, b.workdir]
    expect(places.every(p => p.startsWith(path.dirname(b.workdir)))).toBe(true)
    const attack = [
      'for d in "$@"; do',
      '  for f in "$d/.gitconfig" "$d/t" "$d/ours" "$d/README.md" "$d/.git/config" "$d/new"; do',
      '    (echo "[core]fsmonitor=touch /tmp/pwned" >> "$f") 2>/dev/null && echo "wrote $f"',
      '    (: > "$f") 2>/dev/null && echo "truncated $f"',
      '  done',
      '  mkdir "$d/dir" 2>/dev/null && echo "made $d/dir"',
      '  ln -s /etc/passwd "$d/link" 2>/dev/null && echo "linked $d"',
      '  chmod 777 "$d" 2>/dev/null && echo "chmod $d"',
      'done',
      'echo end'
    ].join('\n')
    const r = await a.run(`set -- ${places.map(p => `'${p}'`).join(' ')}\n${attack}`, {
      timeoutMs: 30_000,
      maxOutputChars: 50_000,
      blocked: [],
      redact: t => t
    })
    expect(r.output).toBe('end')
    // B sees its places as it left them, and its git runs nothing of A's
    const after = await sh(
      b,
      'cat ~/.gitconfig "$TMPDIR/t" ours; ls -A "$TMPDIR"; ls -A ~; git status --porcelain; test -e /tmp/pwned || echo clean'
    )
    expect(after.output.split('\n')).toEqual(['# seed', 'seed', 'seed', 't', '.gitconfig', '?? ours', 'clean'])
    // RLIMIT_NPROC counts the user's processes: A's many do not count against B
    const many = await sh(a, 'for i in $(seq 40); do setsid sleep 600 < /dev/null > /dev/null 2>&1 & done; pgrep -c -u "$(id -u)"')
    expect(Number(many.output)).toBeGreaterThanOrEqual(40)
    const room = await sh(b, 'ulimit -u 20; for i in 1 2 3 4 5; do /bin/true || echo failed; done 2>&1; echo done')
    expect(room.output).toBe('done')
    expect(await release(a)).toEqual([])
    expect(withUid(Number(ids[0].output))).toEqual([])
    expect((await sh(b, 'id -un')).output).toBe(userB) // B's run goes on
    expect(await release(b)).toEqual([])
    expect(withUid(Number(ids[1].output))).toEqual([])
  })

  ;(isRoot && sudoInstalled ? test : test.skip)('through real sudo, as on a runner (the action asks sudo even as root)', async () => {
    const { workspace } = repo()
    const s = await prepare(options({ workspace, privilege: 'sudo' }))
    expect(s.mode).toBe('user')
    const r = await sh(s, 'id -un; ps -e -o comm= | grep -c sudo')
    expect(r.output).toBe(`${s.env.USER}\n0`) // sudo stays outside the namespace
    expect(await release(s)).toEqual([])
  })
})
