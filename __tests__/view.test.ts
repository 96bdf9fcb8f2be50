// The agent's view of the machine (prepareSandbox, real namespaces and users): every file system read-only
// but its copy and its temporary folders, the runner's places hidden, only trusted programs run as root.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { prepareSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox'
import { trustedFile } from '../src/sandbox/privilege'
import { mountEach } from '../src/trusted/view'
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
    'every file system is read-only but the copy and the temporary folders: what the agent plants in a 0777 folder never lands',
    async () => {
      const l = layout()
      const onPath = hostDir(0o777)
      const offPath = hostDir(0o777)
      const o = options(l.workspace, { ...l.env, PATH: `${onPath}:${process.env.PATH}` })
      const s = await prepareSandbox(o)
      open.push(s)
      expect(s.mode).toBe('user')
      expect(o.logs.join('\n')).not.toMatch(/stays writable|could not be hidden/)
      const out = await sh(
        s,
        `for d in ${onPath} ${offPath}; do for f in git node tar sh file; do (printf '#!/bin/sh\\necho planted\\n' > $d/$f) 2>&1; done; done
       touch /usr/local/bin/x /opt/x /var/lib/x 2>&1
       echo mine > file && cat file; echo t > "$HOME/t" && cat "$HOME/t"; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"
       for d in /tmp /var/tmp /dev/shm /run/lock; do echo t > $d/t && cat $d/t; done`
      )
      const lines = out.split('\n')
      expect(lines.filter(x => /Read-only file system/.test(x))).toHaveLength(13)
      expect(lines.filter(x => x === 'mine' || x === 't')).toHaveLength(7)
      expect(out).not.toMatch(/Permission denied/)
      // what the agent can write: its copy, its home and temp, the private temporary folders (and kernel files of no use)
      // (the last mount at a place is the one seen there)
      const rw = (await sh(s, "findmnt -rn -o TARGET,OPTIONS | awk '{o[$1]=$2} END {for (t in o) if (o[t] ~ /^rw/) print t}'")).split('\n')
      const expected = [s.workdir, s.env.HOME, s.env.TMPDIR, '/tmp', '/var/tmp', '/dev/shm', '/run/lock']
      for (const e of expected) expect(rw).toContain(e)
      expect(rw.filter(m => !expected.includes(m) && !m.startsWith('/proc') && !/\/(layers|cgroup\/agent)$/.test(m))).toEqual([])
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

describe('the remounts, in one process', () => {
  // a stand-in for mount(8): fails for a path holding "stuck", with mount's kind of message; takes the rest
  const fakeMount = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-mount-'))
    const mount = path.join(dir, 'mount')
    writeFileSync(
      mount,
      '#!/bin/bash\n[ "$1" = -o ] || exit 64\ncase "$3" in *stuck*) echo "mount: $3: permission denied." >&2; echo second line >&2; exit 32;; esac\nprintf "%s\\n" "$2 $3" >> "${0%/*}/done"\n',
      { mode: 0o755 }
    )
    return { dir, mount }
  }

  test('each pair becomes one mount; a failure names its path and the first line of why, whatever the path holds', async () => {
    const { dir, mount } = fakeMount()
    const odd = '/mnt/stuck dir\nwith a newline'
    const failed = await mountEach({ bash: '/bin/bash', mount }, [
      ['remount,bind,ro', '/a'],
      ['remount,bind,ro,nosuid', '/b/stuck'],
      ['remount,bind,ro,nodev', odd],
      ['remount,bind,ro', '/c; touch /tmp/never']
    ])
    expect(failed).toEqual([
      ['/b/stuck', 'mount: /b/stuck: permission denied.'],
      [odd, `mount: ${odd.split('\n')[0]}`]
    ])
    // the options go with their own path; a path is an argument, never code
    expect(readFileSync(path.join(dir, 'done'), 'utf8')).toBe('remount,bind,ro /a\nremount,bind,ro /c; touch /tmp/never\n')
  })

  test('when the shell cannot run, every mount is said to have failed', async () => {
    const { mount } = fakeMount()
    const failed = await mountEach({ bash: '/nonexistent/bash', mount }, [
      ['remount,bind,ro', '/a'],
      ['remount,bind,ro', '/b']
    ])
    expect(failed.map(([at]) => at)).toEqual(['/a', '/b'])
    for (const [, why] of failed) expect(why).toMatch(/ENOENT|not found|exit/)
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
