// A handler's options are checked at registration: a plain-JavaScript caller's mistake is a clear
// error naming the value, not a failure at the first retry or an option silently ignored.
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { Mux } from '../../lib/core/worker/mux.js';

const handler = async () => {};

test.each([
  [{ backoff: 5 }, 'backoff: expected a function (retried, error, task) => ms, got 5'],
  [{ maxRetry: 3 }, 'unknown option "maxRetry"'],
  [{ timeout: 1000 }, 'unknown option "timeout"'],
  [{ source: 42 }, 'source: expected a string, got 42'],
  [null, 'options: expected an object { backoff?, source? }, got null'],
])('handle(type, fn, %p) throws InvalidOptionsError naming it', (options, issue) => {
  const mux = new Mux();
  let thrown: unknown;
  try {
    mux.handle('email.send', handler, options as never);
  } catch (err) {
    thrown = err;
  }
  // before: accepted (a bad backoff failed at the first retry with a warning; maxRetry and timeout were ignored)
  expect(thrown).toBeInstanceOf(InvalidOptionsError);
  expect((thrown as InvalidOptionsError).issues).toEqual([issue]);
  expect((thrown as Error).message).toContain('handler options of "email.send"');
  expect(mux.types()).toEqual([]);
});

test('valid options register the handler', () => {
  const backoff = () => 1000;
  const mux = new Mux().handle('email.send', handler, { backoff, source: 'EmailService#send' });
  expect(mux.get('email.send')?.options).toEqual({ backoff, source: 'EmailService#send' });
});
