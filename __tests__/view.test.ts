// The agent's view of the machine (prepareSandbox, real namespaces and users): every file system read-only
// but its copy and its temporary folders, the runner's places hidden, only trusted programs run as root.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { prepareSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox'
import { trustedFile } from '../src/sandbox/privilege'
import { viewPlan, type HostFacts, type Step } from '../src/trusted/view'
import { Redactor, secretsFromEnv } from '../src/report/redact'

const isRoot = process.platform === 'linux' && process.getuid?.() === 0
const hasSudo = !isRoot && process.platform === 'linux' && spawnSync('sudo', ['-n', 'true']).status === 0
const withPrivilege = isRoot || hasSudo ? test : test.skip
const asRoot = (argv: string[]) => execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv])

const made: string[] = []
const open: Sandbox[] = []
afterAll(async () => {
  for (const s of open) await s.release()
  for (const d of made) asRoot(['rm', '-rf', '--', d])
})

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

/** A folder on the root file system (not /tmp: the agent's /tmp is its own), made by root, with `mode`. */
function hostDir(mode: number): string {
  const d = `/var/lib/view-${randomBytes(6).toString('hex')}`
  asRoot(['mkdir', '-m', mode.toString(8), d])
  asRoot(['chmod', mode.toString(8), d])
  made.push(d)
  return d
}

/** A self-hosted-like 0755 layout: home, work folder with the workspace (its token persisted), RUNNER_TEMP. */
function layout() {
  const root = hostDir(0o755)
  asRoot(['chown', `${os.userInfo().uid}:${os.userInfo().gid}`, root])
  const home = path.join(root, 'home')
  const work = path.join(home, 'work')
  const workspace = path.join(work, 'repo', 'repo')
  const runnerTemp = path.join(work, '_temp')
  const toolCache = path.join(work, '_tool')
  for (const d of [workspace, runnerTemp, path.join(toolCache, 'thing'), path.join(home, '.ssh')])
    mkdirSync(d, { recursive: true, mode: 0o755 })
  git(workspace, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(workspace, 'README.md'), '# repo\n')
  git(workspace, 'add', '-A')
  git(workspace, 'commit', '-qm', 'base')
  const token = `ghs_${randomBytes(18).toString('hex')}`
  git(
    workspace,
    'config',
    '--local',
    'http.https://github.com/.extraheader',
    `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`
  )
  const tempToken = `ghs_${randomBytes(18).toString('hex')}`
  writeFileSync(
    path.join(runnerTemp, 'git-credentials-0123.config'),
    `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${tempToken}\n`,
    { mode: 0o644 }
  )
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n', { mode: 0o644 })
  writeFileSync(path.join(toolCache, 'thing', 'tool.sh'), 'echo tool-ran\n', { mode: 0o755 })
  for (let d = workspace; d !== root; d = path.dirname(d)) chmodSync(d, 0o755)
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    CI: 'true',
    RUNNER_TEMP: runnerTemp,
    RUNNER_WORKSPACE: path.join(work, 'repo'),
    RUNNER_TOOL_CACHE: toolCache,
    GITHUB_WORKSPACE: workspace
  }
  return { root, home, work, workspace, runnerTemp, toolCache, token, tempToken, env }
}

function options(workspace: string, env: Record<string, string | undefined>): SandboxOptions & { logs: string[] } {
  const logs: string[] = []
  return { mode: 'user', workspace, env, redactor: new Redactor(secretsFromEnv(env)), log: m => logs.push(m), logs }
}

const sh = async (s: Sandbox, command: string) =>
  (await s.run(command, { timeoutMs: 60_000, maxOutputChars: 200_000, blocked: [], redact: t => t })).output

describe('the view', () => {
  withPrivilege(
    'a new root: the system read-only, nothing else of the host; the agent writes only its copy, home and temporary folders',
    async () => {
      const l = layout()
      const onPath = hostDir(0o777)
      const offPath = hostDir(0o777)
      const o = options(l.workspace, { ...l.env, PATH: `${onPath}:${process.env.PATH}` })
      const s = await prepareSandbox(o)
      open.push(s)
      expect(s.mode).toBe('user')
      const out = await sh(
        s,
        `for d in ${onPath} ${offPath}; do for f in git node tar sh file; do (printf '#!/bin/sh\\necho planted\\n' > $d/$f) 2>&1; done; done
       for f in /usr/local/bin/x /etc/x /bin/x /lib/x /opt/x /var/lib/x /home/x /run/x /x; do touch $f 2>&1; done
       echo mine > file && cat file; echo t > "$HOME/t" && cat "$HOME/t"; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"
       for d in /tmp /var/tmp /dev/shm /run/lock; do echo t > $d/t && cat $d/t; done`
      )
      const lines = out.split('\n')
      // the host's 0777 folders are not there; the system is read-only; the root is root's
      expect(lines.filter(x => /No such file or directory/.test(x))).toHaveLength(12)
      expect(lines.filter(x => /Read-only file system/.test(x))).toHaveLength(4)
      expect(lines.filter(x => /Permission denied/.test(x))).toHaveLength(3)
      expect(lines.filter(x => x === 'mine' || x === 't')).toHaveLength(7)
      // what is writable at all: the root (a tmpfs, root's 0755), the copy, the kernel's files and devices, the cgroup
      // bound into a root-only folder (the last mount at a place is the one seen there)
      const rw = (await sh(s, "findmnt -rn -o TARGET,OPTIONS | awk '{o[$1]=$2} END {for (t in o) if (o[t] ~ /^rw/) print t}'")).split('\n')
      expect(rw).toContain(s.workdir)
      expect(rw.filter(m => !['/', s.workdir].includes(m) && !/^\/(proc|dev)(\/|$)/.test(m) && !/\/cgroup\/agent$/.test(m))).toEqual([])
      // /run holds no host socket: its lock folder, and mount(8)'s own notes of the copy's overlay
      expect(await sh(s, 'stat -c %U:%a / /tmp /run "$HOME"; ls -A /home 2>&1; ls -A /run; find /run -type s | wc -l')).toMatch(
        /^root:755\nroot:1777\nroot:755\n\S+:700\nls: cannot access '\/home'.*\nlock\n(mount\n)?0$/
      )
      await s.release()
      open.splice(open.indexOf(s), 1)
      expect(readdirSync(onPath)).toEqual([])
      expect(readdirSync(offPath)).toEqual([])
    }
  )

  withPrivilege(
    "the runner's home, work folder, RUNNER_TEMP are not there (0755 layout); the tool cache is; mountinfo never names the workspace",
    async () => {
      const l = layout()
      const o = options(l.workspace, l.env)
      const s = await prepareSandbox(o)
      open.push(s)
      expect(s.mode).toBe('user')
      const out = await sh(
        s,
        `ls -A ${l.home} ${l.work} ${l.runnerTemp} ${l.workspace} 2>&1
       cat ${l.workspace}/.git/config ${l.runnerTemp}/git-credentials-0123.config ${l.home}/.ssh/id_rsa 2>&1
       grep -r ghs_ ${l.root} 2>/dev/null; sh ${l.toolCache}/thing/tool.sh; echo x > ${l.toolCache}/y 2>&1`
      )
      expect(await sh(s, 'cat /proc/self/mountinfo')).not.toContain(l.workspace)
      expect(out).not.toMatch(/^(repo|_temp|\.ssh)$/m)
      expect(out).not.toContain(l.token)
      expect(out).not.toContain(l.tempToken)
      expect(out).not.toContain('PRIVATE KEY')
      expect(out).toContain('tool-ran')
      expect(out).toMatch(/y: Read-only file system/)
      // the copy is still the workspace's
      expect(await sh(s, 'cat README.md')).toBe('# repo')
      await s.release()
      open.splice(open.indexOf(s), 1)
    }
  )
})

describe('the view, as a plan', () => {
  const bins = { mount: '/usr/bin/mount', umount: '/usr/bin/umount', pivot_root: '/usr/sbin/pivot_root' }
  const facts: HostFacts = {
    places: [
      ['/usr', 'dir'],
      ['/bin', 'usr/bin'],
      ['/etc', 'dir'],
      ['/opt/hostedtoolcache', 'dir']
    ],
    mounts: ['/', '/usr', '/etc/resolv.conf', '/run', '/run/user/1000', '/home', '/dev', '/opt/hostedtoolcache/node'],
    noexec: ['/etc/resolv.conf'],
    devices: ['null', 'zero', 'tty']
  }
  const plan = viewPlan('/new', facts, bins)
  const argv = (s: Step) => ('argv' in s ? s.argv.join(' ') : '')
  const at = (pred: (s: Step) => boolean) => plan.findIndex(pred)

  test('each system place is bound, then every mount below it made read-only, nosuid, nodev; a symlink stays one', () => {
    expect(plan.map(argv)).toContain('/usr/bin/mount --rbind /usr /new/usr')
    expect(plan.map(argv)).toContain('/usr/bin/mount -o remount,bind,ro,nosuid,nodev /new/usr')
    expect(plan.map(argv)).toContain('/usr/bin/mount -o remount,bind,ro,nosuid,nodev,noexec /new/etc/resolv.conf')
    expect(plan.map(argv)).toContain('/usr/bin/mount -o remount,bind,ro,nosuid,nodev /new/opt/hostedtoolcache/node')
    expect(plan).toContainEqual({ link: 'usr/bin', to: '/new/bin' })
    expect(at(s => argv(s).endsWith('--rbind /etc /new/etc'))).toBeLessThan(at(s => argv(s).endsWith('/new/etc/resolv.conf')))
  })

  test('nothing else of the host: /run and /home are not bound (/run is an empty folder), /dev has only the devices named', () => {
    const bound = plan.filter(s => 'argv' in s && s.argv.includes('--rbind')).map(s => (s as { argv: string[] }).argv[2])
    expect(bound).toEqual(['/usr', '/etc', '/opt/hostedtoolcache'])
    expect(plan.map(argv).filter(a => /\/(run|home)\b/.test(a))).toEqual([])
    expect(plan).toContainEqual({ dir: '/new/run', mode: 0o755 })
    expect(plan.map(argv).filter(a => a.includes('--bind /dev/'))).toEqual(
      ['null', 'zero', 'tty'].map(d => `/usr/bin/mount --bind /dev/${d} /new/dev/${d}`)
    )
  })

  test('the pivot comes last, and the old root is detached', () => {
    expect(plan.slice(-2).map(argv)).toEqual(['/usr/sbin/pivot_root /new /new/.old', '/usr/bin/umount -l /.old'])
  })
})

describe('trusted programs', () => {
  test('a node copied into a folder others can write is not trusted; nor one below such a folder', () => {
    const open777 = mkdtempSync(path.join(os.tmpdir(), 'view-node-'))
    chmodSync(open777, 0o777)
    const node = path.join(open777, 'node')
    copyFileSync(process.execPath, node)
    chmodSync(node, 0o755)
    expect(trustedFile(node)).toBeUndefined()
    const below = path.join(open777, 'bin')
    mkdirSync(below, { mode: 0o755 })
    copyFileSync(process.execPath, path.join(below, 'node'))
    chmodSync(path.join(below, 'node'), 0o755)
    expect(trustedFile(path.join(below, 'node'))).toBeUndefined()
    expect(trustedFile(process.execPath)).toBe(execFileSync('readlink', ['-f', process.execPath]).toString().trim())
    rmSync(open777, { recursive: true, force: true })
  })

  // the folders below must be root's
  ;(process.getuid?.() === 0 ? test : test.skip)(
    "a folder of root's with the sticky bit may be above a trusted file, not hold it; one of another's may not",
    () => {
      const sticky = mkdtempSync(path.join(os.tmpdir(), 'view-sticky-'))
      chmodSync(sticky, 0o1777)
      const own = path.join(sticky, 'own')
      mkdirSync(own, { mode: 0o755 })
      for (const f of [path.join(own, 'f.js'), path.join(sticky, 'f.js')]) writeFileSync(f, '', { mode: 0o644 })
      expect(trustedFile(path.join(own, 'f.js'))).toBe(path.join(realpathSync(own), 'f.js'))
      expect(trustedFile(path.join(sticky, 'f.js'))).toBeUndefined()
      chownSync(sticky, 65534, 65534)
      expect(trustedFile(path.join(own, 'f.js'))).toBeUndefined()
      rmSync(sticky, { recursive: true, force: true })
    }
  )
})
