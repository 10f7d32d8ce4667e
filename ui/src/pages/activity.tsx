import type { PageProps } from './page-props.js';

/** A placeholder: this page is filled in by its own change (issue 17). */
export function ActivityPage(_props: PageProps) {
  return <h1>Activity</h1>;
}
