// A handler's options are checked at registration: a plain-JavaScript caller's mistake is a clear
// error naming the value, not a failure at the first retry or an option silently ignored.
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import { Mux } from '../../lib/core/worker/mux.js';

const handler = async () => {};

test.each([
  [{ backoff: 5 }, 'backoff: expected a function (retried, error, task) => ms, got 5'],
  [{ maxRetry: 3 }, 'unknown option "maxRetry" (retries are the enqueue option `maxRetry`, or the client\'s `defaults.maxRetry`)'],
  [
    { timeout: 1000 },
    'unknown option "timeout" (the time limit of an attempt is the enqueue option `timeout` in ms, or the client\'s `defaults.timeout`)',
  ],
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

test('a type no task can have (a lone UTF-16 surrogate, empty, over 200 characters) is refused as enqueue refuses it, naming it (trial 26)', () => {
  // before: 'x\ud800' was registered, a handler no task could reach (enqueue refuses the type)
  for (const [type, shown] of [
    ['x\ud800', '"x\\ud800"'],
    ['\udc00', '"\\udc00"'],
    ['', '""'],
    ['t'.repeat(201), expect.stringMatching(/^"t+"$/) as unknown as string],
  ]) {
    const mux = new Mux();
    let thrown: unknown;
    try {
      mux.handle(type, handler);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionsError);
    const [issue] = (thrown as InvalidOptionsError).issues;
    expect(issue.slice(0, issue.indexOf(', got '))).toBe(
      'type: expected a non-empty string of at most 200 characters without lone surrogates',
    );
    expect(issue.slice(issue.indexOf(', got ') + 6)).toEqual(shown);
    expect(mux.types()).toEqual([]);
  }
  expect(new Mux().handle('x\ud83d\ude00', handler).types()).toEqual(['x\ud83d\ude00']); // a pair is a character, not a lone surrogate
});
