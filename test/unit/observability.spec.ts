// Pure parts of the observability module: optional peers absent, traceparent parsing.
import { MissingPeerDependencyError, parseTraceparent } from '../../lib/core/internal.js';
import { loadOptional } from '../../lib/core/observability/optional.js';

test('an optional peer that is not installed loads as undefined; the error for it names the package and the feature', () => {
  expect(loadOptional('@chronos-test/not-installed')).toBeUndefined();
  expect(loadOptional('prom-client')).toBeDefined();
  const err = new MissingPeerDependencyError('prom-client', 'ChronosMetrics');
  expect(err).toMatchObject({ code: 'CONFIG', packageName: 'prom-client', name: 'MissingPeerDependencyError' });
  expect(err.message).toBe(
    'ChronosMetrics needs the optional peer dependency "prom-client", which is not installed: npm install prom-client',
  );
});

test('parseTraceparent reads W3C version 00 and refuses malformed or all-zero ids', () => {
  expect(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toEqual({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
    isRemote: true,
  });
  const bad = [
    undefined,
    '',
    '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    '00-00000000000000000000000000000000-b7ad6b7169203331-01',
    '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
    '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
  ];
  for (const tp of bad) {
    expect(parseTraceparent(tp)).toBeUndefined();
  }
});
