// What a command may touch of the outside world, passed in so tests run commands in-process.
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import { DomainError } from '../errors.js';
import type { Runtime } from '../runtime.js';

export interface Io {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  stdin: Readable;
  env: Record<string, string | undefined>;
  /** Wall clock in ms. */
  now: () => number;
}

export interface CliContext {
  io: Io;
  /** The configuration, read from io.env (and its schema loaded) when a command first asks. */
  config: () => Promise<Config>;
  json: () => boolean;
}

/**
 * Runs `fn` with an open runtime, closed afterwards whatever happens. It logs nowhere: a
 * command's stdout is its result, and what it has to say goes to stderr as text. Its services
 * read the command's clock (io.now), so what a command computes and what they write agree.
 */
export async function withRuntime<T>(ctx: CliContext, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const { openRuntime } = await import('../runtime.js');
  const rt = await openRuntime(await ctx.config(), { logTo: false, now: ctx.io.now });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}

/** Prints `text` (human form) or `data` (with --json) on stdout. */
export function result(ctx: CliContext, text: string, data: unknown): void {
  if (ctx.json()) ctx.io.stdout.write(`${JSON.stringify(data)}\n`);
  else if (text !== '') ctx.io.stdout.write(`${text}\n`);
}

/** Epoch seconds as RFC 3339 with a clinic's UTC offset at that instant; null stays null. */
export interface Iso {
  (s: number): string;
  (s: number | null): string | null;
}

/**
 * The times of clinic-zone `zone` as the API and the dashboard write them
 * (`2026-11-21T10:30:00+01:00`), not in UTC. Loaded with the command that prints them: time.ts
 * brings luxon, which --version and --help do without.
 */
export async function isoIn(zone: string): Promise<Iso> {
  const { formatTimestamp } = await import('../time.js');
  return ((s: number | null) => (s === null ? null : formatTimestamp(s, zone))) as Iso;
}

/** The times of clinic `clinicId` (exit 2 naming it when there is no such clinic): isoIn of its zone. */
export async function clinicTimes(rt: Runtime, clinicId: string): Promise<Iso> {
  const { requireClinic } = await import('../services/accounts.js');
  return isoIn((await requireClinic(rt.database.db, clinicId)).timezone);
}

/**
 * The clinic row a command with --test works on: the clinic's own, or with --test its sandbox's
 * (a clinic row of its own, holding test mode's data, requests and webhook endpoints; null while
 * the clinic has none).
 */
export async function modeClinic(rt: Runtime, clinicId: string, test: boolean | undefined): Promise<string | null> {
  return test ? rt.sandboxes.find(clinicId) : clinicId;
}

/** "1 active key", "2 active keys". */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function info(ctx: CliContext, text: string): void {
  ctx.io.stderr.write(`${text}\n`);
}

export function positiveInt(name: string, min = 1, max = 1_000_000) {
  return (raw: string) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new DomainError('invalid_input', `${name} must be a whole number from ${min} to ${max}, got "${raw}"`, { field: name });
    }
    return Number(raw);
  };
}

export type { Command };
