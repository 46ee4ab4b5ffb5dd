import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import { countsText, DEMO_PER_UNIT } from '../demo/sizes.js';
import { DomainError } from '../errors.js';
import { info, positiveInt, result, withRuntime, type CliContext } from './io.js';

/**
 * import and demo commit up to millions of rows in one transaction, whose COMMIT alone (deferred
 * foreign-key checks) runs for a minute on PostgreSQL: like psql, these operator commands run
 * without the API's statement timeout.
 */
function withoutStatementTimeout(ctx: CliContext): CliContext {
  return { ...ctx, config: async () => ({ ...(await ctx.config()), dbStatementTimeoutMs: 0 }) };
}

export function registerDataCommands(program: Command, outer: CliContext): void {
  const ctx = withoutStatementTimeout(outer);
  program
    .command('import')
    .description('import a JSON Lines file (or - for stdin) into a clinic, all or nothing')
    .requiredOption('--clinic <id>', 'clinic id')
    .argument('<file>', 'path of the .jsonl file, or - for stdin')
    .action(async (file: string, o: { clinic: string }) => {
      let input: Readable;
      let size: number | null = null;
      if (file === '-') input = ctx.io.stdin;
      else {
        try {
          fs.accessSync(file, fs.constants.R_OK);
          size = fs.statSync(file).size;
        } catch {
          throw new DomainError('invalid_input', `cannot read ${file}: no such file, or no permission`, { field: 'file' });
        }
        input = fs.createReadStream(file, { highWaterMark: 1 << 20 });
      }
      // Loaded only now (never for --help: cli/main.ts).
      const [{ importJsonLines }, { startProgress }] = await Promise.all([import('../services/import.js'), import('./progress.js')]);
      const res = await withRuntime(ctx, async (rt) => {
        // Reading: position in MB of input, the one measure known up front for a file. Writing:
        // lines applied of those read, known once the reading is done.
        let progress = startProgress(ctx.io.stderr, {
          label: 'import: reading',
          total: size === null ? null : size / 1e6,
          unit: 'MB',
          now: ctx.io.now,
        });
        let writing = false;
        try {
          return await importJsonLines(rt.database, o.clinic, input, {
            now: ctx.io.now,
            onProgress: (p) => {
              if (p.phase === 'reading') {
                progress.update(p.bytes / 1e6, `${p.lines.toLocaleString('en-US')} lines${p.badLines ? `, ${p.badLines} bad` : ''}`);
                return;
              }
              if (!writing) {
                writing = true;
                progress.stop();
                progress = startProgress(ctx.io.stderr, { label: 'import: writing', total: p.total, unit: 'lines', now: ctx.io.now });
              }
              progress.update(p.done);
            },
          });
        } finally {
          progress.stop();
        }
      });
      if (!res.ok) {
        // One line per problem (a line with several faults shows them all, in field order).
        for (const e of res.errors) info(ctx, `line ${e.line}: ${e.reason}`);
        if (res.errorCount > res.errors.length) info(ctx, `… and ${res.errorCount - res.errors.length} more problem(s)`);
        if (ctx.json())
          result(ctx, '', { ok: false, lines: res.lines, bad_lines: res.badLines, error_count: res.errorCount, errors: res.errors });
        throw new DomainError(
          'rejected',
          `import refused: ${res.badLines} bad line(s) of ${res.lines}, ${res.errorCount} problem(s); nothing was changed`,
        );
      }
      const c = res.counts;
      const json = { ok: true, lines: res.lines, changed: res.changed, counts: c };
      if (!res.changed) {
        // Issue 9: an import of data already stored says so, rather than listing what it "imported".
        info(ctx, `no changes: every record of the ${res.lines} line(s) was already stored as it is in the file`);
        result(ctx, 'no changes', json);
        return;
      }
      const n = Object.values(c).reduce((sum, t) => sum + t.created + t.updated + t.deleted, 0);
      info(ctx, `imported ${res.lines} line(s): ${n} change(s), each an event of the change feed`);
      result(
        ctx,
        (Object.keys(c) as (keyof typeof c)[])
          .map(
            (type) =>
              `${type}: ${c[type].created} created, ${c[type].updated} updated, ${c[type].unchanged} unchanged, ${c[type].deleted} deleted`,
          )
          .join('\n'),
        json,
      );
    });

  program
    .command('demo')
    .description('create demo clinics with realistic, deterministic data, each with an owner and an API key; prints their ids')
    .option('--clinics <n>', 'how many clinics', positiveInt('--clinics', 1, 1000), 1)
    .option('--scale <n>', `data per clinic: ${countsText(DEMO_PER_UNIT)} per unit`, positiveInt('--scale', 1, 100_000), 1)
    .option('--seed <n>', 'random seed (same seed, same data)', positiveInt('--seed', 0, 2 ** 31), 1)
    .action(async (o: { clinics: number; scale: number; seed: number }) => {
      const [{ demoCounts }, { createDemoWithAccess }, { startProgress }] = await Promise.all([
        import('../demo/generate.js'),
        import('../services/demo.js'),
        import('./progress.js'),
      ]);
      const created = await withRuntime(ctx, async (rt) => {
        const out = [];
        for (let i = 0; i < o.clinics; i++) {
          const want = demoCounts(o.scale);
          const progress = startProgress(ctx.io.stderr, {
            label: `demo ${i + 1}/${o.clinics}`,
            total: Object.values(want).reduce((a, b) => a + b, 0),
            unit: 'records',
            now: ctx.io.now,
          });
          // Named (under the start-up lock) with the first demo name no clinic has, so runs on one
          // database, even at once, never repeat a name.
          const demo = await createDemoWithAccess(rt.database, rt.keys, {
            seed: o.seed + i,
            scale: o.scale,
            nowMs: ctx.io.now(),
            lock: true,
            onProgress: (n) => progress.update(n),
          }).finally(() => progress.stop());
          const { clinic, counts } = demo;
          info(
            ctx,
            [
              `created "${clinic.name}" (${clinic.id}): ${countsText(counts)}`,
              `  dashboard owner (password shown once): ${demo.ownerEmail} / ${demo.ownerPassword}`,
              `  API key (shown once): ${demo.key}`,
            ].join('\n'),
          );
          out.push({
            id: clinic.id,
            name: clinic.name,
            plan: clinic.plan,
            ...counts,
            owner: { email: demo.ownerEmail, password: demo.ownerPassword },
            key: { id: demo.keyId, key: demo.key },
          });
        }
        return out;
      });
      result(ctx, created.map((c) => c.id).join('\n'), created);
    });
}
