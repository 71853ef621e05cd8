/** The position after which a list's next page starts: the last row's (created_at, id). Encoded by api/pagination.ts. */
export type Cursor = { createdAt: string; id: string };
