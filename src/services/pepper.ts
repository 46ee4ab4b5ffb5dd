// The secret of the keyed hash of API keys. From API_KEY_PEPPER, else generated once into
// DATA_DIR/api-key-pepper (mode 0600) and read back on every later start.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

/** The generated pepper's file in DATA_DIR. */
export const PEPPER_FILE = 'api-key-pepper';

export function resolvePepper(config: Config): { pepper: string; generated: boolean; file: string | null } {
  if (config.apiKeyPepper) return { pepper: config.apiKeyPepper, generated: false, file: null };
  const file = path.join(config.dataDir, PEPPER_FILE);
  try {
    const pepper = fs.readFileSync(file, 'utf8').trim();
    if (pepper.length < 32) throw new Error(`${file} is shorter than 32 characters; restore it from backup or set API_KEY_PEPPER`);
    return { pepper, generated: false, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const pepper = randomBytes(48).toString('base64url');
  // Written whole to a file of our own, then linked into place: link() never overwrites (a pepper
  // that exists is never replaced: that would void every key), and an instance starting at the
  // same moment never reads a pepper file that is still being written.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(temp, `${pepper}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temp, file);
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolvePepper(config);
    throw err;
  } finally {
    fs.rmSync(temp, { force: true });
  }
  return { pepper, generated: true, file };
}
