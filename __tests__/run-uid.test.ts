// Each run's own uid, through the built action (dist/, sandbox: user) in both privilege kinds: a random one never
// used on the machine, so kernel state of an earlier run (keys in its user keyring outlive every process) never
// reaches a later one; no account is made, yet the commands see a name (whoami, git's ident, Python's getpass).
import { afterAll, describe, expect, test } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { bash, text } from './helpers/fake-anthropic'
import { cleanupRuns } from './helpers/run-action'
import { agent, toolResults } from './helpers/agent-run'
import { sandboxKinds } from './helpers/kinds'
import { RUN_UIDS } from '../src/trusted/protocol'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)
afterAll(() => cleanupRuns())

/** keyctl(2) through perl's syscall (no keyutils needed): add_key, keyctl on x86_64 and aarch64. */
const PERL = 'use Config; my $arm = $Config{archname} =~ /aarch64/; my ($add, $ctl) = $arm ? (217, 219) : (248, 250);'

describe.each(KINDS)('the run uid ($name)', kind => {
  test("keys one run adds to its user keyring never reach a later run, whose uid differs; the commands see the run's name", async () => {
    const desc = `bash-agent-canary-${randomBytes(6).toString('hex')}`
    const secret = `secret-canary-${randomBytes(12).toString('hex')}`
    // add_key("user", desc, secret, len, KEY_SPEC_USER_KEYRING = -4)
    const add = `perl -e '${PERL} my ($t, $d, $v) = ("user", "${desc}", "${secret}"); my $id = syscall($add, $t, $d, $v, length $v, -4); print $id > 0 ? "added $id\\n" : "add_key: $!\\n"'`
    const names = [
      'id -u',
      'whoami',
      'id -un',
      'id -G',
      '/usr/bin/python3 -c "import getpass, pwd, os; print(getpass.getuser(), pwd.getpwuid(os.getuid()).pw_name)" 2>&1 || echo no-python',
      'git -c user.email=agent@example.com commit -q --allow-empty -m probe 2>&1 && git log -1 --format=%an'
    ].join('; ')
    const one = await agent([bash(`${add}; ${names}`), text('Added.')], {
      inputs: { sandbox: 'user', 'blocked-commands': '' },
      extra: { asUser: kind.asUser },
      timeoutMs: 240_000
    })
    expect(one.run.code).toBe(0)
    const [out1] = toolResults(one)
    const lines = out1.split('\n')
    const id = /^added (\d+)$/.exec(lines[0])?.[1]
    expect(id).toBeDefined()
    const uid1 = Number(lines[1])
    expect(uid1).toBeGreaterThanOrEqual(RUN_UIDS.from)
    expect(uid1).toBeLessThan(RUN_UIDS.to)
    const name = lines[2]
    expect(name).toMatch(/^bash-agent-[0-9a-f]{8}$/)
    expect(lines.slice(3, 5)).toEqual([name, `${uid1}`]) // in no group but its own
    if (lines[5] !== 'no-python') expect(lines[5]).toBe(`${name} ${name}`)
    expect(lines[6]).toBe('bash-agent action sandbox') // git's ident from the passwd entry
    // no account on the host; the keys live on in the kernel, under the first run's uid alone
    expect(readFileSync('/etc/passwd', 'utf8')).not.toContain(`:${uid1}:`)
    expect(readFileSync('/proc/key-users', 'utf8')).toMatch(new RegExp(`^\\s*${uid1}:`, 'm'))

    // KEYCTL_SEARCH (10) of the user keyring; KEYCTL_READ (11) of the first run's key by its id; /proc/keys
    const look = [
      `perl -e '${PERL} my ($t, $d) = ("user", "${desc}"); my $f = syscall($ctl, 10, -4, $t, $d, 0); print $f > 0 ? "found $f\\n" : "not found\\n"; my $b = "\\0" x 128; my $n = syscall($ctl, 11, ${id}, $b, 128); print $n >= 0 ? "read " . substr($b, 0, $n) . "\\n" : "unreadable\\n"'`,
      `grep -c ${desc} /proc/keys`,
      'id -u'
    ].join('; ')
    const two = await agent([bash(look), text('Looked.')], {
      inputs: { sandbox: 'user', 'blocked-commands': '' },
      extra: { asUser: kind.asUser },
      timeoutMs: 240_000
    })
    expect(two.run.code).toBe(0)
    const [out2] = toolResults(two)
    const [found, read, inProc, uid2] = out2.split('\n')
    expect([found, read, inProc]).toEqual(['not found', 'unreadable', '0'])
    expect(out2).not.toContain(secret)
    expect(Number(uid2)).not.toBe(uid1)
    expect(Number(uid2)).toBeGreaterThanOrEqual(RUN_UIDS.from)
  }, 600_000)
})
