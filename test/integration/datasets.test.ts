import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createProject, uniqueName } from '../helpers/factories.js';

const D = '/api/agent-server/datasets';

interface DatasetData {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  row_count: number;
  created_at: string;
  updated_at: string;
}
interface RowData {
  id: string;
  dataset_id: string;
  input: unknown;
  context: Record<string, unknown> | null;
  expected_output: unknown;
}

const JSONL = { 'content-type': 'application/x-ndjson' };
const jsonLines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('Datasets API over real HTTP and Postgres', () => {
  let api: TestApi;
  beforeAll(async () => {
    // A small body cap, so the 413 is cheap to reach.
    api = await startTestApi({ MAX_BODY_BYTES: String(4 * 1024 * 1024) });
  });
  afterAll(async () => {
    await api.close();
  });

  async function createDataset(projectId: string, body: Record<string, unknown> = {}): Promise<DatasetData> {
    const res = await api.request<DatasetData>('POST', `${D}?project_id=${projectId}`, {
      name: uniqueName('dataset'),
      ...body,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  }
  const rowsOf = async (id: string, query = '') =>
    (await api.request<RowData[]>('GET', `${D}/${id}/rows${query}`)).body.data;

  it('creates a dataset with rows of every shape and reads them back in order', async () => {
    const project = await createProject(api);
    const parts = [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
    ];
    const created = await createDataset(project.id, {
      description: 'refund questions',
      rows: [
        {
          input: 'Can I get a refund?',
          context: { customer: 'Ada' },
          expected_output: 'Yes, within 30 days.',
        },
        { input: parts, expected_output: { label: 'cat', confidence: 0.9 } },
        { input: 'No expectation' },
      ],
    });
    expect(created).toMatchObject({ project_id: project.id, description: 'refund questions', row_count: 3 });

    const got = await api.request<DatasetData>('GET', `${D}/${created.id}`);
    expect(got.body.data).toEqual(created);
    const rows = await rowsOf(created.id);
    expect(rows).toEqual([
      expect.objectContaining({
        dataset_id: created.id,
        input: 'Can I get a refund?',
        context: { customer: 'Ada' },
        expected_output: 'Yes, within 30 days.',
      }),
      expect.objectContaining({
        input: parts,
        context: null,
        expected_output: { label: 'cat', confidence: 0.9 },
      }),
      expect.objectContaining({ input: 'No expectation', context: null, expected_output: null }),
    ]);
  });

  it('refuses a bad row of a JSON body naming it, and writes nothing', async () => {
    const project = await createProject(api);
    const name = uniqueName('dataset');
    const res = await api.request('POST', `${D}?project_id=${project.id}`, {
      name,
      rows: [{ input: 'fine' }, { context: { a: 1 } }, { input: [{ type: 'video', url: 'x' }] }],
    });
    expect(res.status).toBe(400);
    const fields = res.body.errorDetails.fields!.map((f) => f.field);
    expect(fields).toContain('rows.1.input');
    expect(fields.some((f) => f.startsWith('rows.2.input'))).toBe(true);
    const list = await api.request<DatasetData[]>('GET', `${D}?project_id=${project.id}`);
    expect(list.body.data).toEqual([]);
  });

  it('uploads JSON lines: rows appended in order; a bad line is a 400 naming its number and field, nothing written', async () => {
    const project = await createProject(api);
    const dataset = await createDataset(project.id, { rows: [{ input: 'first' }] });

    const good = await api.request<{ added: number; row_count: number }>(
      'POST',
      `${D}/${dataset.id}/rows`,
      jsonLines([
        { input: 'second', expected_output: '2' },
        { input: 'third', context: { n: 3 } },
      ]) + '\n',
      JSONL,
    );
    expect(good.status, good.text).toBe(200);
    expect(good.body.data).toMatchObject({ dataset_id: dataset.id, added: 2, row_count: 3 });

    // Line 3 lacks input, line 4 is not JSON: both named; the good lines 1, 2 and 5 are not written either.
    const body = [
      JSON.stringify({ input: 'fourth' }),
      JSON.stringify({ input: 'fifth' }),
      JSON.stringify({ expected_output: 'no input' }),
      '{"input": "broken",',
      JSON.stringify({ input: 'sixth' }),
    ].join('\r\n');
    const bad = await api.request('POST', `${D}/${dataset.id}/rows`, body, {
      'content-type': 'application/jsonl',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errorDetails.fields).toEqual([
      expect.objectContaining({ field: 'line 3.input', message: 'line 3: input is required' }),
      expect.objectContaining({ field: 'line 4', message: 'line 4 is not valid JSON' }),
    ]);
    // So is text Postgres cannot store (a NUL), and an unknown field of a row.
    const nul = await api.request('POST', `${D}/${dataset.id}/rows`, '{"input": "a\\u0000b"}\n', JSONL);
    expect(nul.status).toBe(400);
    expect(nul.body.errorDetails.fields).toEqual([expect.objectContaining({ field: 'line 1.input' })]);
    const unknown = await api.request(
      'POST',
      `${D}/${dataset.id}/rows`,
      jsonLines([{ input: 'x', extra: 1 }]),
      JSONL,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.errorDetails.fields).toEqual([expect.objectContaining({ field: 'line 1.extra' })]);

    expect((await rowsOf(dataset.id)).map((r) => r.input)).toEqual(['first', 'second', 'third']);
    expect((await api.request<DatasetData>('GET', `${D}/${dataset.id}`)).body.data.row_count).toBe(3);

    // A JSON body adds rows as well; other content types are refused.
    const json = await api.request<{ added: number }>('POST', `${D}/${dataset.id}/rows`, {
      rows: [{ input: 'by json' }],
    });
    expect(json.body.data).toMatchObject({ added: 1, row_count: 4 });
    const csv = await api.request('POST', `${D}/${dataset.id}/rows`, 'input\nhello\n', {
      'content-type': 'text/csv',
    });
    expect(csv.status).toBe(415);
  });

  it('bounds rows per upload, the size of a row and the size of the body', async () => {
    const project = await createProject(api);
    const dataset = await createDataset(project.id);
    const many = jsonLines(Array.from({ length: 10_001 }, (_, i) => ({ input: `q${i}` })));
    const tooMany = await api.request('POST', `${D}/${dataset.id}/rows`, many, JSONL);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errorDetails.fields).toEqual([
      expect.objectContaining({
        field: 'rows',
        message: expect.stringContaining('at most 10000 rows') as string,
      }),
    ]);
    const tooManyJson = await api.request('POST', `${D}/${dataset.id}/rows`, {
      rows: Array.from({ length: 10_001 }, (_, i) => ({ input: `q${i}` })),
    });
    expect(tooManyJson.status).toBe(400);
    expect(tooManyJson.body.errorDetails.fields).toEqual([expect.objectContaining({ field: 'rows' })]);

    const big = 'x'.repeat(1024 * 1024);
    const bigRow = await api.request(
      'POST',
      `${D}/${dataset.id}/rows`,
      jsonLines([{ input: 'q', expected_output: big }]),
      JSONL,
    );
    expect(bigRow.status).toBe(400);
    expect(bigRow.body.errorDetails.fields).toEqual([
      expect.objectContaining({
        field: 'line 1',
        message: expect.stringContaining('at most 1048576 bytes') as string,
      }),
    ]);

    const huge = jsonLines(Array.from({ length: 5 }, () => ({ input: 'x'.repeat(1000 * 1000) })));
    const tooLarge = await api.request('POST', `${D}/${dataset.id}/rows`, huge, JSONL);
    expect(tooLarge.status).toBe(413);
    expect((await api.request<DatasetData>('GET', `${D}/${dataset.id}`)).body.data.row_count).toBe(0);
  });

  it('lists newest first with paging, pages rows, renames, deletes a row and the dataset with its rows', async () => {
    const project = await createProject(api);
    const a = await createDataset(project.id);
    const b = await createDataset(project.id, {
      rows: Array.from({ length: 5 }, (_, i) => ({ input: `q${i}` })),
    });
    const list = await api.request<DatasetData[]>('GET', `${D}?project_id=${project.id}`);
    expect(list.body.data.map((d) => [d.id, d.row_count])).toEqual([
      [b.id, 5],
      [a.id, 0],
    ]);
    const second = await api.request<DatasetData[]>('GET', `${D}?project_id=${project.id}&limit=1&offset=1`);
    expect(second.body.data.map((d) => d.id)).toEqual([a.id]);
    expect((await api.request('GET', `${D}?project_id=${project.id}&limit=201`)).status).toBe(400);

    expect((await rowsOf(b.id, '?limit=2&offset=2')).map((r) => r.input)).toEqual(['q2', 'q3']);

    const renamed = await api.request<DatasetData>('PATCH', `${D}/${b.id}`, {
      name: 'renamed',
      description: 'd',
    });
    expect(renamed.body.data).toMatchObject({ id: b.id, name: 'renamed', description: 'd', row_count: 5 });
    expect((await api.request('PATCH', `${D}/${b.id}`, { rows: [] })).status).toBe(400);

    const [first] = await rowsOf(b.id, '?limit=1');
    expect((await api.request('DELETE', `${D}/${b.id}/rows/${first!.id}`)).status).toBe(200);
    expect((await api.request('DELETE', `${D}/${b.id}/rows/${first!.id}`)).status).toBe(404);
    // A row of another dataset is not this one's.
    const other = await createDataset(project.id, { rows: [{ input: 'other' }] });
    const [otherRow] = await rowsOf(other.id);
    expect((await api.request('DELETE', `${D}/${b.id}/rows/${otherRow!.id}`)).status).toBe(404);
    expect((await api.request<DatasetData>('GET', `${D}/${b.id}`)).body.data.row_count).toBe(4);

    expect((await api.request('DELETE', `${D}/${b.id}`)).status).toBe(200);
    expect((await api.request('GET', `${D}/${b.id}`)).status).toBe(404);
    expect((await api.request('GET', `${D}/${b.id}/rows`)).status).toBe(404);
    const left = await api.server.deps
      .db('dataset_rows')
      .where({ dataset_id: b.id })
      .count({ n: '*' })
      .first();
    expect(Number(left?.n)).toBe(0);
  });

  it("keeps each project's datasets to itself: another project's dataset is a 404", async () => {
    const mine = await createProject(api);
    const theirs = await createProject(api);
    const dataset = await createDataset(theirs.id, { rows: [{ input: 'secret' }] });
    const [row] = await rowsOf(dataset.id);
    const asMine = `?project_id=${mine.id}`;
    expect((await api.request('GET', `${D}/${dataset.id}${asMine}`)).status).toBe(404);
    expect((await api.request('GET', `${D}/${dataset.id}/rows${asMine}`)).status).toBe(404);
    expect((await api.request('PATCH', `${D}/${dataset.id}${asMine}`, { name: 'mine now' })).status).toBe(
      404,
    );
    expect(
      (await api.request('POST', `${D}/${dataset.id}/rows${asMine}`, { rows: [{ input: 'sneaked in' }] }))
        .status,
    ).toBe(404);
    expect((await api.request('DELETE', `${D}/${dataset.id}/rows/${row!.id}${asMine}`)).status).toBe(404);
    expect((await api.request('DELETE', `${D}/${dataset.id}${asMine}`)).status).toBe(404);
    expect((await api.request<DatasetData[]>('GET', `${D}?project_id=${mine.id}`)).body.data).toEqual([]);
    expect((await api.request<DatasetData>('GET', `${D}/${dataset.id}`)).body.data.row_count).toBe(1);
    expect((await api.request('GET', `${D}/${randomUUID()}`)).status).toBe(404);
    expect((await api.request('GET', `${D}?project_id=${randomUUID()}`)).status).toBe(404);
  });

  it('names are unique per project (409), and free in another project', async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const name = uniqueName('dataset');
    await createDataset(project.id, { name });
    const again = await api.request('POST', `${D}?project_id=${project.id}`, {
      name,
      rows: [{ input: 'x' }],
    });
    expect(again.status).toBe(409);
    expect(again.body.errorDetails).toMatchObject({ field: 'name' });
    await createDataset(other.id, { name });
    const second = await createDataset(project.id);
    expect((await api.request('PATCH', `${D}/${second.id}`, { name })).status).toBe(409);
  });

  it('keeps its project from being deleted until it is deleted itself', async () => {
    const project = await createProject(api);
    const dataset = await createDataset(project.id, { rows: [{ input: 'x' }] });
    const refused = await api.request('DELETE', `/api/agent-server/projects/${project.id}`);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(dataset.id);
    expect((await api.request('DELETE', `${D}/${dataset.id}`)).status).toBe(200);
    expect((await api.request('DELETE', `/api/agent-server/projects/${project.id}`)).status).toBe(200);
  });
});
