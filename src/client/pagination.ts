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
