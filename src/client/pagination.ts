import type { LenientPaginationMeta } from "../contract/jsonapi";

/** Camel-cased pagination as the client returns it. */
export interface Pagination {
  currentPage: number;
  previousPage: number | null;
  nextPage: number | null;
  totalPages: number;
  totalCount: number;
  pageSize: number | undefined;
}

export function toPagination(meta: LenientPaginationMeta | undefined, itemCount: number): Pagination {
  if (!meta) {
    return {
      currentPage: 1,
      previousPage: null,
      nextPage: null,
      totalPages: 1,
      totalCount: itemCount,
      pageSize: undefined,
    };
  }
  return {
    currentPage: meta["current-page"],
    previousPage: meta["prev-page"] ?? null,
    nextPage: meta["next-page"] ?? null,
    totalPages: meta["total-pages"],
    totalCount: meta["total-count"],
    pageSize: meta["page-size"],
  };
}

/**
 * Every item of a paged listing, page after page from the first: `page` reads one page. A next page that does not
 * move forward (a misbehaving proxy or server) ends the walk instead of looping forever.
 */
export async function* everyPage<T>(
  page: (pageNumber: number) => Promise<{ items: T[]; pagination: Pagination }>,
): AsyncGenerator<T> {
  for (let pageNumber: number | null = 1; pageNumber !== null; ) {
    const { items, pagination } = await page(pageNumber);
    yield* items;
    const next = pagination.nextPage;
    pageNumber = next !== null && next > pageNumber ? next : null;
  }
}

/** The object of a listing whose name is exactly `name` (a search matches names that contain it). */
export async function exactlyNamed<T extends { name: string }>(items: AsyncIterable<T>, name: string) {
  for await (const item of items) if (item.name === name) return item;
  return undefined;
}
