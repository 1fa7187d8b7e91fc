import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';
import { createPrompt, db, PROMPTS as P, type PromptData } from '../helpers/factories/content.js';

interface LabelMoveData {
  label: string;
  from_version: number | null;
  to_version: number;
  moved_by: string;
  moved_at: string;
}

/** What a move says, without its time. */
const moveOf = (m: LabelMoveData) => [m.label, m.from_version, m.to_version, m.moved_by];

describe("A prompt's label history over real HTTP and Postgres", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const history = (prompt: PromptData, query = '') =>
    api.request<LabelMoveData[]>(
      'GET',
      `${P}/${prompt.name}/label-history?project_id=${prompt.project_id}${query}`,
    );
  const addVersion = (prompt: PromptData, body: Record<string, unknown> = {}) =>
    api.request('POST', `${P}/${prompt.name}/versions?project_id=${prompt.project_id}`, {
      template: 'Next {{role}}',
      commit_message: 'next',
      ...body,
    });
  const assign = (prompt: PromptData, version: number, label = 'production') =>
    api.request('PATCH', `${P}/${prompt.name}/versions/${version}?project_id=${prompt.project_id}`, {
      label,
    });

  it('keeps each move of production with who moved it and when, newest first', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id, { label: 'production' });
    expect((await addVersion(prompt)).status).toBe(200);
    expect((await addVersion(prompt, { label: 'production' })).status).toBe(200);
    expect((await assign(prompt, 2)).status).toBe(200);
    // Not moves: production onto the version holding it, latest onto the newest, a version that does not exist.
    expect((await assign(prompt, 2)).status).toBe(200);
    expect((await assign(prompt, 3, 'latest')).status).toBe(200);
    expect((await assign(prompt, 9)).status).toBe(404);

    const res = await history(prompt);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: false, message: 'OK', status: 200, errorDetails: {} });
    expect(res.body.data.map(moveOf)).toEqual([
      ['production', 3, 2, 'local'],
      ['production', 1, 3, 'local'],
      ['production', null, 1, 'local'],
    ]);
    const times = res.body.data.map((m) => Date.parse(m.moved_at));
    expect(times.every((t) => Number.isFinite(t))).toBe(true);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(Object.keys(res.body.data[0]!).sort()).toEqual([
      'from_version',
      'label',
      'moved_at',
      'moved_by',
      'to_version',
    ]);

    const page = await history(prompt, '&limit=1&offset=1');
    expect(page.body.data.map(moveOf)).toEqual([['production', 1, 3, 'local']]);
  });

  it('is empty until production is assigned; paging and scope are checked like every list', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const prompt = await createPrompt(api, project.id);
    await addVersion(prompt);
    expect((await history(prompt)).body.data).toEqual([]);

    const tooMany = await history(prompt, '&limit=201');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errorDetails.fields?.[0]?.field).toBe('limit');
    const elsewhere = await api.request('GET', `${P}/${prompt.name}/label-history?project_id=${other.id}`);
    expect(elsewhere.status).toBe(404);
    const noSuch = await api.request('GET', `${P}/${uniqueName('none')}/label-history`);
    expect(noSuch.status).toBe(404);
  });

  it('goes with its prompt', async () => {
    const project = await createProject(api);
    const prompt = await createPrompt(api, project.id, { label: 'production' });
    await addVersion(prompt, { label: 'production' });
    const moves = () =>
      db(api)('prompt_label_moves').where({ prompt_id: prompt.id }).count<{ count: string }[]>();
    expect(Number((await moves())[0]!.count)).toBe(2);
    expect((await api.request('DELETE', `${P}/${prompt.name}?project_id=${project.id}`)).status).toBe(200);
    expect(Number((await moves())[0]!.count)).toBe(0);
  });

  it('names the admin token when the server takes one', async () => {
    const token = 'label-history-admin-token';
    const guarded = await startTestApi({ ADMIN_TOKEN: token });
    try {
      const auth = { authorization: `Bearer ${token}` };
      const project = (
        await guarded.request<{ id: string }>(
          'POST',
          '/api/agent-server/projects',
          {
            name: uniqueName('history'),
          },
          auth,
        )
      ).body.data;
      const name = uniqueName('guarded');
      const created = await guarded.request(
        'POST',
        `${P}?project_id=${project.id}`,
        {
          name,
          template: 'Hi',
          commit_message: 'first',
          label: 'production',
        },
        auth,
      );
      expect(created.status).toBe(200);
      const url = `${P}/${name}/label-history?project_id=${project.id}`;
      expect((await guarded.request('GET', url)).status).toBe(401);
      const res = await guarded.request<LabelMoveData[]>('GET', url, undefined, auth);
      expect(res.body.data.map(moveOf)).toEqual([['production', null, 1, 'admin token']]);
    } finally {
      await guarded.close();
    }
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = await api.request<never>('GET', '/api/agent-server/openapi.json');
    const paths = (JSON.parse(doc.text) as { paths: Record<string, Record<string, unknown>> }).paths;
    expect(Object.keys(paths[`${P}/{name}/label-history`] ?? {})).toEqual(['get']);
  });
});
