// What a command may touch of the outside world, passed in so tests run commands in-process.
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { ValidationError } from '../services/accounts.js';
import { KeyError } from '../services/api-keys.js';

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
  config: () => Config;
  json: () => boolean;
}

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

/** Runs `fn` with an open runtime and turns domain validation errors into CLI errors. */
export async function withRuntime<T>(ctx: CliContext, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = await openRuntime(ctx.config());
  try {
    return await fn(rt);
  } catch (err) {
    if (err instanceof ValidationError) throw new CliError(`${err.message}`, 2);
    if (err instanceof KeyError) throw new CliError(err.message, err.reason === 'plan_not_eligible' ? 3 : 2);
    throw err;
  } finally {
    await rt.close();
  }
}

/** Prints `text` (human form) or `data` (with --json) on stdout. */
export function result(ctx: CliContext, text: string, data: unknown): void {
  if (ctx.json()) ctx.io.stdout.write(`${JSON.stringify(data)}\n`);
  else if (text !== '') ctx.io.stdout.write(`${text}\n`);
}

export function info(ctx: CliContext, text: string): void {
  ctx.io.stderr.write(`${text}\n`);
}

export function positiveInt(name: string, min = 1, max = 1_000_000) {
  return (raw: string) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new CliError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`, 2);
    }
    return Number(raw);
  };
}

export type { Command };
