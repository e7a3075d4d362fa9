// Conformance: the official E2B JS SDKs drive the fake (E2B_API_URL / E2B_SANDBOX_URL /
// E2B_API_KEY point them at it). Every expectation is what the SDKs need from the real service;
// a failed one exits non-zero with the reason. Prints a JSON summary on success.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Sandbox, CommandExitError, AuthenticationError, SandboxNotFoundError, FileNotFoundError } from 'e2b'
import { Sandbox as CodeSandbox } from '@e2b/code-interpreter'

const run = process.argv[2] ?? `run-${Date.now()}`
const out = {}

async function listIds(metadata) {
  const p = Sandbox.list({ query: { metadata, state: ['running'] } })
  const ids = []
  while (p.hasNext) for (const s of await p.nextItems()) ids.push(s.sandboxId)
  return ids
}

// create with template, timeout, metadata, env vars, internet flag
const sbx = await Sandbox.create('base', {
  timeoutMs: 60_000, metadata: { suite: 'conformance', run }, envs: { GREETING: 'hello-from-envs' },
  allowInternetAccess: false,
})
assert.ok(sbx.sandboxId, 'create returns a sandbox id')
const info = await Sandbox.getInfo(sbx.sandboxId)
assert.equal(info.metadata.run, run, 'getInfo returns the metadata')
assert.equal(info.templateId, 'base')
assert.equal(info.allowInternetAccess, false)
assert.ok(info.endAt > info.startedAt, 'endAt after startedAt')

// commands.run: stdout, stderr, exit code 0
const ok = await sbx.commands.run('echo out-line; echo err-line >&2; echo "$GREETING"')
assert.equal(ok.exitCode, 0)
assert.equal(ok.stdout, 'out-line\nhello-from-envs\n')
assert.equal(ok.stderr, 'err-line\n')
out.stdout = ok.stdout

// streaming callbacks see the chunks
const seen = []
await sbx.commands.run('for i in 1 2 3; do echo tick$i; done', { onStdout: (d) => seen.push(d) })
assert.equal(seen.join(''), 'tick1\ntick2\ntick3\n')

// non-zero exit: CommandExitError with the code and output
try {
  await sbx.commands.run('echo before; exit 3')
  assert.fail('exit 3 must throw CommandExitError')
} catch (e) {
  assert.ok(e instanceof CommandExitError, `want CommandExitError, got ${e}`)
  assert.equal(e.exitCode, 3)
  assert.equal(e.stdout, 'before\n')
  out.exitCode = e.exitCode
}

// a command timeout (Connect-Timeout-Ms) ends the command
const t0 = Date.now()
try {
  await sbx.commands.run('sleep 30', { timeoutMs: 500 })
  assert.fail('sleep 30 with timeoutMs 500 must fail')
} catch (e) {
  assert.ok(Date.now() - t0 < 10_000, 'the timeout ended the command')
  out.timeoutError = e.name
}

// background command killed through SendSignal
const bg = await sbx.commands.run('sleep 60', { background: true })
assert.ok(bg.pid > 0)
assert.equal(await sbx.commands.kill(bg.pid), true)

// the filesystem: write (multipart form, the SDK's default; and octet-stream), read back as
// text and bytes, list, stat; programs see what the file API wrote and the other way round
const w = await sbx.files.write('hello.txt', 'hello files')
assert.equal(w.path, '/home/user/hello.txt')
assert.equal(w.name, 'hello.txt')
assert.equal(await sbx.files.read('/home/user/hello.txt'), 'hello files')
assert.equal((await sbx.commands.run('cat hello.txt')).stdout, 'hello files')
const blob = randomBytes(300 * 1024)
await sbx.files.write('data/deep/blob.bin', blob)
assert.deepEqual(Buffer.from(await sbx.files.read('data/deep/blob.bin', { format: 'bytes' })), blob)
await sbx.files.write('data/octet.bin', blob, { useOctetStream: true })
assert.deepEqual(Buffer.from(await sbx.files.read('data/octet.bin', { format: 'bytes' })), blob)
await sbx.files.write('empty.txt', '')
assert.equal(await sbx.files.read('empty.txt'), '')
await sbx.commands.run('printf made-by-a-program > made.txt')
assert.equal(await sbx.files.read('made.txt'), 'made-by-a-program')
const names = Object.fromEntries((await sbx.files.list('/home/user')).map((e) => [e.name, e]))
assert.equal(names['hello.txt']?.type, 'file')
assert.equal(names['hello.txt'].size, 11)
assert.equal(names['hello.txt'].path, '/home/user/hello.txt')
assert.equal(names.data?.type, 'dir')
assert.equal(names['made.txt']?.type, 'file')
assert.ok(names['hello.txt'].modifiedTime instanceof Date && !isNaN(names['hello.txt'].modifiedTime))
const deep = (await sbx.files.list('data', { depth: 2 })).map((e) => e.path).sort()
assert.deepEqual(deep, ['/home/user/data/deep', '/home/user/data/deep/blob.bin', '/home/user/data/octet.bin'])
assert.equal((await sbx.files.getInfo('data/deep/blob.bin')).size, blob.length)
assert.equal(await sbx.files.exists('nope.txt'), false)
for (const op of [() => sbx.files.read('nope.txt'), () => sbx.files.list('/home/user/nope')]) {
  try {
    await op()
    assert.fail('a missing path must fail')
  } catch (e) {
    assert.ok(e instanceof FileNotFoundError, `want FileNotFoundError, got ${e}`)
  }
}
out.files = { blob: blob.length, listed: Object.keys(names).length }

// setTimeout is accepted
await sbx.setTimeout(120_000)

// list by metadata finds it; a different value does not
assert.deepEqual(await listIds({ run }), [sbx.sandboxId])
assert.deepEqual(await listIds({ run: run + '-other' }), [])

// kill, then it is gone
assert.equal(await sbx.kill(), true)
assert.deepEqual(await listIds({ run }), [])
assert.equal(await Sandbox.kill(sbx.sandboxId), false, 'killing twice reports not found')
try {
  await sbx.commands.run('echo after-kill')
  assert.fail('a command in a killed sandbox must fail')
} catch (e) {
  out.afterKill = e.name
}

// the code interpreter: stdout, the final expression's result, an exception
const cs = await CodeSandbox.create({ metadata: { suite: 'conformance', run, kind: 'code' } })
const ex = await cs.runCode('x = 6 * 7\nprint("printed", x)\nx + 1')
assert.equal(ex.error, undefined, `no error expected, got ${JSON.stringify(ex.error)}`)
assert.equal(ex.logs.stdout.join(''), 'printed 42\n')
assert.equal(ex.results.length, 1)
assert.equal(ex.results[0].text, '43')
assert.equal(ex.text, '43')
out.result = ex.text

const err = await cs.runCode('print("partial")\n1/0')
assert.ok(err.error, 'an exception is reported as execution.error')
assert.equal(err.error.name, 'ZeroDivisionError')
assert.equal(err.error.value, 'division by zero')
assert.match(err.error.traceback, /ZeroDivisionError/)
assert.equal(err.logs.stdout.join(''), 'partial\n')
out.error = { name: err.error.name, value: err.error.value }

// pictures: display() and a final expression with a PNG representation come back as results
// with a base64 png (an SVG representation as text), as Jupyter's display_data/execute_result
const pic = await cs.runCode(`
import struct, zlib
def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
class Pic:
    def _repr_png_(self):
        raw = b''.join(b'\\x00' + b'\\xff\\x00\\x00' * 4 for _ in range(4))
        return (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 4, 4, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
class Vec:
    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'
display(Pic())
Vec()`)
assert.equal(pic.error, undefined, `no error expected, got ${JSON.stringify(pic.error)}`)
assert.equal(pic.results.length, 2)
assert.equal(pic.results[0].isMainResult, false)
assert.ok(pic.results[0].formats().includes('png'))
assert.equal(Buffer.from(pic.results[0].png, 'base64').subarray(0, 8).toString('latin1'), '\x89PNG\r\n\x1a\n')
assert.equal(pic.results[1].isMainResult, true)
assert.match(pic.results[1].svg, /^<svg /)
out.pictures = pic.results.map((r) => r.formats().join('+'))

const errs = []
await cs.runCode('import sys; sys.stderr.write("to-stderr\\n")', { onStderr: (m) => errs.push(m.line) })
assert.equal(errs.join(''), 'to-stderr\n')

assert.deepEqual(await listIds({ run, kind: 'code' }), [cs.sandboxId])
assert.equal(await cs.kill(), true)
try {
  await cs.runCode('1')
  assert.fail('runCode in a killed sandbox must fail')
} catch (e) {
  out.runCodeAfterKill = e.name
}

// a wrong key is an AuthenticationError
try {
  await Sandbox.create('base', { apiKey: 'e2b_0000000000000000000000000000000000000000' })
  assert.fail('a wrong key must be refused')
} catch (e) {
  assert.ok(e instanceof AuthenticationError, `want AuthenticationError, got ${e}`)
  out.badKey = e.name
}
try {
  await Sandbox.getInfo('inotthere')
  assert.fail('getInfo of an unknown sandbox must fail')
} catch (e) {
  assert.ok(e instanceof SandboxNotFoundError, `want SandboxNotFoundError, got ${e}`)
}

assert.deepEqual(await listIds({ run }), [])
console.log(JSON.stringify(out))
// The SDK leaves its 60 s request timer armed after a failed runCode (the killed-sandbox check
// above); do not wait for it.
process.exit(0)
