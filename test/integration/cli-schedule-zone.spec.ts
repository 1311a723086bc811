// `chronos schedule ls` and `schedule show` print instants in the machine's zone (TZ), next to a
// "time zone" column holding the schedule's own: a `0 8 * * MON-FRI` digest in Europe/Paris was
// listed as "next 2026-12-08 07:00" on a UTC host, nothing saying whose 07:00 it was (a new user
// read it as a schedule firing at 07:00 Paris time; trial3). The headers now name the display zone,
// and a cron schedule's trigger that reads otherwise in its own zone says that too.
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
const { chronos } = cliRunner(() => rig.namespace);
let savedTz: string | undefined;
beforeAll(() => {
  savedTz = process.env.TZ;
  process.env.TZ = 'UTC'; // the CLI's zone (cliRunner passes process.env): an operator's shell on a UTC host, a pod
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});
beforeEach(() => (rig = new QueueRig()));
afterEach(() => rig.close());

test("stats, schedule ls and show name the zone of their instants, and give a cron schedule's next triggers in its own zone", async () => {
  await rig.inspector.addSchedule({ name: 'paris', spec: '0 8 * * *', timeZone: 'Europe/Paris', type: 'digest' });
  await rig.inspector.addSchedule({ name: 'tokyo', spec: '0 8 * * *', timeZone: 'Asia/Tokyo', type: 'digest' });
  await rig.inspector.addSchedule({ name: 'utc', spec: '0 8 * * *', type: 'digest' });
  await rig.inspector.addSchedule({ name: 'every', spec: '@every 1h', timeZone: 'Europe/Paris', type: 'digest' }); // its zone is ignored
  const ls = await chronos('schedule', 'ls');
  expect([ls.code, ls.err]).toEqual([0, '']);
  const lines = ls.out.split('\n');
  expect(lines[1]).toMatch(/│ last fired \(UTC\)\s*│ next \(UTC\)\s*│$/);
  const next = (name: string) => (lines.find((l) => l.includes(` ${name} `)) ?? '').split('│')[10].trim();
  // 08:00 in Paris is 07:00 UTC in winter, 06:00 in summer
  expect(next('paris')).toMatch(/^(\d{4}-\d\d-\d\d )?0[67]:00(:00)? \([^)]*\) = 08:00 Europe\/Paris$/);
  // 08:00 in Tokyo is 23:00 UTC the day before: the schedule's date is given
  expect(next('tokyo')).toMatch(/^(\d{4}-\d\d-\d\d )?23:00(:00)? \([^)]*\) = \d{4}-\d\d-\d\d 08:00 Asia\/Tokyo$/);
  expect(next('utc')).toMatch(/^(\d{4}-\d\d-\d\d )?08:00(:00)? \([^)]*\)$/); // the same wall time: said once
  expect(next('every')).not.toContain('=');
  const show = await chronos('schedule', 'show', 'paris');
  expect(show.code).toBe(0);
  expect(show.out).toMatch(/│ next triggers \(UTC\)\s*│/);
  expect(show.out.match(/= 08:00 Europe\/Paris/g)).toHaveLength(5);
  const stats = await chronos('stats');
  expect(stats.out.split('\n')[0]).toMatch(/ · times in UTC$/);
});
