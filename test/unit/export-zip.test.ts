// The exports' ZIP writer (services/exports/zip.ts): entries read back whole and in order, and a
// source that fails midway (a query, a stop) fails the write with its own error: never an
// uncaught exception, which the ZIP library would make of it by itself.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeZip } from '../../src/services/exports/zip.js';
import { readZip } from '../helpers/zip.js';

function sink() {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  return { out, bytes: () => Buffer.concat(chunks) };
}

describe('writeZip', () => {
  it('writes text and generated entries in order, its size the bytes written', async () => {
    const s = sink();
    const size = await writeZip(
      [
        { name: 'a.txt', content: 'á' },
        {
          name: 'dir/b.jsonl',
          content: async function* () {
            for (let i = 0; i < 3; i++) yield `{"n":${i}}\n`;
          },
        },
      ],
      s.out,
      new Date(Date.UTC(2026, 2, 28)),
    );
    expect(size).toBe(s.bytes().length);
    const files = await readZip(s.bytes());
    expect([...files.keys()]).toEqual(['a.txt', 'dir/b.jsonl']);
    expect(files.get('a.txt')!.toString()).toBe('á');
    expect(files.get('dir/b.jsonl')!.toString()).toBe('{"n":0}\n{"n":1}\n{"n":2}\n');
  });

  it("fails with a source's error, midway", async () => {
    const s = sink();
    const write = writeZip(
      [
        {
          name: 'rows.jsonl',
          content: async function* () {
            yield 'one\n';
            throw new Error('the database went away');
          },
        },
      ],
      s.out,
      new Date(),
    );
    await expect(write).rejects.toThrow('the database went away');
  });
});
