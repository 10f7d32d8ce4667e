import { useMemo, useState } from 'preact/hooks';

import type { paths } from '../../../src/cli/api-types.js';
import type { Spec } from '../api/resource-types.js';
import { ErrorBanner } from '../components/error-banner.js';
import { describedBy, FieldShell, type FormContext } from '../forms/field-shell.js';
import { initialValue } from '../forms/json-schema.js';
import { placeErrors } from '../forms/server-errors.js';
import { specBody, type SpecDraft, SpecFields } from '../forms/spec-fields.js';
import {
  type ModuleDocument,
  schemaOf,
  specFieldPointers,
  useModules,
} from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { WriteForm } from '../forms/write-form.js';
import { navigate } from '../router.js';
import { canChange, type Whoami } from '../session.js';
import type { PageProps } from './page-props.js';

/** The document's create bodies: one per kind of a default deployment, each with its configs' schema. */
type CreateBody =
  paths['/api/v1beta1/resources']['post']['requestBody']['content']['application/json'];

/**
 * A create body of any kind: the console creates whatever kinds this Steward loaded
 * (read from /modules), the configs from the form generated from the kind's schema.
 */
type AnyKindCreate = Omit<CreateBody, 'kind' | 'spec'> & { kind: string; spec: Spec };

/** The projects the caller may create in, or undefined when any name is allowed (open, or `*`). */
function writableProjects(whoami: Whoami): string[] | undefined {
  if (whoami.open || (whoami.projects ?? []).includes('*')) return undefined;
  return (whoami.projects ?? []).filter((project) => canChange(whoami, project));
}

/**
 * Create a resource: kind, project, name, labels, dependencies and the configs
 * form generated from the kind's configSchema; a dry run shows the plan first.
 */
export function ResourceCreatePage({ route, whoami }: PageProps) {
  const { modules, error: modulesError } = useModules();
  const projects = writableProjects(whoami);
  if (modulesError) return <ErrorBanner title="The kinds could not be read" error={modulesError} />;
  if (!modules) return <p class="loading">Loading the kinds…</p>;
  if (projects?.length === 0)
    return (
      <section>
        <h1>Create a resource</h1>
        <p>Your role may not create resources in any project.</p>
      </section>
    );
  return (
    <CreateForm
      modules={modules}
      projects={projects}
      initialKind={route.query.get('kind') ?? modules[0]?.kind ?? ''}
      initialProject={route.query.get('project') ?? projects?.[0] ?? ''}
    />
  );
}

function CreateForm(props: {
  modules: ModuleDocument[];
  projects: string[] | undefined;
  initialKind: string;
  initialProject: string;
}) {
  const [kind, setKind] = useState(props.initialKind);
  const module = props.modules.find((m) => m.kind === kind);
  const schema = schemaOf(module?.config_schema);
  const [project, setProject] = useState(props.initialProject);
  const [name, setName] = useState('');
  const [draft, setDraft] = useState<SpecDraft>(() => ({
    labels: '',
    dependencies: {},
    configs: initialValue(schema),
  }));
  const w = useWrite();

  const shown = useMemo(
    () => new Set(['/kind', '/project', '/name', ...specFieldPointers(module, draft.configs)]),
    [module, draft.configs],
  );
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: 'create', errors: placed.fields };

  const chooseKind = (next: string) => {
    setKind(next);
    const configs = initialValue(
      schemaOf(props.modules.find((m) => m.kind === next)?.config_schema),
    );
    setDraft({ ...draft, dependencies: {}, configs });
    w.clear();
  };

  const send = async (dryRun: boolean) => {
    const body: AnyKindCreate = { kind, project, name, ...specBody(draft) };
    const init = { body: body as CreateBody };
    const accepted = (await w.send('post', '/api/v1beta1/resources', init, dryRun))?.data;
    // The secret typed here leaves the page with it: nothing of the form is kept.
    if (accepted && !dryRun) navigate(`/resources/${encodeURIComponent(accepted.resource.urn)}`);
  };

  return (
    <section aria-labelledby="create-title">
      <h1 id="create-title">Create a resource</h1>
      <WriteForm
        banner={<ErrorBanner error={placed.banner} />}
        busy={w.busy}
        submitLabel="Create"
        preview={w.preview}
        onSend={(dryRun) => void send(dryRun)}
      >
        <FieldShell ctx={ctx} pointer="/kind" label="Kind" required help={module?.description}>
          <select
            {...describedBy(ctx, '/kind', Boolean(module?.description))}
            value={kind}
            onChange={(e) => chooseKind(e.currentTarget.value)}
          >
            {props.modules.map((m) => (
              <option key={m.kind} value={m.kind}>
                {m.kind}
              </option>
            ))}
          </select>
        </FieldShell>
        <FieldShell ctx={ctx} pointer="/project" label="Project" required help={undefined}>
          {props.projects ? (
            <select
              {...describedBy(ctx, '/project', false)}
              value={project}
              onChange={(e) => setProject(e.currentTarget.value)}
            >
              {props.projects.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          ) : (
            <input
              type="text"
              {...describedBy(ctx, '/project', false)}
              required
              value={project}
              onInput={(e) => setProject(e.currentTarget.value)}
            />
          )}
        </FieldShell>
        <FieldShell ctx={ctx} pointer="/name" label="Name" required help={undefined}>
          <input
            type="text"
            {...describedBy(ctx, '/name', false)}
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </FieldShell>
        <SpecFields ctx={ctx} module={module} project={project} draft={draft} onChange={setDraft} />
      </WriteForm>
    </section>
  );
}
