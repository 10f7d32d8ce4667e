import type { PageProps } from './page-props.js';

/** A placeholder: this page is filled in by its own change (issue 17). */
export function ResourceCreatePage(_props: PageProps) {
  return <h1>Create a resource</h1>;
}
