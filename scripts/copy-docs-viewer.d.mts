/** Copies the pinned Scalar viewer into the Worker's static assets (`assets/docs/scalar.js`). */
export function copyDocsViewer(): void;
