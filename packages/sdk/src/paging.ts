// Auto-paging over a list: `limit` records a request (500, the API's largest page, unless the
// caller says otherwise) with `offset` moving on, until the page that ends at `total` (so 100,000
// records are 200 requests, not one more to find an empty page). The default date windows of citas
// and llamadas move with the clinic's midnight: the first page's window is written into the next
// requests, so a walk that crosses midnight stays in one window.

export interface ListPage {
  total: number;
  limit: number;
  offset: number;
}

export type PageQuery = { limit?: number | undefined; offset?: number | undefined };

export const PAGING_LIMIT = 500;

/**
 * The pages of a list from `query.offset` (default 0), each loaded by `load`. `pin` returns the
 * query for the pages after the first (the first page's window written in).
 */
export async function* pagesOf<Q extends PageQuery, P extends ListPage>(
  query: Q,
  load: (query: Q) => Promise<P>,
  count: (page: P) => number,
  pin: (first: P, query: Q) => Q = (_first, q) => q,
): AsyncGenerator<P, void, undefined> {
  const limit = query.limit ?? PAGING_LIMIT;
  let q: Q = { ...query, limit, offset: query.offset ?? 0 };
  for (let first = true; ; first = false) {
    const page = await load(q);
    yield page;
    const n = count(page);
    const next = q.offset! + n;
    if (n < limit || n === 0 || next >= page.total) return;
    q = { ...(first ? pin(page, q) : q), offset: next };
  }
}

/** Each record of each page, in the list's order. */
export async function* recordsOf<P, R>(pages: AsyncIterable<P>, records: (page: P) => readonly R[]): AsyncGenerator<R, void, undefined> {
  for await (const page of pages) yield* records(page);
}
