// Instruction counts of a process running under `valgrind --tool=callgrind --instr-atstart=no
// --callgrind-out-file=<dir>/cg.%p` (the experiments' way to compare Redis's work per unit on a loaded
// machine: a count, not a time).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The directory the experiments' callgrind dumps go to (`--callgrind-out-file=<dir>/cg.%p`). */
export const CALLGRIND_DIR = '/tmp/b25b';

/** Instructions callgrind has collected so far in process `pid` (valgrind's): a dump, then the `totals:` of its dumps summed. */
export function callgrindInstructions(pid: number, dir = CALLGRIND_DIR): number {
  spawnSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  let total = 0;
  for (const f of readdirSync(dir).filter((x) => x.startsWith(`cg.${pid}`))) {
    const m = /^totals: (\d+)/m.exec(readFileSync(`${dir}/${f}`, 'utf8'));
    if (m) total += Number(m[1]);
  }
  return total;
}
