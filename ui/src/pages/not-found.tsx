/** A route the console does not have. */
export function NotFoundPage({ path }: { path: string }) {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        The console has no page <code>{path}</code>. <a href="#/resources">Go to the resources</a>.
      </p>
    </section>
  );
}
