// The test-signal hub: typed moments a test awaits; inactive (free) while nobody listens.
import { Signals } from '../../lib/core/runtime/signals.js';

test('a hub is active only while someone listens; next() resolves on the first accepted detail', async () => {
  const s = new Signals();
  expect(s.active).toBe(false);
  const got = s.next('fetched', (d) => d.count > 1);
  expect(s.active).toBe(true);
  s.emit('fetched', { count: 1 });
  s.emit('fetched', { count: 3 });
  await expect(got).resolves.toEqual({ count: 3 });
  expect(s.active).toBe(false);
});

test('a listener that throws does not stop the others or the emitter', () => {
  const s = new Signals();
  const seen: number[] = [];
  s.on('forwarded', () => {
    throw new Error('a broken test listener');
  });
  const off = s.on('forwarded', (d) => void seen.push(d.moved));
  expect(() => s.emit('forwarded', { moved: 2 })).not.toThrow();
  off();
  s.emit('forwarded', { moved: 5 });
  expect(seen).toEqual([2]);
});

test('next() rejects naming the signal when it does not come in time', async () => {
  const s = new Signals();
  await expect(s.next('tick.done', undefined, 20)).rejects.toThrow(/"tick.done"/);
  expect(s.active).toBe(false);
});
