// Writing a ZIP as a stream (yazl): entries one after the other, each read from its source only
// when its turn comes, deflated, and written to `out` as they are made, waiting for `out` when
// it is slow. So an export of any size holds a page of rows and zlib's window, never a file.
// Sizes past 4 GiB use ZIP64 on their own (yazl). yazl is loaded by the first export, not at
// start: a service whose clients never export does not hold it.
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** An entry's content: text, or the chunks of a generator pulled as the ZIP is written. */
export type ZipContent = string | Buffer | (() => AsyncIterable<string | Buffer>);

export interface ZipEntry {
  name: string;
  content: ZipContent;
}

/** Writes `entries` as a ZIP into `out` (ended at the end); resolves with the ZIP's size in bytes. */
export async function writeZip(entries: Iterable<ZipEntry>, out: Writable, mtime: Date, signal?: AbortSignal): Promise<number> {
  const { default: yazl } = await import('yazl');
  const zip = new yazl.ZipFile();
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  // An entry's source failing (a query, an abort) fails the ZIP's output, and so the pipeline.
  const output = zip.outputStream as unknown as Readable;
  zip.on('error', (err: Error) => output.destroy(err));
  for (const e of entries) {
    const content = e.content;
    if (typeof content === 'string' || Buffer.isBuffer(content))
      zip.addBuffer(typeof content === 'string' ? Buffer.from(content, 'utf8') : content, e.name, { mtime });
    else
      zip.addReadStreamLazy(e.name, { mtime }, (cb) => {
        const source = Readable.from(content(), { objectMode: false });
        // yazl does not listen for its sources' errors (one would be an uncaught exception): a
        // query that fails, or a stop, fails the ZIP's output instead, and so the pipeline.
        source.on('error', (err) => output.destroy(err));
        cb(null, source);
      });
  }
  zip.end();
  await pipeline(output, counter, out, signal ? { signal } : {});
  return bytes;
}
