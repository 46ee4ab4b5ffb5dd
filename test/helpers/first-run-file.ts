// The first start's demo key and owner password: a process whose standard output is a pipe (every
// one a test starts) writes them to DATA_DIR/first-run-credentials.txt and prints that path
// instead (src/server.ts). Not a test file.
import fs from 'node:fs';

const FILE_RE = /are in (\S+first-run-credentials\.txt),/;

/** A process's output, followed by the credentials file it names (when it names one and it is there). */
export function withFirstRunFile(output: string): string {
  const file = FILE_RE.exec(output)?.[1];
  if (file === undefined) return output;
  try {
    return `${output}\n${fs.readFileSync(file, 'utf8')}`;
  } catch {
    return output;
  }
}
