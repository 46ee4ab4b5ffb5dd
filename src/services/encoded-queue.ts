// A first-in first-out queue of JSON values held as UTF-8 text in Buffers, outside V8's heap. For
// what waits about a second to be written (the request log's entries): objects kept that long
// outlive the young generation's collections, are copied and promoted, and then die in the old
// generation, which grows until a full collection. Under the cold-page benchmark on Node 24 that
// was most of the request log's cost in peak RSS, and most of its spread from run to run (the
// figures are in docs/benchmarks.md, "The request log"). Kept as bytes they cost V8 nothing;
// each value is parsed again only when it is written, and dies young.
//
// The text goes into blocks of BLOCK_BYTES (a value larger than a block gets a block of its own),
// each value after its byte length (4 bytes). A reader walks the values from the front without
// removing them; shift() removes them once they are written, so values whose write failed are
// simply still there. Emptied blocks are reused: at a steady load no new block is allocated.
const BLOCK_BYTES = 64 * 1024;
/** Emptied blocks kept for reuse beyond those in use: a second's entries fill about ten. */
const SPARE_BLOCKS = 16;
const LENGTH_BYTES = 4;

interface Block {
  buf: Buffer;
  /** where the first value not yet shifted starts */
  start: number;
  /** where the next value is written */
  end: number;
}

/** Reads the queue's values from the front, in order, without removing them. */
export interface QueueReader<T> {
  /** the next value, or undefined when none is left */
  next(): T | undefined;
}

export class EncodedQueue<T> {
  #blocks: Block[] = [];
  #spare: Buffer[] = [];
  #length = 0;

  /** Values in the queue. */
  get length(): number {
    return this.#length;
  }

  push(value: T): void {
    const text = JSON.stringify(value);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: checked without measuring the text first.
    const most = LENGTH_BYTES + text.length * 3;
    let block = this.#blocks.at(-1);
    if (block === undefined || block.buf.length - block.end < most) {
      block = { buf: this.#blockOf(most), start: 0, end: 0 };
      this.#blocks.push(block);
    }
    const n = block.buf.write(text, block.end + LENGTH_BYTES, 'utf8');
    block.buf.writeUInt32LE(n, block.end);
    block.end += LENGTH_BYTES + n;
    this.#length++;
  }

  /** A reader from the front. Values pushed meanwhile are read too; shift() ends it. */
  reader(): QueueReader<T> {
    let b = 0;
    let at = this.#blocks[0]?.start ?? 0;
    return {
      next: () => {
        let block = this.#blocks[b];
        // On to the next block when this one is read; the last one may yet receive more.
        while (block !== undefined && at >= block.end && b + 1 < this.#blocks.length) {
          block = this.#blocks[++b]!;
          at = block.start;
        }
        if (block === undefined || at >= block.end) return undefined;
        const n = block.buf.readUInt32LE(at);
        at += LENGTH_BYTES;
        const text = block.buf.toString('utf8', at, at + n);
        at += n;
        return JSON.parse(text) as T;
      },
    };
  }

  /** Removes the first `count` values. */
  shift(count: number): void {
    let left = Math.min(count, this.#length);
    this.#length -= left;
    while (left > 0) {
      const block = this.#blocks[0]!;
      while (left > 0 && block.start < block.end) {
        block.start += LENGTH_BYTES + block.buf.readUInt32LE(block.start);
        left--;
      }
      if (block.start >= block.end) this.#recycle(this.#blocks.shift()!);
    }
  }

  #blockOf(bytes: number): Buffer {
    if (bytes > BLOCK_BYTES) return Buffer.allocUnsafeSlow(bytes);
    return this.#spare.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES);
  }

  #recycle(block: Block): void {
    if (block.buf.length === BLOCK_BYTES && this.#spare.length < SPARE_BLOCKS) this.#spare.push(block.buf);
  }
}
