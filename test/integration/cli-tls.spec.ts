// The CLI against a TLS Redis whose certificate a private CA signed (issue 24): refused without the
// CA, served with `--tls-ca <file>` or `CHRONOS_TLS_CA`. A private redis-server with --tls-port only.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

function chronos(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, CHRONOS_NAMESPACE: 'chronos-test-cli-tls', ...extraEnv };
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.CHRONOS_TLS_CA;
  Object.assign(env, extraEnv);
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout, err: stderr });
    });
  });
}

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let dir: string;
let redis: ChildProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chronos-tls-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=Chronos test CA');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  ssl(
    'x509',
    '-req',
    '-in',
    'srv.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'srv.crt',
    '-days',
    '2',
    '-extfile',
    'ext',
  );
  const port = await freePort();
  redis = spawn(
    'redis-server',
    ['--port', '0', '--tls-port', String(port), '--tls-cert-file', 'srv.crt', '--tls-key-file', 'srv.key'].concat([
      '--tls-ca-cert-file',
      'ca.crt',
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
    ]),
    { cwd: dir, stdio: 'ignore' },
  );
  url = `rediss://127.0.0.1:${port}`;
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      }),
    'the TLS Redis to listen',
  );
});

afterAll(() => {
  redis?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a rediss:// server signed by a private CA: refused without the CA, served with --tls-ca or CHRONOS_TLS_CA', async () => {
  const without = await chronos(['--redis-url', url, 'queue', 'ls']);
  expect(without.code).toBe(1);
  expect(without.err).toMatch(/self-signed certificate|unable to verify/);
  const withOption = await chronos(['--redis-url', url, '--tls-ca', join(dir, 'ca.crt'), 'queue', 'ls']);
  expect([withOption.code, withOption.err]).toEqual([0, '']);
  expect(withOption.out).toMatch(/No queues yet/);
  const withEnv = await chronos(['--redis-url', url, 'queue', 'ls'], { CHRONOS_TLS_CA: join(dir, 'ca.crt') });
  expect([withEnv.code, withEnv.err]).toEqual([0, '']);
  const missing = await chronos(['--redis-url', url, '--tls-ca', join(dir, 'nope.crt'), 'queue', 'ls']);
  expect([missing.code, missing.err]).toEqual([2, `error: --tls-ca: cannot read ${JSON.stringify(join(dir, 'nope.crt'))} (ENOENT)\n`]);
  const plain = await chronos(['--redis-url', 'redis://127.0.0.1:1', '--tls-ca', join(dir, 'ca.crt'), 'queue', 'ls']);
  expect([plain.code, plain.err]).toEqual([2, 'error: --tls-ca: the Redis URL must be rediss:// (TLS), got redis://\n']);
});
