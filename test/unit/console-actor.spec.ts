// Issue 24, item 6: in Nest the console's actor comes from what the guard put on the request (req.user).
import type { IncomingMessage } from 'node:http';
import { userActor } from '../../lib/nest/console/console.mount.js';

const req = (user: unknown) => ({ user }) as unknown as IncomingMessage;

test('the actor is console:<name> of req.user, by username, name, email, id or sub; none without a user', () => {
  expect(userActor(req({ username: 'ada', id: 7 }))).toBe('console:ada');
  expect(userActor(req({ email: 'bob@example.com' }))).toBe('console:bob@example.com');
  expect(userActor(req({ id: 42 }))).toBe('console:42');
  expect(userActor(req({ sub: 'auth0|x' }))).toBe('console:auth0|x');
  expect(userActor(req('carol'))).toBe('console:carol');
  expect(userActor(req(undefined))).toBeUndefined();
  expect(userActor(req({ roles: ['admin'] }))).toBeUndefined();
});
