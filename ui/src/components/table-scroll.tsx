import type { ComponentChildren } from 'preact';

/**
 * A wide table's own horizontal scroll box, so the page never scrolls sideways on a phone. It is
 * in the tab order and named, so a keyboard user can reach it and scroll it with the arrow keys
 * (axe's scrollable-region-focusable); `label` says the same as the table's caption.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
