// Preloaded into a service process by the benchmark (node --expose-gc --import this file): on
// SIGWINCH (ignored by default; SIGUSR2 would shut the service down: close-with-grace) it runs
// V8's last-resort collection, the one that also gives back the heap pages V8 keeps for reuse,
// and prints the process's memory once done, so that the benchmark reads what the requests left
// behind rather than garbage not yet collected or pages kept for the next allocations.
process.on('SIGWINCH', () => {
  globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  process.stderr.write(`bench-gc-done ${JSON.stringify(process.memoryUsage())}\n`);
});
