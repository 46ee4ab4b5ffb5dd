// `clinic-api export` (the whole clinic) and `clinic-api clientas export` (one client's data,
// GDPR arts. 15 and 20): a ZIP written to --out under a temporary name beside it, then put in
// place in one rename, so FILE is either the whole export or absent (an interrupted export leaves
// nothing behind). docs/cli.md, "Exports".
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { DomainError } from '../errors.js';
import { info, result, withRuntime, type CliContext } from './io.js';

/** "12 clientas, 30 citas, ..." in the order given (the collections' counts). */
const countsText = (counts: Record<string, number | undefined>) =>
  Object.entries(counts)
    .filter((e): e is [string, number] => e[1] !== undefined)
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');

const invalid = (message: string, field = 'out') => new DomainError('invalid_input', message, { field });

/** Writes through `write` into a temporary file beside `out`, then renames it to `out`. */
async function intoFile<T>(out: string, force: boolean, write: (stream: Writable) => Promise<T>) {
  const [fs, path, { randomBytes }] = await Promise.all([import('node:fs'), import('node:path'), import('node:crypto')]);
  const target = path.resolve(out);
  const dir = path.dirname(target);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw invalid(`the directory ${dir} does not exist: create it first (mkdir -p ${dir}), or give --out in a directory that exists`);
  const existing = fs.statSync(target, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw invalid(`${target} is a directory: give the file's name, e.g. ${path.join(target, 'export.zip')}`);
  if (existing && !force) throw invalid(`${target} exists already: give a new name, or --force to replace it`);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(4).toString('hex')}.partial`);
  try {
    const value = await write(fs.createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
    fs.renameSync(temp, target);
    return { value, file: target };
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function registerExportCommands(program: Command, ctx: CliContext): void {
  program
    .command('export')
    .description('export a whole clinic as a ZIP: every record in the import format (JSON Lines) and as CSV')
    .requiredOption('--clinic <id>', 'clinic id')
    .requiredOption('--out <file.zip>', 'the ZIP to write')
    .option('--force', 'replace --out if it exists', false)
    .action(async (o: { clinic: string; out: string; force: boolean }) => {
      const [{ requireClinic }, { writeClinicExport }, { startProgress }] = await Promise.all([
        import('../services/accounts.js'),
        import('../services/exports/clinic.js'),
        import('./progress.js'),
      ]);
      const { value: r, file } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        return intoFile(o.out, o.force, async (stream) => {
          let progress: ReturnType<typeof startProgress> | null = null;
          try {
            return await writeClinicExport(rt.database, clinic, stream, {
              nowMs: ctx.io.now(),
              onProgress: (done, total) => {
                progress ??= startProgress(ctx.io.stderr, { label: 'export', total, unit: 'records', now: ctx.io.now });
                progress.update(done);
              },
            });
          } finally {
            (progress as ReturnType<typeof startProgress> | null)?.stop();
          }
        });
      });
      const c = r.counts;
      info(ctx, `exported ${countsText(c)} to ${file} (${mb(r.bytes)})`);
      result(ctx, file, { file, bytes: r.bytes, counts: c });
    });

  // On the `clientas` command that `clientas erase` made (cli/erasure.ts).
  const clientas = program.commands.find((c) => c.name() === 'clientas') ?? program.command('clientas').description("a clinic's clients");
  clientas
    .command('export')
    .description(
      "export a client's own data (GDPR arts. 15 and 20) as a ZIP: her record, citas and calls (JSON and CSV), " +
        'her access record, their JSON Schemas',
    )
    .requiredOption('--clinic <id>', 'clinic id')
    .argument('<clienta-id>', 'the clienta\'s id (her "id" in the API)')
    .requiredOption('--out <file.zip>', 'the ZIP to write')
    .option('--force', 'replace --out if it exists', false)
    .action(async (clientaId: string, o: { clinic: string; out: string; force: boolean }) => {
      const [{ requireClinic }, { checkClientaId }, exp] = await Promise.all([
        import('../services/accounts.js'),
        import('../services/request-log-read.js'),
        import('../services/exports/clienta.js'),
      ]);
      const id = checkClientaId(clientaId, '<clienta-id>');
      const { value: r, file } = await withRuntime(ctx, async (rt) => {
        const clinic = await requireClinic(rt.database.db, o.clinic);
        const names = await exp.integrationNamesOf(rt.keys, rt.appGrants, clinic.id);
        // Checked before the file is made: an unknown clienta leaves no file behind.
        await exp.requireExportableClienta(rt.database.db, clinic.id, id, ctx.io.now());
        return intoFile(o.out, o.force, (stream) => exp.writeClientaExport(rt.database.db, clinic, id, names, stream, ctx.io.now()));
      });
      info(
        ctx,
        `exported ${r.name ?? `client ${id} (erased: her access record only)`}: ${countsText({ ...r.counts, access: undefined })}, ` +
          `${r.counts.access} logged requests that disclosed her data, to ${file} (${mb(r.bytes)})`,
      );
      result(ctx, file, { file, bytes: r.bytes, clienta_id: id, counts: r.counts });
    });
}
