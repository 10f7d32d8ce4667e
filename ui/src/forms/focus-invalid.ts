/**
 * After a refused submit, focus goes to the first field the server named (its
 * message is read with it through aria-describedby), once the render shows it.
 */
export function focusFirstInvalid(root: ParentNode = document): void {
  requestAnimationFrame(() => {
    const invalid = root.querySelector<HTMLElement>('[aria-invalid="true"]');
    (invalid ?? root.querySelector<HTMLElement>('[role="alert"]'))?.focus?.();
  });
}
