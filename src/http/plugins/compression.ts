// gzip/br for clients that accept it, above 1 KB. (Dashboard pages opt out: admin/context.ts.)
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import fp from 'fastify-plugin';

export const compression = fp(
  async (app) => {
    await app.register(compress, {
      threshold: 1024,
      encodings: ['br', 'gzip', 'deflate'],
      // Pages are tens of KB: a 256 KB brotli window (default 4 MB) compresses them as well and
      // keeps each in-flight stream's native memory small, which bounds RSS under concurrency.
      brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_LGWIN]: 18 } },
      zlibOptions: { memLevel: 7 },
    });
  },
  { name: 'compression' },
);
