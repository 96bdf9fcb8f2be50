// The action's end of the command server's pipe (src/sandbox/client.ts): whatever the chunks the pipe
// hands over, cut at any byte, the frames come back whole, each to its own command or exec. The server
// here is a stand-in process object whose stdout the test feeds; the real server is in sandbox.test.
import { describe, expect, it } from '@jest/globals'
import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import type { ChildProcess } from 'node:child_process'
import { ServerClient } from '../src/sandbox/client'
import { FRAME, frame, jsonFrame } from '../src/trusted/protocol'
import type { ServerConfig } from '../src/trusted/protocol'

function serverProcess(): { child: ChildProcess; feed: (chunk: Buffer) => void } {
  const child = Object.assign(new EventEmitter(), { stdout: new EventEmitter(), stderr: new EventEmitter(), stdin: new PassThrough() })
  child.stdin.resume()
  return { child: child as unknown as ChildProcess, feed: chunk => child.stdout.emit('data', chunk) }
}

/** A seeded generator: the same cuts on every run. */
function random(seed: number): (n: number) => number {
  let s = seed
  return n => {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    return s % n
  }
}

const READY = jsonFrame(FRAME.message, 0, { type: 'ready', ns: '', pid: 1, workdir: '/w' } as never)

/** An exec's output in frames of the given sizes (some empty), then its answer; a command's output, exit and close. */
function stream(next: (n: number) => number): { bytes: Buffer; execOut: Buffer; cmdOut: Buffer } {
  const execParts = Array.from({ length: 1 + next(6) }, () => Buffer.from(Array.from({ length: next(3) ? next(300) : 0 }, () => next(256))))
  const cmdParts = Array.from({ length: 1 + next(4) }, () => Buffer.from(`line ${next(1000)}\n`))
  const frames = [
    READY,
    ...execParts.map(p => frame(FRAME.execOut, 1, p)),
    ...cmdParts.map(p => frame(FRAME.data, 2, p)),
    jsonFrame(FRAME.message, 1, { code: 0, stderr: 'exec done' }),
    jsonFrame(FRAME.exit, 2, { code: 3, signal: null }),
    frame(FRAME.closed, 2, Buffer.alloc(0))
  ]
  return { bytes: Buffer.concat(frames), execOut: Buffer.concat(execParts), cmdOut: Buffer.concat(cmdParts) }
}

async function deliver(bytes: Buffer, cuts: number[]) {
  const { child, feed } = serverProcess()
  const client = new ServerClient(child, { bins: {} } as unknown as ServerConfig)
  const exec = client.exec('git', ['diff'])
  const cmd = client.start('echo', '/w', {})
  const out: Buffer[] = []
  cmd.stdout.on('data', (d: Buffer) => out.push(d))
  const exit = new Promise(resolve => cmd.on('exit', resolve))
  const ended = new Promise(resolve => cmd.stdout.on('end', resolve))
  let at = 0
  for (const cut of [...cuts, bytes.length]) {
    feed(bytes.subarray(at, cut))
    at = cut
  }
  await expect(client.ready).resolves.toMatchObject({ type: 'ready', workdir: '/w' })
  const r = await exec
  await ended
  return { exec: r, exitCode: await exit, cmdOut: Buffer.concat(out) }
}

describe("the server's frames, cut anywhere by the pipe", () => {
  it('come back whole and to their own exec or command, for 300 random streams cut at random bytes (empty chunks too)', async () => {
    const next = random(7)
    for (let i = 0; i < 300; i++) {
      const s = stream(next)
      const cuts = Array.from({ length: next(12) }, () => next(s.bytes.length + 1)).sort((a, b) => a - b)
      const got = await deliver(s.bytes, cuts)
      expect({ i, stdout: got.exec.stdout, code: got.exec.code, stderr: got.exec.stderr }).toEqual({
        i,
        stdout: s.execOut,
        code: 0,
        stderr: 'exec done'
      })
      expect({ i, out: got.cmdOut.toString(), exit: got.exitCode }).toEqual({ i, out: s.cmdOut.toString(), exit: 3 })
    }
  })

  it("keeps no chunk it has passed on: a command's output streamed in chunks that never end on a frame boundary", async () => {
    const { child, feed } = serverProcess()
    const client = new ServerClient(child, { bins: {} } as unknown as ServerConfig)
    feed(READY)
    const cmd = client.start('yes', '/w', {})
    let seen = 0
    cmd.stdout.on('data', (d: Buffer) => (seen += d.length))
    // 2,000 frames of 64 KiB, cut into chunks of 64 KiB: every chunk ends inside a frame
    const one = frame(FRAME.data, 1, Buffer.alloc(64 * 1024, 1))
    // what the client holds of the stream (the list it cuts frames from), at its most
    const held = () => (client as unknown as { parts: Buffer[] }).parts.reduce((n, p) => n + p.length, 0)
    let most = 0
    let carry = Buffer.alloc(0)
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.concat([carry, one])
      feed(bytes.subarray(0, 64 * 1024))
      carry = bytes.subarray(64 * 1024)
      most = Math.max(most, held())
    }
    feed(carry)
    await new Promise(r => setImmediate(r))
    expect(seen).toBe(2000 * 64 * 1024)
    // only the part of the frame not yet whole: 128 MiB passed through (kept, the passed chunks were up to 64 MiB)
    expect(most).toBeLessThan(64 * 1024)
    expect(held()).toBe(0)
  })

  it('one byte at a time, a 64 KiB output among them', async () => {
    const s = stream(random(11))
    const big = Buffer.alloc(64 * 1024, 7)
    const bytes = Buffer.concat([s.bytes.subarray(0, READY.length), frame(FRAME.execOut, 1, big), s.bytes.subarray(READY.length)])
    const got = await deliver(
      bytes,
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)
    )
    expect(got.exec.stdout.equals(Buffer.concat([big, s.execOut]))).toBe(true)
    expect(got.exitCode).toBe(3)
  })
})
