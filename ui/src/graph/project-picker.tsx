import { useEffect, useState } from 'preact/hooks';

import { api } from '../api/client.js';
import type { Whoami } from '../session.js';

/**
 * Picks the project to draw: the token's projects when it names them; for an
 * admin of every project or an open Steward, the projects seen on the first page
 * of GET /resources (the API has no list of projects), and any other can be typed.
 */
export function ProjectPicker({
  whoami,
  project,
  onPick,
}: {
  whoami: Whoami;
  project: string;
  onPick(project: string): void;
}) {
  const [draft, setDraft] = useState(project);
  const projects = useKnownProjects(whoami);
  useEffect(() => setDraft(project), [project]);
  return (
    <form
      class="filters"
      aria-label="Project"
      onSubmit={(event) => {
        event.preventDefault();
        onPick(draft.trim());
      }}
    >
      <div>
        <label for="graph-project">Project</label>
        <input
          id="graph-project"
          type="text"
          list="graph-projects"
          autocomplete="off"
          value={draft}
          onInput={(event) => setDraft((event.currentTarget as HTMLInputElement).value)}
        />
        <datalist id="graph-projects">
          {projects.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      </div>
      <div class="filter-actions">
        <button type="submit">Show graph</button>
      </div>
      {projects.length > 0 ? (
        <ul class="links project-links" aria-label="Projects">
          {projects.map((name) => (
            <li key={name}>
              <button
                type="button"
                class="link-button"
                aria-pressed={name === project}
                onClick={() => onPick(name)}
              >
                {name}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}

function useKnownProjects(whoami: Whoami): string[] {
  const named = (whoami.projects ?? []).filter((name) => name !== '*');
  const everywhere = whoami.open || (whoami.projects ?? []).includes('*');
  const [seen, setSeen] = useState<string[]>([]);
  useEffect(() => {
    if (!everywhere) return;
    const controller = new AbortController();
    api
      .GET('/api/v1beta1/resources', {
        params: { query: { page_size: 500 } },
        signal: controller.signal,
      })
      .then(
        ({ data }) => setSeen(data ? data.resources.map((resource) => resource.project) : []),
        () => undefined,
      );
    return () => controller.abort();
  }, [everywhere]);
  return [...new Set([...named, ...seen])].sort();
}
