import { useMemo, useState } from 'preact/hooks';

import type { Resource } from '../api/resource-types.js';
import { DryRunPreview } from '../components/dry-run-preview.js';
import { ErrorBanner } from '../components/error-banner.js';
import { DependenciesFields } from '../forms/dependencies-fields.js';
import { describedBy, FieldNotes, FieldShell, type FormContext } from '../forms/field-shell.js';
import { fieldPointers, initialValue } from '../forms/json-schema.js';
import { LabelsField, parseLabels } from '../forms/labels-field.js';
import { SchemaFields } from '../forms/schema-fields.js';
import { placeErrors } from '../forms/server-errors.js';
import { type ModuleDocument, schemaOf, useModules } from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { navigate } from '../router.js';
import { canChange, type Whoami } from '../session.js';
import type { PageProps } from './page-props.js';

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
  const [labels, setLabels] = useState('');
  const [dependencies, setDependencies] = useState<Record<string, string>>({});
  const [configs, setConfigs] = useState<unknown>(() => initialValue(schema));
  const w = useWrite();

  const shown = useMemo(
    () =>
      new Set([
        '/kind',
        '/project',
        '/name',
        '/labels',
        '/spec/dependencies',
        ...Object.keys(module?.dependencies ?? {}).map((dep) => `/spec/dependencies/${dep}`),
        ...fieldPointers(schema, '/spec/configs', configs),
      ]),
    [module, schema, configs],
  );
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: 'create', errors: placed.fields };

  const chooseKind = (next: string) => {
    setKind(next);
    setDependencies({});
    setConfigs(initialValue(schemaOf(props.modules.find((m) => m.kind === next)?.config_schema)));
    w.clear();
  };

  const send = async (dryRun: boolean) => {
    const body = {
      kind,
      project,
      name,
      labels: parseLabels(labels),
      spec: { configs: configs ?? {}, dependencies },
    };
    const accepted = (await w.send('POST', '/resources', { body }, dryRun)) as
      { resource: Resource } | undefined;
    // The secret typed here leaves the page with it: nothing of the form is kept.
    if (accepted && !dryRun) navigate(`/resources/${encodeURIComponent(accepted.resource.urn)}`);
  };

  return (
    <section aria-labelledby="create-title">
      <h1 id="create-title">Create a resource</h1>
      <form
        noValidate
        class="schema-form"
        onSubmit={(e) => {
          e.preventDefault();
          void send(false);
        }}
      >
        <ErrorBanner error={placed.banner} />
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
        <LabelsField ctx={ctx} text={labels} onChange={setLabels} />
        {module ? (
          <DependenciesFields
            ctx={ctx}
            module={module}
            project={project}
            value={dependencies}
            onChange={setDependencies}
          />
        ) : null}
        <fieldset class="field-group">
          <legend>Configs</legend>
          <FieldNotes ctx={ctx} pointer="/spec/configs" help={undefined} />
          <SchemaFields
            ctx={ctx}
            schema={schema}
            pointer="/spec/configs"
            value={configs}
            onChange={setConfigs}
          />
        </fieldset>
        <div class="form-actions">
          <button type="button" disabled={w.busy} onClick={() => void send(true)}>
            Preview (dry run)
          </button>
          <button type="submit" disabled={w.busy}>
            Create
          </button>
        </div>
      </form>
      {w.preview ? <DryRunPreview answer={w.preview} /> : null}
    </section>
  );
}
