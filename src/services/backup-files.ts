// File steps shared by backup and restore: durable writes (fsync of the file, then of its
// directory, so that a rename or link survives a crash of the machine) and clean-up.
import fs from 'node:fs';

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes a new name in `dir` durable. Some platforms cannot open a directory for this: then it is skipped. */
export function fsyncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // EINVAL/EPERM on file systems that do not sync directories: nothing more to do.
  } finally {
    fs.closeSync(fd);
  }
}

/** The files SQLite may leave beside a database it was writing (journal, WAL and its index). */
export function sqliteSideFiles(file: string): string[] {
  return ['-journal', '-wal', '-shm'].map((suffix) => `${file}${suffix}`);
}

export function removeQuietly(file: string): void {
  fs.rmSync(file, { force: true });
}
