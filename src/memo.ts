// The one way a value computed from a key is kept for the next time (a time zone's day start, a
// date's text, a clinic's cursor tag, a prepared statement): memo(max, compute). Bounded: at
// `max` keys the oldest kept goes first (a Map keeps insertion order). Oldest, not least recently
// used: the values are cheap to compute again, and moving a key to the end on every hit would
// cost the per-row paths that call these more than an occasional recomputation does.
//
// A module loaded on first use (the MCP SDK, the dashboard's pages) is kept with loadOnce(load).
//
// Caches with more to them use lru-cache instead: expiry, a bound in bytes, or an entry that a
// change elsewhere makes stale (the page cache, the search totals).

/** `compute`, remembered for up to `max` keys. `compute` must be pure: a kept value is never computed again. */
export function memo<K, V>(max: number, compute: (key: K) => V): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    const hit = kept.get(key);
    if (hit !== undefined || kept.has(key)) return hit as V;
    const value = compute(key);
    if (kept.size >= max) kept.delete(kept.keys().next().value as K);
    kept.set(key, value);
    return value;
  };
}

/**
 * `load()`, started at the first call and shared by every later one. A load that failed is not
 * kept: the next call starts it again (an import that met a passing fault is not broken for good).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () =>
    (pending ??= load().catch((err: unknown) => {
      pending = null;
      throw err;
    }));
}
